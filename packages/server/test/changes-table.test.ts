/**
 * GET /results:changes from the table of metric values (services/metrics/metric-values.ts): the same
 * answer as from the documents, field by field and sketch by sketch, over series with steps, ties in
 * execution time, hidden results, missing, non-numeric and extreme values (beyond a double, rounding to
 * zero); the documents answer what the table cannot (JSON filters, tags, upload times, an incomplete
 * benchmark). And the change points remembered per series: after a write, only the series it changed
 * are segmented again, with the answer a fresh computation gives.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, upload, type Seeder, type SeededResult } from './support/seed.ts';
import { prng } from './support/hardening.ts';
import { findChanges, readSeries, type ChangesParams } from '../src/services/changes/changes.ts';
import { ChangesSegmenter } from '../src/services/changes/changes-segmenter.ts';
import { encodePoints, sortPoints } from '../src/services/changes/changes-series.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let benchmarkId: string;
let tagId: string;
const flavors: { id: string; site_id: string }[] = [];

const SCHEMA = {
  type: 'object',
  properties: {
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer' } } } } },
    result: {
      type: 'object',
      properties: { score: { type: ['number', 'string', 'null'] }, time: { type: 'number', 'x-better': 'lower' } },
    },
  },
};

/** What is not a number, and numbers of every kind a document may hold. */
const ODD: unknown[] = ['12', null, true, { v: 1 }, [1], undefined];
const EXTREME: number[] = [1e155, -1e155, 1.7e308, -1.7e308, 5e-324, 1e-200, 0, -0.5];
const DAY = 86_400_000;
const START = Date.UTC(2025, 0, 1);

const fork = () => t.server.context.orm.em.fork();
/** An answer and its sketch, as compared. */
const computed = async (query: ChangesParams, options: { documents?: boolean; segmenter?: ChangesSegmenter } = {}) => {
  const { answer, sketch } = await findChanges(fork(), query, options);
  return { answer, sketch };
};

test.before(async () => {
  t = await startTestServer({}, 'changes_table');
  seed = await createSeeder(t);
  alice = await t.user('alice');
  benchmarkId = (await seed.benchmark({ schema: SCHEMA })).id;
  tagId = (await seed.tag()).id;
  for (const name of ['North', 'South', 'East']) {
    const site = await seed.site({ name });
    for (const f of ['small', 'large']) flavors.push(await seed.flavor(site.id, { name: `${name}-${f}` }));
  }
  // Per flavor, 120 points a day apart (every 7th at the time of the one before: ties, ordered by id),
  // a step at a place of its own; a few of them not numbers, extreme, or hidden.
  const rng = prng(20261126);
  const rows: SeededResult[] = [];
  for (const [f, flavor] of flavors.entries()) {
    const step = 40 + 10 * f;
    for (let i = 0; i < 120; i++) {
      const level = i < step ? 100 : f % 2 ? 80 : 125;
      let score: unknown = Math.round((level + 4 * (rng.next() - 0.5)) * 1000) / 1000;
      if (f >= 2 && rng.chance(0.06)) score = rng.pick(ODD);
      else if (f >= 4 && rng.chance(0.05)) score = rng.pick(EXTREME);
      const result: Record<string, unknown> = { time: i };
      if (score !== undefined) result.score = score;
      rows.push({
        benchmark_id: benchmarkId,
        flavor_id: flavor.id,
        site_id: flavor.site_id,
        json: { machine: { cpu: { count: 1 + rng.int(16) } }, result },
        execution_datetime: new Date(START + (i % 7 === 6 ? i - 1 : i) * DAY),
        upload_datetime: new Date(START + rng.int(200) * DAY),
        tags: rng.chance(0.5) ? [tagId] : [],
        hidden: rng.chance(0.03),
      });
    }
  }
  // Stored in a scrambled order.
  const order = rows.map((_, i) => i).sort((a, b) => ((a * 7919) % rows.length) - ((b * 7919) % rows.length));
  const ids = await seed.results(order.map((i) => rows[i]!));
  // Beyond the largest double (excluded) and below half the smallest one (0): only outside the API.
  const inLast = ids.filter((_, j) => rows[order[j]!]!.flavor_id === flavors[5]!.id);
  await seed.sql(`update result set json = jsonb_set(json, '{result,score}', '-1e400'::jsonb) where id = any(?::uuid[])`, [
    inLast.slice(0, 2),
  ]);
  await seed.sql(`update result set json = jsonb_set(json, '{result,score}', '1e-400'::jsonb) where id = any(?::uuid[])`, [
    inLast.slice(2, 4),
  ]);
  await t.server.context.metrics.values.reconcile(fork());
  await t.server.context.metrics.values.idle();
});
test.after(async () => {
  await t.close();
});

