/**
 * The metric values table (services/metrics/metric-values.ts): which paths a schema gets, the rows every
 * write path leaves (backfill of older results, single and batch uploads, SQL inserts and
 * updates, claims, deletions), and GET /results:compare answering from it exactly as from the
 * documents, over generated data with missing, non-numeric, string, null, huge and tiny values.
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, upload, type Seeder, type SeededResult } from './support/seed.ts';
import { prng } from './support/hardening.ts';
import { compareResults, plainValues, tableAggregates, type CompareParams } from '../src/services/compare/compare.ts';
import { chooseMetricPaths, MAX_METRIC_PATHS, MetricValues, metricValuePaths } from '../src/services/metrics/metric-values.ts';
import { withOwnConnection } from '../src/db/own-connection.ts';

let t: TestServer;
let seed: Seeder;
let admin: string;
let alice: string;
let benchmarkId: string;
const flavors: { id: string; site_id: string }[] = [];

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer' } } } } },
    runs: { type: 'array', items: { type: 'number' } },
    result: { $ref: '#/$defs/result' },
  },
  $defs: {
    result: {
      type: 'object',
      properties: {
        score: { type: ['number', 'string'], suggestToUser: true },
        time: { allOf: [{ type: ['number', 'null'] }], 'x-better': 'lower' },
        label: { type: 'string' },
      },
    },
  },
};

/** A value for `result.score`: numbers of every kind, and what is not a number. */
const SCORES: unknown[] = [
  1,
  2.5,
  -3,
  0,
  0.1,
  0.30000000000000004,
  1e155,
  -1e155,
  1.7e308,
  -1.7e308,
  5e-324,
  1e-200,
  123456789.123,
  42,
  '12',
  '1e3',
  null,
  true,
  { v: 1 },
  [1],
  undefined,
];

const fork = () => t.server.context.orm.em.fork();
const rowsOf = (resultId: string) =>
  seed.sql<{ path: string[]; value: string | null; hidden: boolean }>(
    'select p.path, v.value::text as value, v.hidden from metric_value v join metric_path p on p.id = v.path_id where v.result_id = ? order by p.path',
    [resultId],
  );

async function reconcile(): Promise<void> {
  await t.server.context.metrics.values.reconcile(fork());
  await t.server.context.metrics.values.idle();
}

test.before(async () => {
  t = await startTestServer({}, 'metric_values');
  seed = await createSeeder(t);
  [admin, alice] = await Promise.all([t.admin(), t.user('alice')]);
  benchmarkId = (await seed.benchmark({ schema: SCHEMA })).id;
  for (const name of ['North', 'South', 'East']) {
    const site = await seed.site({ name });
    for (const f of ['small', 'large']) {
      const flavor = await seed.flavor(site.id, { name: `${name}-${f}` });
      flavors.push({ id: flavor.id, site_id: flavor.site_id });
    }
  }
  // Stored before the benchmark's paths are chosen: the backfill writes their rows.
  const rng = prng(20261126);
  const rows: SeededResult[] = [];
  for (let i = 0; i < 600; i++) {
    const flavor = rng.pick(flavors);
    const score = rng.chance(0.7) ? rng.next() * 1000 - 100 : rng.pick(SCORES);
    const result: Record<string, unknown> = { label: 'x' };
    if (score !== undefined) result.score = score;
    if (rng.chance(0.8)) result.time = rng.chance(0.9) ? rng.int(500) / 7 : null;
    rows.push({
      benchmark_id: benchmarkId,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { name: 'n', machine: { cpu: { count: 1 + rng.int(16) } }, runs: [1, 2], result },
      execution_datetime: new Date(Date.UTC(2024, rng.int(12), 1 + rng.int(28))),
      hidden: rng.chance(0.05),
    });
  }
  const ids = await seed.results(rows);
  // Beyond the largest double (excluded), below half the smallest one (0): only outside the API.
  await seed.sql(`update result set json = jsonb_set(json, '{result,score}', '-1e400'::jsonb) where id = any(?::uuid[])`, [
    ids.slice(0, 3),
  ]);
  await seed.sql(`update result set json = jsonb_set(json, '{result,score}', '1e-400'::jsonb) where id = any(?::uuid[])`, [
    ids.slice(3, 6),
  ]);
  await reconcile();
});
test.after(async () => {
  await t.close();
});

