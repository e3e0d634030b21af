/**
 * GET /results:export against a real database: NDJSON lines equal GET /results/{id}, order and
 * filters as the list, several cursor batches, CSV columns (defaults, JSON paths, escaping, the
 * formula guard), errors before the first byte, the admission limit and the cursor's connection
 * closed when a client goes away.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, queryString, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { EXPORT_BATCH_ROWS } from '../src/services/export/export.ts';
import { numbered } from '../src/db/bound-driver.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
let otherBenchmarkId: string;
let flavor: { id: string; site_id: string };
let tagIds: string[];
let hiddenId: string;
const MANY = EXPORT_BATCH_ROWS * 2 + 37;

test.before(async () => {
  t = await startTestServer({ exportConcurrency: '1' }, 'export');
  seed = await createSeeder(t);
  const benchmark = await seed.benchmark({
    image: 'ghcr.io/test/export',
    tag: '2.0',
    schema: {
      type: 'object',
      properties: {
        result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true }, label: { type: 'string' } } },
      },
    },
  });
  benchmarkId = benchmark.id;
  otherBenchmarkId = (await seed.benchmark()).id;
  const site = await seed.site({ name: '=cmd|calc, "quoted"' });
  const f = await seed.flavor(site.id, { name: 'line\nbreak' });
  flavor = { id: f.id, site_id: f.site_id };
  tagIds = [(await seed.tag({ name: 'zeta' })).id, (await seed.tag({ name: 'alpha' })).id];
  const at = (i: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, MANY - i)); // inserted in reverse order
  const base = { benchmark_id: benchmarkId, flavor_id: flavor.id, site_id: flavor.site_id };
  await seed.results([
    {
      ...base,
      json: { result: { score: -5, label: '-2+3' }, extra: { a: [1, 2] } },
      execution_datetime: new Date(Date.UTC(2020, 0, 1)),
      tags: tagIds,
    },
    { ...base, json: { result: { score: 1.5, label: '@SUM(A1)' } }, execution_datetime: new Date(Date.UTC(2020, 0, 2)) },
    { ...base, json: { result: { label: 'plain' } }, execution_datetime: new Date(Date.UTC(2020, 0, 3)) },
  ]);
  hiddenId = (
    await seed.results([{ ...base, json: { result: { score: 99 } }, execution_datetime: new Date(Date.UTC(2020, 0, 4)), hidden: true }])
  )[0]!;
  await seed.results(
    Array.from({ length: MANY }, (_, i) => ({
      benchmark_id: otherBenchmarkId,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { i, pad: 'x'.repeat(i % 5 === 0 ? 100_000 : 10) }, // 20 MB: more than the sockets buffer
      execution_datetime: at(i % 400), // many share a time: id breaks the tie
    })),
  );
});
test.after(async () => {
  await t.close();
});

const exportOf = (query: Record<string, string | string[] | undefined>, headers?: Record<string, string>) =>
  fetch(`${t.api}/results:export${queryString(query)}`, { headers });

test('NDJSON: each line is the result as GET /results/{id} returns it, hidden ones left out, as an attachment', async () => {
  const res = await exportOf({ benchmark_id: benchmarkId });
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'application/x-ndjson; charset=utf-8');
  assert.is(res.headers.get('content-disposition'), 'attachment; filename="results.ndjson"');
  const text = await res.text();
  assert.ok(text.endsWith('\n'), 'the last line ends with a newline');
  const lines = text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.is(lines.length, 3);
  assert.not.ok(
    lines.some((r) => r.id === hiddenId),
    'hidden result exported',
  );
  for (const line of lines) {
    const one = await t.request('GET', `/results/${line.id}`);
    assert.equal(line, one.body);
  }
  assert.equal(
    lines.map((r) => r.json.result.label),
    ['-2+3', '@SUM(A1)', 'plain'],
  );
});

test('NDJSON: every matching result across several cursor batches, in execution_datetime then id order, as the list orders them', async () => {
  const res = await exportOf({ benchmark_id: otherBenchmarkId });
  const lines = (await res.text())
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; execution_datetime: string });
  assert.is(lines.length, MANY);
  assert.is(new Set(lines.map((r) => r.id)).size, MANY);
  for (let i = 1; i < lines.length; i++) {
    const [a, b] = [lines[i - 1]!, lines[i]!];
    assert.ok(
      a.execution_datetime < b.execution_datetime || (a.execution_datetime === b.execution_datetime && a.id < b.id),
      `order at ${i}`,
    );
  }
  // The same results, in the same order, as the list sorted by execution_datetime (ties by id).
  const first = await t.request('GET', '/results', { query: { benchmark_id: otherBenchmarkId, per_page: 100 } });
  assert.equal(
    lines.slice(0, 100).map((r) => r.id),
    first.body.items.map((r: { id: string }) => r.id),
  );
});

test('filters apply as in GET /results', async () => {
  const res = await exportOf({ benchmark_id: benchmarkId, filters: ['result.score > 0'] });
  const lines = (await res.text())
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.equal(
    lines.map((r) => r.json.result.score),
    [1.5],
  );
  const tagged = await exportOf({ tags_ids: [tagIds[0]!], execution_before: '2020-01-02T00:00:00Z' });
  assert.is((await tagged.text()).trimEnd().split('\n').length, 1);
  const none = await exportOf({ benchmark_id: benchmarkId, execution_after: '2030-01-01T00:00:00Z' });
  assert.is(none.status, 200);
  assert.is(await none.text(), '');
});

test('CSV: default columns with the suggested metrics, cells escaped, text guarded against formulas, numbers left alone', async () => {
  const res = await exportOf({ benchmark_id: benchmarkId, format: 'csv' });
  assert.is(res.status, 200);
  assert.is(res.headers.get('content-type'), 'text/csv; charset=utf-8; header=present');
  assert.is(res.headers.get('content-disposition'), 'attachment; filename="results.csv"');
  const text = await res.text();
  const lines = text.split('\r\n');
  assert.is(lines[0], 'id,execution_datetime,benchmark_name,site_name,flavor_name,tags,json.result.score');
  assert.is(lines.at(-1), '', 'ends with CRLF');
  const first = await t.request('GET', '/results', { query: { benchmark_id: benchmarkId, per_page: 1 } });
  const id = first.body.items[0].id as string;
  assert.is(lines[1], `${id},2020-01-01T00:00:00.000,ghcr.io/test/export:2.0,"'=cmd|calc, ""quoted""","line\nbreak",alpha;zeta,-5`);
  assert.ok(lines[3]!.endsWith(',,'), `a missing value is an empty cell: ${lines[3]}`);
});

test('CSV: columns chosen and ordered by the caller; JSON strings guarded, objects as JSON text', async () => {
  const res = await exportOf({
    benchmark_id: benchmarkId,
    format: 'csv',
    columns: ['json.result.label', 'json.extra', 'upload_datetime', 'json.result.score', 'json.result.missing'],
  });
  const lines = (await res.text()).split('\r\n');
  assert.is(lines[0], 'json.result.label,json.extra,upload_datetime,json.result.score,json.result.missing');
  const cells = lines[1]!.split(',');
  assert.is(cells[0], "'-2+3");
  assert.is(lines[1]!.split(',"')[1]!.split('",')[0], '{""a"": [1, 2]}');
  assert.match(lines[1]!, /,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3},-5,$/);
  assert.is(lines[2], `'@SUM(A1),,${lines[2]!.split(',')[2]},1.5,`);
});

test('Accept: text/csv chooses CSV; format wins over Accept', async () => {
  const csv = await exportOf({ benchmark_id: benchmarkId }, { accept: 'text/csv' });
  assert.match(csv.headers.get('content-type')!, /^text\/csv/);
  assert.match(csv.headers.get('vary') ?? '', /Accept/);
  await csv.text();
  const ndjson = await exportOf({ benchmark_id: benchmarkId, format: 'ndjson' }, { accept: 'text/csv' });
  assert.match(ndjson.headers.get('content-type')!, /^application\/x-ndjson/);
  await ndjson.text();
});

test('errors found before the first byte are problem+json: a bad column, a bad filter, an unknown benchmark', async () => {
  const column = await t.request('GET', '/results:export', { query: { format: 'csv', columns: ['id', 'password'] } });
  assertProblem(column, 422, 'INVALID_COLUMN');
  assert.match(column.body.detail, "columns[1] 'password'");
  const filter = await t.request('GET', '/results:export', { query: { filters: ['result.score >> 3'] } });
  assert.is(filter.status, 422);
  const unknown = await t.request('GET', '/results:export', { query: { benchmark_id: '00000000-0000-4000-8000-000000000000' } });
  assertProblem(unknown, 404, 'NOT_FOUND');
  const format = await t.request('GET', '/results:export', { query: { format: 'xml' } });
  assert.is(format.status, 422);
});

test('CSV columns: each at most once (100 copies of one column multiplied the answer by 100: 422 naming it), 100 at most', async () => {
  const copies = await t.request('GET', '/results:export', { query: { format: 'csv', columns: Array(100).fill('json.machine') } });
  assertProblem(copies, 422, 'INVALID_QUERY');
  const message = 'must not repeat a value: "json.machine" is given twice (items 0 and 1)';
  assert.equal(copies.body.errors, [{ in: 'query', path: 'columns', message }]);
  assert.is(copies.body.detail, `The query parameters are invalid: columns ${message}.`);
  const later = await t.request('GET', '/results:export', { query: { format: 'csv', columns: ['id', 'json.a', 'flavor_name', 'json.a'] } });
  assert.equal(later.body.errors, [
    { in: 'query', path: 'columns', message: 'must not repeat a value: "json.a" is given twice (items 1 and 3)' },
  ]);
  const many = await t.request('GET', '/results:export', {
    query: { format: 'csv', columns: Array.from({ length: 101 }, (_, i) => `json.c${i}`) },
  });
  assertProblem(many, 422, 'INVALID_QUERY');
  assert.equal(many.body.errors, [{ in: 'query', path: 'columns', message: 'must NOT have more than 100 items' }]);
  const hundred = await exportOf({
    benchmark_id: benchmarkId,
    format: 'csv',
    columns: Array.from({ length: 100 }, (_, i) => `json.c${i}`),
  });
  assert.is(hundred.status, 200);
  assert.is((await hundred.text()).split('\r\n')[0]!.split(',').length, 100);
});

const exportConnections = async () =>
  Number(
    // This file's database only: other test files' servers may be exporting on the same cluster.
    (
      await seed.sql<{ n: number }>(
        "select count(*)::int as n from pg_stat_activity where application_name = 'benchmarks-server export' and datname = current_database()",
      )
    )[0]!.n,
  );

test('one export at a time here (EXPORT_CONCURRENCY=1): the next ones wait their turn, four at most, beyond them 503 EXPORT_BUSY; a client going away frees its place and its connection', async () => {
  // A reader that reads nothing: the export stops at the socket's back-pressure, holding its place.
  const controller = new AbortController();
  const slow = await fetch(`${t.api}/results:export?benchmark_id=${otherBenchmarkId}`, { signal: controller.signal });
  assert.is(slow.status, 200);
  assert.is(await exportConnections(), 1);
  // Four wait for the place (the line holds 4 × EXPORT_CONCURRENCY)...
  const waiting = Array.from({ length: 4 }, () =>
    exportOf({ benchmark_id: benchmarkId }).then(async (res) => [res.status, (await res.text()).length] as const),
  );
  // (seen waiting, however long the machine takes to get them there)...
  const queued = Date.now() + 60_000;
  while (t.server.context.runtime.exports.waiting < 4 && Date.now() < queued) await new Promise((r) => setTimeout(r, 20));
  assert.is(t.server.context.runtime.exports.waiting, 4, 'four exports wait for the place');
  // ...and one more is refused at once.
  const busy = await t.request('GET', '/results:export', { query: { benchmark_id: benchmarkId } });
  assertProblem(busy, 503, 'EXPORT_BUSY');
  assert.is(busy.headers.get('retry-after'), '5');
  controller.abort();
  // The place passes down the line: every waiting export completes.
  for (const [status, length] of await Promise.all(waiting)) {
    assert.is(status, 200);
    assert.ok(length > 0);
  }
  const deadline = Date.now() + 60_000;
  let left = await exportConnections();
  while (left > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = await exportConnections();
  }
  assert.is(left, 0, 'the cursor connections were closed');
});

test('numbered: the seam numbers placeholders for a plain client, keeps escaped question marks and array casts', () => {
  assert.equal(numbered("select ? as a, r.json #> ?::text[] as b, 'x\\?' as c", [1, ['p', 'q']]), {
    text: "select $1 as a, r.json #> $2::text[] as b, 'x?' as c",
    values: [1, ['p', 'q']],
  });
  assert.throws(() => numbered('select ? in (?)', [1, [2, 3]]), /array cast/);
  assert.throws(() => numbered('select ??', ['t']), /identifiers/);
});

test.run();