/** The queries the table answers: both groupings, each filter it holds, and parameters of the segmentation. */
function answerable(): ChangesParams[] {
  const base = { benchmark_id: benchmarkId, metric: 'json.result.score' } as ChangesParams;
  const out: ChangesParams[] = [];
  for (const group_by of ['flavor', 'site'] as const) {
    for (const extra of [
      {},
      { site_id: flavors[2]!.site_id },
      { flavor_id: flavors[5]!.id },
      { execution_after: '2025-02-01T00:00:00Z' },
      { execution_before: '2025-04-01T00:00:00Z', execution_after: '2025-01-10T00:00:00Z' },
      { min_size: 2, max_pvalue: 0.2, min_magnitude: 0 },
      { better: 'lower' as const, changed_after: '2025-02-20T00:00:00Z' },
    ]) {
      out.push({ ...base, group_by, ...extra });
    }
  }
  out.push({ ...base, metric: 'json.result.time' }, { ...base, metric: 'json.machine.cpu.count', group_by: 'site' });
  return out;
}

test('the same answer from the table as from the documents, field by field, with the chart’s sketch', async () => {
  let changes = 0;
  for (const query of answerable()) {
    const path = query.metric.split('.').slice(1);
    const { source } = await readSeries(fork(), query, path, { benchmarkId });
    assert.is(source, 'table', JSON.stringify(query));
    const fromTable = await computed(query);
    assert.equal(fromTable, await computed(query, { documents: true }), JSON.stringify(query));
    changes += fromTable.answer.groups.reduce((n, g) => n + g.changes.length, 0);
  }
  const all = (await computed({ benchmark_id: benchmarkId, metric: 'json.result.score' } as ChangesParams)).answer;
  assert.is(all.groups.length, 6);
  assert.ok(all.excluded > 0, 'some results have no number, or one beyond a double');
  assert.ok(changes >= 12, `${changes} change points: the steps are found`);
  // A time tie is ordered by id, and -1e400 (beyond a double) excluded from its series, from either source.
  const last = all.groups.find((g) => g.flavor?.id === flavors[5]!.id)!;
  assert.ok(last.n < 120 - 2, String(last.n));
});

test('the documents answer what the table cannot: JSON filters, tags, upload times', async () => {
  const base = { benchmark_id: benchmarkId, metric: 'json.result.score' } as ChangesParams;
  for (const extra of [{ filters: ['machine.cpu.count >= 8'] }, { tags_ids: [tagId] }, { upload_after: '2025-03-01T00:00:00Z' }]) {
    const query = { ...base, ...extra };
    const { source, series } = await readSeries(fork(), query, ['result', 'score'], { benchmarkId });
    assert.is(source, 'documents', JSON.stringify(extra));
    assert.ok(series.length > 0);
  }
});

test('the table answers when the benchmark’s values are complete, the documents otherwise', async () => {
  const query = { benchmark_id: benchmarkId, metric: 'json.result.score' } as ChangesParams;
  const truth = await computed(query, { documents: true });
  // A table that disagrees with the documents shows which one answered.
  const shift = (by: number) =>
    seed.sql(
      "update metric_value set value = value + ? where path_id = (select id from metric_path where benchmark_id = ? and path = '{result,score}')",
      [by, benchmarkId],
    );
  await shift(1000);
  try {
    assert.not.equal(await computed(query), truth, 'answered from the table');
    await seed.sql('update metric_benchmark set complete = false where benchmark_id = ?', [benchmarkId]);
    assert.equal(await computed(query), truth, 'incomplete: answered from the documents');
  } finally {
    await shift(-1000);
    await seed.sql('update metric_benchmark set complete = true where benchmark_id = ?', [benchmarkId]);
  }
  assert.equal(await computed(query), truth);
});