test('metricValuePaths: numeric leaves through $ref and allOf, headline paths first, no array elements', () => {
  assert.equal(metricValuePaths(SCHEMA), [
    ['result', 'score'],
    ['result', 'time'],
    ['machine', 'cpu', 'count'],
  ]);
  const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`m${i}`, { type: 'number' }])) };
  assert.is(metricValuePaths(wide).length, MAX_METRIC_PATHS);
  assert.equal(metricValuePaths({}), []);
  assert.equal(metricValuePaths(true), []);
});

/** Rows that are missing, extra, duplicated or differ from their result's document (0 when the table is right). */
async function wrongRows(): Promise<number> {
  const [wrong] = await seed.sql<{ n: number }>(
    `select count(*)::int as n from (
       select r.id, p.id as path_id, r.hidden, r.flavor_id, r.site_id, r.execution_datetime,
              case when jsonb_typeof(r.json #> p.path) = 'number' then (r.json #> p.path)::numeric end as value
       from result r join metric_path p on p.benchmark_id = r.benchmark_id
       where r.benchmark_id in (select benchmark_id from metric_benchmark where complete)
     ) w full join metric_value v on v.result_id = w.id and v.path_id = w.path_id
     where w.id is null or v.result_id is null or v.hidden <> w.hidden or v.flavor_id <> w.flavor_id or v.site_id <> w.site_id
        or v.execution_datetime <> w.execution_datetime or v.value is distinct from w.value`,
  );
  const [duplicated] = await seed.sql<{ n: number }>(
    'select count(*)::int as n from (select 1 from metric_value group by result_id, path_id having count(*) > 1) d',
  );
  return wrong!.n + duplicated!.n;
}

test('backfill: every stored result gets one row per path, its number exactly as stored or null', async () => {
  const [state] = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [benchmarkId]);
  assert.is(state?.complete, true);
  const [counts] = await seed.sql<{ results: number; rows: number; numbers: number; wanted: number }>(
    `select (select count(*)::int from result where benchmark_id = ?) as results,
            (select count(*)::int from metric_value v join metric_path p on p.id = v.path_id where p.benchmark_id = ? and p.path = '{result,score}') as rows,
            (select count(v.value)::int from metric_value v join metric_path p on p.id = v.path_id where p.benchmark_id = ? and p.path = '{result,score}') as numbers,
            (select count(*)::int from result where benchmark_id = ? and jsonb_typeof(json #> '{result,score}') = 'number') as wanted`,
    [benchmarkId, benchmarkId, benchmarkId, benchmarkId],
  );
  assert.is(counts!.rows, counts!.results);
  assert.is(counts!.numbers, counts!.wanted);
  assert.ok(counts!.wanted < counts!.results, 'some results have no number there');
  assert.is(await wrongRows(), 0);
  const [extremes] = await seed.sql<{ values: string[] }>(
    `select array_agg(distinct v.value::text) as values from metric_value v join metric_path p on p.id = v.path_id
     where p.benchmark_id = ? and p.path = '{result,score}' and (v.value < -1e308 or (v.value > 0 and v.value < 1e-300))`,
    [benchmarkId],
  );
  assert.ok(
    extremes!.values.some((v) => v.startsWith('-1') && v.length > 400),
    'the -1e400 is kept exactly',
  );
  assert.ok(
    extremes!.values.some((v) => v.startsWith('0.000')),
    'the 1e-400 is kept exactly',
  );
});