test('after a write, only the series it changed are segmented again, with a fresh computation’s answer', async () => {
  const segmenter = t.server.context.changes.segmenter;
  segmenter.forget();
  const query = { benchmark_id: benchmarkId, metric: 'json.result.score' };
  const get = async () => {
    const res = await t.request('GET', '/results:changes', { query });
    assert.is(res.status, 200, res.text);
    return res.body;
  };
  const fresh = async () => (await computed(query as ChangesParams)).answer;
  let count = segmenter.segmentations;
  const segmented = () => {
    const n = segmenter.segmentations - count;
    count = segmenter.segmentations;
    return n;
  };
  const first = await get();
  assert.is(segmented(), 6, 'every series segmented once');
  assert.equal(await get(), first);
  assert.is(segmented(), 0, 'nothing changed: every segmentation remembered');

  // An upload to one flavor: that series only.
  const uploaded = await upload(
    t,
    alice,
    { benchmark_id: benchmarkId, flavor_id: flavors[1]!.id, execution_datetime: '2025-06-01T00:00:00Z' },
    { result: { score: 79.5, time: 1 } },
  );
  assert.is(uploaded.status, 201, uploaded.text);
  const afterUpload = await get();
  assert.is(segmented(), 1, 'the changed series only');
  assert.equal(afterUpload, await fresh());
  const grown = afterUpload.groups.find((g: any) => g.flavor.id === flavors[1]!.id);
  assert.is(grown.n, first.groups.find((g: any) => g.flavor.id === flavors[1]!.id).n + 1);

  // A value changed in place (the count and times as they were): that series again.
  await seed.sql(
    `update result set json = jsonb_set(json, '{result,score}', '150'::jsonb)
     where id = (select id from result where flavor_id = ? and benchmark_id = ? and jsonb_typeof(json #> '{result,score}') = 'number'
                 order by execution_datetime, id limit 1 offset 10)`,
    [flavors[3]!.id, benchmarkId],
  );
  const afterUpdate = await get();
  assert.is(segmented(), 1, 'the edited series only');
  assert.equal(afterUpdate, await fresh());
  assert.not.equal(afterUpdate, afterUpload);
  // Other segmentation parameters are other segmentations.
  const res = await t.request('GET', '/results:changes', { query: { ...query, min_size: 6 } });
  assert.is(res.status, 200, res.text);
  assert.is(segmented(), 6);
});

test('change points remembered for series segmented in the worker thread: the same answer', async () => {
  const segmenter = new ChangesSegmenter({ minPoints: 1, idleMs: 50 });
  try {
    const query = { benchmark_id: benchmarkId, metric: 'json.result.score' } as ChangesParams;
    const inPlace = await computed(query);
    const first = await computed(query, { segmenter });
    assert.equal(first, inPlace);
    assert.is(segmenter.segmentations, 6);
    assert.is(segmenter.segmentedInWorker, 6);
    const again = await computed(query, { segmenter });
    assert.equal(again, inPlace);
    assert.is(segmenter.segmentations, 6, 'remembered');
    assert.is(segmenter.segmentedInWorker, 12, 'parsed and sketched in the worker still');
  } finally {
    await segmenter.close();
  }
});

test('a series sent while the idle worker is still ending goes to a new worker, not failed with the old one', async () => {
  const segmenter = new ChangesSegmenter({ minPoints: 1 });
  const points = encodePoints(
    Array.from({ length: 40 }, (_, i) => ({
      value: i < 20 ? 10 : 20,
      ms: Date.UTC(2025, 0, 1 + i),
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    })),
  );
  const options = { maxPvalue: 0.001, minMagnitude: 0, minSize: 3 };
  const axis = { from: Date.UTC(2025, 0, 1), to: Date.UTC(2025, 1, 10), columns: 10 };
  try {
    const [first] = await segmenter.segment([{ points, n: 40 }], options, axis);
    assert.is(segmenter.segmentedInWorker, 1);
    // The first worker ends (as after idleMs) and the next series starts another before it has.
    const ending = segmenter.close();
    segmenter.forget();
    const [second] = await segmenter.segment([{ points, n: 40 }], options, axis);
    await ending;
    assert.is(segmenter.segmentedInWorker, 2, 'segmented in the new worker, not in place after the old one ended');
    assert.equal(second, first);
  } finally {
    await segmenter.close();
  }
});