test('every write path: single and batch uploads, SQL, claims, deletions and updates keep the rows in step', async () => {
  const single = await upload(t, alice, { benchmark_id: benchmarkId, flavor_id: flavors[0]!.id }, { result: { score: 7.25, time: 3 } });
  assert.is(single.status, 201, single.text);
  assert.equal(await rowsOf(single.body.id), [
    { path: ['machine', 'cpu', 'count'], value: null, hidden: false },
    { path: ['result', 'score'], value: '7.25', hidden: false },
    { path: ['result', 'time'], value: '3', hidden: false },
  ]);
  const item = (score: unknown) => ({
    benchmark_id: benchmarkId,
    flavor_id: flavors[1]!.id,
    execution_datetime: '2024-06-01T00:00:00Z',
    json: { result: { score } },
  });
  const batch = await t.request('POST', '/results:batch', { token: alice, body: { items: [item(1e155), item('9'), item(-0.5)] } });
  assert.is(batch.status, 201, batch.text);
  const [a, b, c] = batch.body.ids as string[];
  assert.equal(
    (await rowsOf(a!)).map((r) => r.value),
    [null, `1${'0'.repeat(155)}`, null],
  );
  assert.equal(
    (await rowsOf(b!)).map((r) => r.value),
    [null, null, null],
    'a string is not a number',
  );
  assert.equal(
    (await rowsOf(c!)).map((r) => r.value),
    [null, '-0.5', null],
  );

  const claim = await t.request('POST', `/results/${c}:claim`, { token: admin, body: { message: 'mine' } });
  assert.is(claim.status, 201, claim.text);
  assert.ok((await rowsOf(c!)).every((r) => r.hidden));
  assert.is((await t.request('DELETE', `/reports/claims/${claim.body.id}`, { token: admin })).status, 204);
  assert.ok(
    (await rowsOf(c!)).every((r) => !r.hidden),
    'visible again once the claim is gone',
  );
  assert.is((await t.request('DELETE', `/results/${a}`, { token: admin })).status, 204);
  assert.ok(
    (await rowsOf(a!)).every((r) => r.hidden),
    'deleted: hidden with its result',
  );

  await seed.sql(`update result set json = '{"result": {"time": 8}}'::jsonb, flavor_id = ?, site_id = ? where id = ?`, [
    flavors[2]!.id,
    flavors[2]!.site_id,
    single.body.id,
  ]);
  assert.equal(
    (await rowsOf(single.body.id)).map((r) => [r.path.join('.'), r.value]),
    [
      ['machine.cpu.count', null],
      ['result.score', null],
      ['result.time', '8'],
    ],
  );
  const [moved] = await seed.sql<{ n: number }>('select count(*)::int as n from metric_value where result_id = ? and flavor_id <> ?', [
    single.body.id,
    flavors[2]!.id,
  ]);
  assert.is(moved!.n, 0);
  assert.is(await wrongRows(), 0);
  // An update that changes nothing the rows hold leaves them as they are; one of `hidden` updates
  // that column of the result's rows only.
  const versions = () =>
    seed.sql<{ xmin: string }>('select xmin::text from metric_value where result_id = ? order by path_id', [single.body.id]);
  const before = await versions();
  await seed.sql('update result set deleted = deleted, upload_datetime = upload_datetime where id = ?', [single.body.id]);
  assert.equal(await versions(), before);
  await seed.sql('update result set hidden = true where id = ?', [single.body.id]);
  assert.ok((await rowsOf(single.body.id)).every((r) => r.hidden));
  assert.not.equal(await versions(), before);
  await seed.sql('update result set hidden = false where id = ?', [single.body.id]);
  await seed.sql('delete from result where id = ?', [single.body.id]);
  assert.equal(await rowsOf(single.body.id), []);
  assert.is(await wrongRows(), 0);
});

/**
 * The queries compared: both groupings, each filter the table answers, and some it does not; on
 * `result.score`, which holds values beyond a double and values that round to zero (the table's
 * values go through the documents' conversions), and on `result.time`, which holds none (the
 * table's statement reads the values as stored, in the order of metric_value_group_idx).
 */
function queries(): CompareParams[] {
  const out: CompareParams[] = [];
  for (const [metric, group_by] of [
    ['json.result.score', 'flavor'],
    ['json.result.score', 'site'],
    ['json.result.time', 'flavor'],
    ['json.result.time', 'site'],
  ] as const) {
    const base = { benchmark_id: benchmarkId, metric } as CompareParams;
    for (const extra of [
      {},
      { site_id: flavors[2]!.site_id },
      { flavor_id: flavors[3]!.id },
      { execution_after: '2024-03-01T00:00:00Z' },
      { execution_before: '2024-09-01T00:00:00Z', execution_after: '2024-02-10T00:00:00Z' },
      { confidence: 0.5, min_samples: 1 },
      { better: 'lower' as const, confidence: 0.999 },
      { filters: ['machine.cpu.count >= 8'] },
    ]) {
      out.push({ ...base, group_by, ...extra });
    }
  }
  const base = { benchmark_id: benchmarkId, metric: 'json.result.score' } as CompareParams;
  out.push({ ...base, metric: 'json.machine.cpu.count', group_by: 'site' }, { ...base, metric: 'json.machine.cpu.count' });
  out.push({ ...base, metric: 'json.name' }, { ...base, metric: 'json.runs.0' });
  return out;
}

test('GET /results:compare: the same answer from the table as from the documents, field by field', async () => {
  for (const query of queries()) {
    for (const pickWindow of [undefined, -1]) {
      const fromDocuments = await compareResults(fork(), query, { documents: true, pickWindow });
      const fromTable = await compareResults(fork(), query, { pickWindow });
      assert.equal(fromTable, fromDocuments, JSON.stringify(query));
    }
  }
  const answer = await t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.result.score' } });
  assert.is(answer.status, 200);
  assert.ok(answer.body.groups.length > 0 && answer.body.excluded > 0);
});

test('GET /results:compare from the table: values as stored unless one is extreme, groups hashed, no sort of all values', async () => {
  const pathOf = async (path: string[]) =>
    (await seed.sql<{ id: number }>('select id from metric_path where benchmark_id = ? and path = ?::text[]', [benchmarkId, path]))[0]!.id;
  const score = await pathOf(['result', 'score']);
  const time = await pathOf(['result', 'time']);
  assert.is(await plainValues(fork(), score), false, 'result.score holds -1e400 and 1e-400');
  assert.is(await plainValues(fork(), time), true);
  for (const value of ['1e-400', '-1e-400', '1e400', '-1e400']) {
    const [row] = await seed.sql<{ result_id: string; value: string | null }>(
      'select result_id, value::text from metric_value where path_id = ? and not hidden limit 1',
      [time],
    );
    await seed.sql('update metric_value set value = ?::numeric where path_id = ? and result_id = ?', [value, time, row!.result_id]);
    try {
      assert.is(await plainValues(fork(), time), false, value);
    } finally {
      await seed.sql('update metric_value set value = ?::numeric where path_id = ? and result_id = ?', [row!.value, time, row!.result_id]);
    }
  }
  assert.is(await plainValues(fork(), time), true);

  // The groups hashed, each group's values sorted on their own: no sort of all the values.
  type Plan = { 'Node Type': string; 'Parent Relationship'?: string; Strategy?: string; 'Index Name'?: string; Plans?: Plan[] };
  const nodes = (plan: Plan): Plan[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];
  for (const group_by of ['flavor', 'site'] as const) {
    for (const extra of [{}, { site_id: flavors[2]!.site_id, execution_after: '2024-03-01T00:00:00Z' }]) {
      const query = { benchmark_id: benchmarkId, metric: 'json.result.time', group_by, ...extra } as CompareParams;
      const { sql, params } = tableAggregates(query, time);
      // A small table: PostgreSQL would rather read all of it and sort; the shape is what is checked.
      const rows = await fork().transactional(async (tx) => {
        await tx.execute('set local enable_seqscan = off');
        await tx.execute('set local enable_bitmapscan = off');
        await tx.execute('set local enable_sort = off');
        return tx.execute<{ 'QUERY PLAN': [{ Plan: Plan }] }[]>(`explain (format json) ${sql}`, params);
      });
      const all = nodes(rows[0]!['QUERY PLAN'][0].Plan);
      const label = JSON.stringify(query);
      assert.ok(
        all.some((n) => n['Node Type'] === 'Index Only Scan' && n['Index Name'] === 'metric_value_path_idx'),
        label,
      );
      // Hashed; or, one site filtered and grouped by, one group (no sort either).
      const aggregate = all.find((n) => n['Node Type'] === 'Aggregate');
      assert.ok(aggregate?.Strategy === 'Hashed' || (group_by === 'site' && 'site_id' in extra), label);
      const sorts = all.filter((n) => n['Node Type'] === 'Sort');
      assert.ok(sorts.length > 0 && sorts.every((n) => n['Parent Relationship'] === 'SubPlan'), label);
    }
  }
});