test('the worker starts in a process run with V8 flags, as production and the bench run it', async () => {
  // Listed in a worker's execArgv, --max-old-space-size makes `new Worker` throw: every series would
  // be segmented in place, on the event loop.
  const script = `
    import { ChangesSegmenter } from ${JSON.stringify(new URL('../src/services/changes/changes-segmenter.ts', import.meta.url).href)};
    import { encodePoints } from ${JSON.stringify(new URL('../src/services/changes/changes-series.ts', import.meta.url).href)};
    const segmenter = new ChangesSegmenter({ minPoints: 1 });
    const points = encodePoints([{ value: 1, ms: 0, id: '00000000-0000-4000-8000-000000000000' }]);
    await segmenter.segment([{ points, n: 1 }], { maxPvalue: 0.001, minMagnitude: 0, minSize: 3 }, { from: 0, to: 1, columns: 1 });
    console.log(segmenter.segmentedInWorker);
    await segmenter.close();`;
  const register = fileURLToPath(new URL('../../../scripts/dev/register.js', import.meta.url));
  const run = spawnSync(
    process.execPath,
    ['--max-old-space-size=128', '--max-semi-space-size=16', '--import', register, '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  assert.is(run.stderr, '');
  assert.is(run.stdout.trim(), '1', 'segmented in the worker');
});

test('sortPoints: by execution time to the microsecond, then id, as PostgreSQL orders them, far dates included', async () => {
  // Ties (the same time) and times a microsecond apart in one series.
  const flavor = flavors[0]!;
  await seed.sql(
    `update result set execution_datetime = execution_datetime + make_interval(secs => (get_byte(uuid_send(id), 0) % 3) / 1000000.0)
     where flavor_id = ? and benchmark_id = ?`,
    [flavor.id, benchmarkId],
  );
  const query = { benchmark_id: benchmarkId, metric: 'json.result.score', flavor_id: flavor.id } as ChangesParams;
  const { series } = await readSeries(fork(), query, ['result', 'score'], { benchmarkId });
  const sorted = sortPoints(series[0]!.points);
  const expected = await seed.sql<{ id: string; ms: number }>(
    `select id::text, floor(extract(epoch from execution_datetime) * 1000)::float8 as ms from result
     where flavor_id = ? and benchmark_id = ? and not hidden and jsonb_typeof(json #> '{result,score}') = 'number'
       and (json #> '{result,score}')::numeric between -1.7976931348623157e308 and 1.7976931348623157e308
     order by execution_datetime, id`,
    [flavor.id, benchmarkId],
  );
  const [ties] = await seed.sql<{ n: number }>(
    'select count(*)::int as n from (select execution_datetime from result where flavor_id = ? group by 1 having count(*) > 1) t',
    [flavor.id],
  );
  assert.ok(ties!.n > 0, 'some times are shared');
  assert.equal(
    Array.from({ length: sorted.values.length }, (_, i) => idOf(sorted.ids, i)),
    expected.map((r) => r.id),
  );
  assert.equal(
    Array.from(sorted.times),
    expected.map((r) => Number(r.ms)),
  );

  // Beyond 285 years of 2000, microseconds are no longer exact doubles: compared in full.
  const far = [Date.UTC(2400, 0, 1), Date.UTC(1650, 5, 1), Date.UTC(2400, 0, 1), Date.UTC(2000, 0, 1), Date.UTC(1650, 5, 1) + 1];
  const points = far.map((ms, i) => ({ value: i, ms, id: `${String(9 - i).repeat(8)}-0000-4000-8000-000000000000` }));
  const farSorted = sortPoints(encodePoints(points));
  assert.equal(Array.from(farSorted.values), [1, 4, 3, 2, 0]);
  assert.equal(Array.from(farSorted.times), [far[1], far[4], far[3], far[2], far[0]]);
  // The same points in another order: the same digest.
  assert.is(sortPoints(encodePoints([...points].reverse())).digest, farSorted.digest);
  assert.is.not(sortPoints(encodePoints(points.slice(1))).digest, farSorted.digest);
});

/** The i-th id of sortPoints' ids, as uuids are written. */
function idOf(ids: Uint32Array, i: number): string {
  const hex = Array.from(ids.subarray(4 * i, 4 * i + 4), (w) => w.toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

test.run();