test('GET /results:compare reads the table when it is complete, the documents otherwise', async () => {
  const query = { benchmark_id: benchmarkId, metric: 'json.result.score' } as CompareParams;
  const truth = (await compareResults(fork(), query, { documents: true })).answer;
  // A table that disagrees with the documents shows which one answered.
  await seed.sql(
    "update metric_value set value = value + 1 where path_id = (select id from metric_path where benchmark_id = ? and path = '{result,score}')",
    [benchmarkId],
  );
  try {
    assert.not.equal((await compareResults(fork(), query)).answer, truth, 'answered from the table');
    await seed.sql('update metric_benchmark set complete = false where benchmark_id = ?', [benchmarkId]);
    assert.equal((await compareResults(fork(), query)).answer, truth, 'incomplete: answered from the documents');
  } finally {
    await seed.sql(
      "update metric_value set value = value - 1 where path_id = (select id from metric_path where benchmark_id = ? and path = '{result,score}')",
      [benchmarkId],
    );
    await seed.sql('update metric_benchmark set complete = true where benchmark_id = ?', [benchmarkId]);
  }
});

test('backfill: resumes where it stopped, in batches, and a schema change chooses the paths again', async () => {
  // A pass stopped half-way: the rows of the blocks not reached yet are missing.
  const [{ blocks }] = (await seed.sql<{ blocks: number }>(
    "select (pg_relation_size('result') / current_setting('block_size')::int)::int as blocks",
  )) as [{ blocks: number }];
  const half = Math.floor(blocks / 2);
  await seed.sql('update metric_benchmark set complete = false where benchmark_id = ?', [benchmarkId]);
  await seed.sql('update metric_backfill set benchmarks = array[?::uuid], next_block = ?, end_block = ?', [benchmarkId, half, blocks]);
  await seed.sql(`delete from metric_value v using result r where r.id = v.result_id and r.ctid >= ?::tid`, [`(${half},0)`]);
  assert.ok((await wrongRows()) > 0);
  const values = new MetricValues(t.server.context.logger, { batchBlocks: 1 });
  await values.reconcile(fork());
  await values.close();
  assert.is(await wrongRows(), 0);
  const [state] = await seed.sql<{ complete: boolean; benchmarks: string[] }>(
    'select complete, (select benchmarks::text[] from metric_backfill) as benchmarks from metric_benchmark where benchmark_id = ?',
    [benchmarkId],
  );
  assert.equal(state, { complete: true, benchmarks: [] });

  // A new numeric path: incomplete (documents answer) until the pass has filled it in.
  await seed.sql(
    `update benchmark set json_schema = jsonb_set(json_schema, '{properties,extra}', '{"type": "number"}'::jsonb) where id = ?`,
    [benchmarkId],
  );
  await seed.sql(`update result set json = json || '{"extra": 5}'::jsonb where benchmark_id = ? and not hidden`, [benchmarkId]);
  await reconcile();
  const extra = { benchmark_id: benchmarkId, metric: 'json.extra' } as CompareParams;
  assert.equal((await compareResults(fork(), extra)).answer, (await compareResults(fork(), extra, { documents: true })).answer);
  const [paths] = await seed.sql<{ n: number; complete: boolean }>(
    "select count(*)::int as n, bool_and(m.complete) as complete from metric_path p join metric_benchmark m using (benchmark_id) where benchmark_id = ? and p.path = '{extra}'",
    [benchmarkId],
  );
  assert.equal(paths, { n: 1, complete: true });
  assert.is(await wrongRows(), 0);
});

test('a result written while its benchmark gets its paths is filled in: the pass waits for writers in flight', async () => {
  const other = await seed.benchmark({ schema: { type: 'object', properties: { w: { type: 'number' } } }, paths: false });
  const writer = new pg.Client({ connectionString: t.databaseUrl });
  await writer.connect();
  try {
    // Inserted before the paths exist: its trigger writes nothing, and it commits only after they are chosen.
    await writer.query('begin');
    const { rows } = await writer.query<{ id: string }>(
      `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub)
       values (gen_random_uuid(), $1, $2, $3, '{"w": 4.5}', now(), now(), $4, $5) returning id`,
      [other.id, flavors[0]!.site_id, flavors[0]!.id, seed.owner.uploader_iss, seed.owner.uploader_sub],
    );
    const reconciling = reconcile();
    for (let i = 0; i < 100; i++) {
      const [chosen] = await seed.sql<{ n: number }>('select count(*)::int as n from metric_path where benchmark_id = ?', [other.id]);
      if (chosen!.n > 0) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const [state] = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [other.id]);
    assert.is(state?.complete, false, 'not complete while a writer that may have missed the paths runs');
    await writer.query('commit');
    await reconciling;
    assert.equal(
      (await rowsOf(rows[0]!.id)).map((r) => r.value),
      ['4.5'],
    );
    const [after] = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [other.id]);
    assert.is(after?.complete, true);
    assert.is(await wrongRows(), 0);
    await seed.sql('delete from result where benchmark_id = ?', [other.id]);
    await seed.sql('delete from benchmark where id = ?', [other.id]);
  } finally {
    await writer.end();
  }
});

test('a writer left open holds its benchmark back for a bounded time only: incomplete, then completed later', async () => {
  const other = await seed.benchmark({ schema: { type: 'object', properties: { w: { type: 'number' } } }, paths: false });
  const writer = new pg.Client({ connectionString: t.databaseUrl });
  await writer.connect();
  try {
    await writer.query('begin');
    await writer.query('select txid_current()'); // an id assigned: a writer
    const settled = await withOwnConnection(t.databaseUrl, (run) => chooseMetricPaths(run, t.server.context.logger, () => false, 300));
    assert.is(settled, false);
    const [state] = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [other.id]);
    assert.is(state?.complete, false);
    await writer.query('commit');
    await reconcile();
    const [after] = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [other.id]);
    assert.is(after?.complete, true);
    await seed.sql('delete from benchmark where id = ?', [other.id]);
  } finally {
    await writer.end();
  }
});

test('a deleted benchmark takes its paths and its results their rows', async () => {
  const other = await seed.benchmark({ schema: { type: 'object', properties: { v: { type: 'number' } } } });
  await reconcile();
  const [id] = await seed.results([
    { benchmark_id: other.id, flavor_id: flavors[0]!.id, site_id: flavors[0]!.site_id, json: { v: 1 }, execution_datetime: new Date() },
  ]);
  assert.equal(
    (await rowsOf(id!)).map((r) => r.value),
    ['1'],
    'a new benchmark is complete at once: its results are written by the triggers',
  );
  await seed.sql('delete from result where benchmark_id = ?', [other.id]);
  await seed.sql('delete from benchmark where id = ?', [other.id]);
  const [left] = await seed.sql<{ paths: number; values: number }>(
    'select (select count(*)::int from metric_path where benchmark_id = ?) as paths, (select count(*)::int from metric_value where result_id = ?) as values',
    [other.id, id],
  );
  assert.equal(left, { paths: 0, values: 0 });
});

test('backfill: stopped mid-way and resumed while results are updated, moved, hidden, deleted and inserted: every row right', async () => {
  const other = await seed.benchmark({
    schema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'integer' }, c: { type: 'number' }, pad: { type: 'string' } },
    },
  });
  await reconcile();
  // About seven results a block: the pass over them takes many one-block batches.
  const rng = prng(27);
  const ids = await seed.results(
    Array.from({ length: 400 }, (_, i) => ({
      benchmark_id: other.id,
      flavor_id: flavors[i % flavors.length]!.id,
      site_id: flavors[i % flavors.length]!.site_id,
      json: { a: rng.next() * 100, b: rng.int(64), ...(i % 5 ? { c: i } : { c: 'none' }), pad: 'x'.repeat(900 + rng.int(200)) },
      execution_datetime: new Date(Date.UTC(2024, 0, 1 + (i % 28))),
      hidden: i % 17 === 0,
    })),
  );
  // As stored before the benchmark's paths were chosen: no rows, a pass for it that has not begun.
  const [range] = await seed.sql<{ first: number; blocks: number }>(
    `select min((ctid::text::point)[0])::int as first, (pg_relation_size('result') / current_setting('block_size')::int)::int as blocks
     from result where benchmark_id = ?`,
    [other.id],
  );
  await seed.sql('delete from metric_value where result_id = any(?::uuid[])', [ids]);
  await seed.sql('update metric_benchmark set complete = false where benchmark_id = ?', [other.id]);
  await seed.sql('update metric_backfill set benchmarks = array[?::uuid], next_block = ?, end_block = ?', [
    other.id,
    range!.first,
    range!.blocks,
  ]);

  // Writes of every kind, one statement or a few in a transaction, until told to stop.
  const writer = new pg.Client({ connectionString: t.databaseUrl });
  await writer.connect();
  let writing = true;
  let writes = 0;
  const alive = new Set(ids);
  const pick = () => [...alive][rng.int(alive.size)]!;
  const write = async () => {
    while (writing) {
      const id = pick();
      const kind = rng.int(6);
      if (kind === 0)
        await writer.query(`update result set json = jsonb_set(json, '{a}', to_jsonb($2::float8)) where id = $1`, [id, rng.next()]);
      else if (kind === 1) await writer.query('update result set hidden = not hidden where id = $1', [id]);
      else if (kind === 2)
        // Longer: the new version moves to another block, maybe one the pass has not reached yet.
        await writer.query(`update result set json = json || jsonb_build_object('pad', repeat('y', 3000), 'b', 7) where id = $1`, [id]);
      else if (kind === 3) {
        await writer.query('delete from result where id = $1', [id]);
        alive.delete(id);
      } else if (kind === 4) {
        const [row] = (
          await writer.query(
            `insert into result select (jsonb_populate_record(r, jsonb_build_object('id', gen_random_uuid(), 'json', r.json || '{"a": 0.5}'))).* from result r where r.id = $1 returning id`,
            [id],
          )
        ).rows as { id: string }[];
        alive.add(row!.id);
      } else {
        await writer.query('begin');
        await writer.query(`update result set json = json - 'c' where id = $1`, [id]);
        await writer.query('update result set hidden = true where id = $1', [id]);
        await writer.query('commit');
      }
      writes++;
      await new Promise((r) => setTimeout(r, rng.int(3)));
    }
  };
  const writing1 = write();
  try {
    const blockOf = async () => Number((await seed.sql<{ next: number }>('select next_block::int as next from metric_backfill'))[0]!.next);
    const first = new MetricValues(t.server.context.logger, { batchBlocks: 1, batchMs: 0.001 });
    const running = first.reconcile(fork());
    const until = Date.now() + 60_000;
    while ((await blockOf()) < range!.first + 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    await first.close();
    await running;
    const stoppedAt = await blockOf();
    const [pass] = await seed.sql<{ complete: boolean; benchmarks: string[] }>(
      'select complete, (select benchmarks::text[] from metric_backfill) as benchmarks from metric_benchmark where benchmark_id = ?',
      [other.id],
    );
    assert.ok(
      stoppedAt > range!.first && stoppedAt < range!.blocks,
      `stopped mid-way: block ${stoppedAt} of ${range!.first}..${range!.blocks}`,
    );
    assert.equal(pass, { complete: false, benchmarks: [other.id] }, 'the pass is recorded, not complete');

    const second = new MetricValues(t.server.context.logger, { batchBlocks: 1, batchMs: 0.001 });
    await second.reconcile(fork());
    await second.idle();
    await second.close();
    writing = false;
    await writing1;
    assert.ok(writes > 20, `writes ran during the pass: ${writes}`);
    const [after] = await seed.sql<{ complete: boolean; rows: number }>(
      'select complete, (select count(*)::int from metric_value v join metric_path p on p.id = v.path_id where p.benchmark_id = ?) as rows from metric_benchmark where benchmark_id = ?',
      [other.id, other.id],
    );
    assert.equal(after, { complete: true, rows: 3 * alive.size });
    assert.is(await wrongRows(), 0);
  } finally {
    writing = false;
    await writing1.catch(() => {});
    await writer.end();
    await seed.sql('delete from result where benchmark_id = ?', [other.id]);
    await seed.sql('delete from benchmark where id = ?', [other.id]);
  }
});

test('idle(): waits while another process holds the pass, then until the values are complete', async () => {
  const other = await seed.benchmark({ schema: { type: 'object', properties: { q: { type: 'number' } } } });
  await reconcile();
  const ids = await seed.results(
    [1, 2, 3].map((q) => ({
      benchmark_id: other.id,
      flavor_id: flavors[0]!.id,
      site_id: flavors[0]!.site_id,
      json: { q },
      execution_datetime: new Date(),
    })),
  );
  // Stored before the paths were chosen, as far as the table can tell.
  await seed.sql('delete from metric_value where result_id = any(?::uuid[])', [ids]);
  await seed.sql('update metric_benchmark set complete = false where benchmark_id = ?', [other.id]);
  const complete = async () =>
    (await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [other.id]))[0]!.complete;
  // The lock of the process running the pass (BACKFILL_LOCK in services/metrics/metric-values.ts).
  const holder = new pg.Client({ connectionString: t.databaseUrl });
  await holder.connect();
  await holder.query('select pg_advisory_lock(1650814563, 3)');
  const values = new MetricValues(t.server.context.logger, { retryMs: 50 });
  try {
    await values.reconcile(fork());
    assert.is(await complete(), false, 'left to the process holding the pass');
    let idle = false;
    const waiting = values.idle().then(() => {
      idle = true;
    });
    await new Promise((r) => setTimeout(r, 400));
    assert.not.ok(idle, 'not idle while the pass is left to be retried');
    await holder.query('select pg_advisory_unlock(1650814563, 3)');
    await waiting;
    assert.is(await complete(), true, 'idle: complete');
    assert.equal(
      (await seed.sql<{ n: number }>('select count(*)::int as n from metric_value where result_id = any(?::uuid[])', [ids]))[0]!.n,
      3,
    );
    assert.is(await wrongRows(), 0);
  } finally {
    await values.close();
    await holder.end();
    await seed.sql('delete from result where benchmark_id = ?', [other.id]);
    await seed.sql('delete from benchmark where id = ?', [other.id]);
  }
});

test.run();
