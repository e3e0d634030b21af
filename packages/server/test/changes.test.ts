/**
 * GET /results:changes against a real database: series with known steps (found at the right point,
 * with before/after statistics, magnitude and Welch's p-value recomputed here), a flat series and a
 * short one (nothing), both directions, changed_after, filters, the answer independent of the order
 * of upload, CSV with compare's formula guard, extreme values, the worker thread (a long series, or
 * many short ones that would hold the event loop), caching, and the errors.
 */
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { findChanges, seriesChanges } from '../src/services/changes/changes.ts';
import { encodePoints, summariseSeries } from '../src/services/changes/changes-series.ts';
import { ChangesSegmenter } from '../src/services/changes/changes-segmenter.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
let reversedId: string;
const flavors: Record<string, { id: string; site_id: string }> = {};
const ids: Record<string, string[]> = {};

/** A seeded normal generator (mulberry32, Box–Muller). */
function normals(seed: number) {
  let a = seed;
  const uniform = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}
const series = (levels: [number, number][], sd: number, s: number) => {
  const normal = normals(s);
  return levels.flatMap(([length, mean]) => Array.from({ length }, () => Math.round((mean + sd * normal()) * 1000) / 1000));
};

/** A: drops at 30 (a regression); B: flat; C: rises at 25 (an improvement); D: too short; E: two steps. */
const SCORES: Record<string, number[]> = {
  A: series(
    [
      [30, 100],
      [30, 85],
    ],
    2,
    1,
  ),
  B: series([[60, 50]], 1, 2),
  C: series(
    [
      [25, 10],
      [35, 12],
    ],
    0.3,
    3,
  ),
  D: [1, 1, 1, 9, 9, 9],
  E: series(
    [
      [20, 200],
      [20, 230],
      [20, 190],
    ],
    3,
    4,
  ),
};
const SITE_OF: Record<string, string> = { A: 'Alpha', B: 'Alpha', C: '=Beta', D: 'Gamma', E: 'Gamma' };
const FLAVOR_NAME: Record<string, string> = { A: 'a.large', B: 'b.flat', C: '+c', D: 'd.short', E: 'e.two' };
const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);
const at = (i: number) => new Date(START + i * DAY + 3_600_000);

test.before(async () => {
  t = await startTestServer({}, 'changes');
  seed = await createSeeder(t);
  const schema = {
    type: 'object',
    properties: { result: { type: 'object', properties: { score: { type: 'number' }, time: { type: 'number', 'x-better': 'lower' } } } },
  };
  benchmarkId = (await seed.benchmark({ schema })).id;
  reversedId = (await seed.benchmark({ schema })).id;
  const sites: Record<string, string> = {};
  for (const name of new Set(Object.values(SITE_OF))) sites[name] = (await seed.site({ name })).id;
  for (const [key, name] of Object.entries(FLAVOR_NAME)) flavors[key] = await seed.flavor(sites[SITE_OF[key]!]!, { name });
  const rows = (benchmark: string) =>
    Object.entries(SCORES).flatMap(([key, scores]) =>
      scores.map((score, i) => ({
        key,
        i,
        row: {
          benchmark_id: benchmark,
          flavor_id: flavors[key]!.id,
          site_id: flavors[key]!.site_id,
          json: { result: { score, time: score } },
          execution_datetime: at(i),
        },
      })),
    );
  // Uploaded in a scrambled order; the second benchmark's in the reverse of that order.
  const scrambled = rows(benchmarkId).sort((p, q) => ((p.i * 7919 + p.key.charCodeAt(0)) % 61) - ((q.i * 7919 + q.key.charCodeAt(0)) % 61));
  const stored = await seed.results(scrambled.map((r) => r.row));
  for (const key of Object.keys(SCORES)) ids[key] = [];
  for (const [j, r] of scrambled.entries()) ids[r.key]![r.i] = stored[j]!;
  const reversed = rows(reversedId).sort((p, q) => ((q.i * 7919 + q.key.charCodeAt(0)) % 61) - ((p.i * 7919 + p.key.charCodeAt(0)) % 61));
  for (const chunk of [reversed.slice(0, 100), reversed.slice(100)]) await seed.results(chunk.map((r) => r.row));
  // Neither counted in a series: a result without a number, and a hidden one.
  await seed.results([
    {
      benchmark_id: benchmarkId,
      flavor_id: flavors.B!.id,
      site_id: flavors.B!.site_id,
      json: { result: { score: 'n/a' } },
      execution_datetime: at(3),
    },
    {
      benchmark_id: benchmarkId,
      flavor_id: flavors.B!.id,
      site_id: flavors.B!.site_id,
      json: { result: { score: 1e6 } },
      execution_datetime: at(4),
      hidden: true,
    },
  ]);
});
test.after(async () => {
  await t.close();
});

const changes = (query: Record<string, string | number | undefined>, headers?: Record<string, string>) =>
  t.request('GET', '/results:changes', { query: { benchmark_id: benchmarkId, metric: 'json.result.score', ...query }, headers });

const mean = (v: number[]) => v.reduce((s, a) => s + a, 0) / v.length;
const median = (v: number[]) => {
  const x = [...v].sort((p, q) => p - q);
  const n = x.length;
  return n % 2 ? x[(n - 1) / 2]! : (x[n / 2 - 1]! + x[n / 2]!) / 2;
};
const stddev = (v: number[]) => Math.sqrt(v.reduce((s, a) => s + (a - mean(v)) ** 2, 0) / (v.length - 1));
/** Welch's t and degrees of freedom, by hand. */
const welch = (x: number[], y: number[]) => {
  const a = stddev(x) ** 2 / x.length;
  const b = stddev(y) ** 2 / y.length;
  return { t: (mean(y) - mean(x)) / Math.sqrt(a + b), df: (a + b) ** 2 / (a ** 2 / (x.length - 1) + b ** 2 / (y.length - 1)) };
};
const close = (actual: number, expected: number, relative: number, label: string) =>
  assert.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${label}: ${actual} is not within ${relative} of ${expected}`);
const iso = (i: number) => at(i).toISOString().slice(0, -1);

test('GET /results:changes: each step found at its first point, with its segments and statistics', async () => {
  const res = await changes({});
  assert.is(res.status, 200, res.text);
  const body = res.body;
  assert.equal(
    {
      better: body.better,
      max_pvalue: body.max_pvalue,
      min_magnitude: body.min_magnitude,
      min_size: body.min_size,
      group_by: body.group_by,
    },
    { better: 'higher', max_pvalue: 0.001, min_magnitude: 0.02, min_size: 5, group_by: 'flavor' },
  );
  assert.is(body.matched, 60 + 60 + 60 + 6 + 60 + 1);
  assert.is(body.excluded, 1);
  // Site name, then flavor name (by code point: '=' before 'A', '+' before 'a').
  assert.equal(
    body.groups.map((g: any) => `${g.site.name}/${g.flavor.name}`),
    ['=Beta/+c', 'Alpha/a.large', 'Alpha/b.flat', 'Gamma/d.short', 'Gamma/e.two'],
  );
  const group = (name: string) => body.groups.find((g: any) => g.flavor.name === name);
  const a = group('a.large');
  assert.equal({ n: a.n, first: a.first, last: a.last }, { n: 60, first: iso(0), last: iso(59) });
  assert.is(a.changes.length, 1);
  const change = a.changes[0];
  const before = SCORES.A!.slice(0, 30);
  const after = SCORES.A!.slice(30);
  assert.equal(
    { index: change.index, at: change.at, result_id: change.result_id, direction: change.direction },
    { index: 30, at: iso(30), result_id: ids.A![30], direction: 'regression' },
  );
  assert.equal(change.before.n, 30);
  close(change.before.mean, mean(before), 1e-12, 'before.mean');
  close(change.after.mean, mean(after), 1e-12, 'after.mean');
  assert.is(change.before.median, median(before));
  assert.is(change.after.median, median(after));
  close(change.magnitude, (mean(after) - mean(before)) / mean(before), 1e-10, 'magnitude');
  const { t: tStat, df } = welch(before, after);
  assert.ok(tStat < -20 && df > 50, `t ${tStat}, df ${df}`);
  assert.ok(change.pvalue > 0 && change.pvalue < 1e-20, String(change.pvalue));
  assert.equal(
    a.segments.map((s: any) => [s.from, s.to, s.n]),
    [
      [iso(0), iso(29), 30],
      [iso(30), iso(59), 30],
    ],
  );
  close(a.segments[1].stddev, stddev(after), 1e-10, 'stddev');

  const c = group('+c');
  assert.equal(
    c.changes.map((x: any) => [x.index, x.direction, x.result_id]),
    [[25, 'improvement', ids.C![25]]],
  );
  // A moderate change: the p-value matches Welch's t with the Welch–Satterthwaite degrees of freedom.
  const e = group('e.two');
  assert.equal(
    e.changes.map((x: any) => [x.index, x.direction]),
    [
      [20, 'improvement'],
      [40, 'regression'],
    ],
  );
  assert.equal(group('b.flat').changes, []);
  assert.equal(group('b.flat').segments.length, 1);
  assert.equal(group('d.short'), {
    ...group('d.short'),
    n: 6,
    changes: [],
    segments: [{ from: iso(0), to: iso(5), n: 6, mean: 5, median: 5, stddev: stddev(SCORES.D!) }],
  });
});

test('GET /results:changes: a p-value near the threshold is that of Welch’s test (max_pvalue decides)', async () => {
  // E's second step with a large max_pvalue: both kept; the p-values are recomputed here and decide alone.
  const res = await changes({ flavor_id: flavors.E!.id, max_pvalue: 0.4, min_magnitude: 0 });
  const group = res.body.groups[0];
  for (const change of group.changes) {
    const segs = group.segments;
    const i = segs.findIndex((s: any) => s.from === change.at);
    const before = SCORES.E!.slice(change.index - segs[i - 1].n, change.index);
    const after = SCORES.E!.slice(change.index, change.index + segs[i].n);
    close(change.before.mean, mean(before), 1e-12, 'before.mean');
    const { t: tStat } = welch(before, after);
    assert.ok(Math.sign(tStat) === Math.sign(change.after.mean - change.before.mean));
    assert.ok(change.pvalue <= 0.4);
  }
  // With the default threshold, p-values above it are never reported.
  const strict = await changes({ max_pvalue: 1e-30 });
  for (const g of strict.body.groups) for (const c of g.changes) assert.ok(c.pvalue <= 1e-30, JSON.stringify(c));
});

test('GET /results:changes: better=lower (or the schema’s x-better) turns regressions into improvements', async () => {
  const lower = await changes({ better: 'lower', flavor_id: flavors.A!.id });
  assert.equal(
    lower.body.groups[0].changes.map((c: any) => c.direction),
    ['improvement'],
  );
  const time = await changes({ metric: 'json.result.time', flavor_id: flavors.A!.id });
  assert.is(time.body.better, 'lower');
  assert.equal(
    time.body.groups[0].changes.map((c: any) => c.direction),
    ['improvement'],
  );
});

test('GET /results:changes: changed_after reports later change points only; the earlier ones still cut the series', async () => {
  const all = (await changes({ flavor_id: flavors.E!.id })).body.groups[0];
  const later = (await changes({ flavor_id: flavors.E!.id, changed_after: iso(30).slice(0, 10) })).body.groups[0];
  assert.equal(
    later.changes.map((c: any) => c.index),
    [40],
  );
  assert.equal(later.segments, all.segments);
  assert.equal(later.changes[0], all.changes[1]);
  const none = (await changes({ flavor_id: flavors.E!.id, changed_after: '2030-01-01T00:00:00Z' })).body.groups[0];
  assert.equal(none.changes, []);
});

test('GET /results:changes: the answer does not depend on the order of upload', async () => {
  const strip = (body: any) =>
    body.groups.map((g: any) => ({
      ...g,
      site: g.site.name,
      flavor: g.flavor.name,
      changes: g.changes.map(({ result_id: _id, ...c }: any) => c),
    }));
  const scrambled = await changes({});
  const reversed = await changes({ benchmark_id: reversedId });
  assert.equal(strip(reversed.body), strip(scrambled.body));
  assert.equal(strip((await changes({})).body), strip(scrambled.body), 'the same answer again');
});

test('GET /results:changes: group_by=site gives one series per site, in time order', async () => {
  const res = await changes({ group_by: 'site' });
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.groups.map((g: any) => [g.site.name, g.flavor, g.n]),
    [
      ['=Beta', null, 60],
      ['Alpha', null, 120],
      ['Gamma', null, 66],
    ],
  );
});

test('GET /results:changes?format=csv: one row per change point, names a spreadsheet would run guarded', async () => {
  const res = await changes({ format: 'csv' });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/csv/);
  const lines = res.text.split('\r\n');
  assert.is(lines[0], 'site_name,flavor_name,at,result_id,index,before_mean,after_mean,magnitude,pvalue,direction');
  assert.is(lines.at(-1), '');
  const json = (await changes({})).body;
  const rows = json.groups.flatMap((g: any) => g.changes.map((c: any) => ({ g, c })));
  assert.is(lines.length, rows.length + 2);
  const first = rows[0];
  assert.is(
    lines[1],
    [
      "'=Beta",
      "'+c",
      first.c.at,
      first.c.result_id,
      first.c.index,
      first.c.before.mean,
      first.c.after.mean,
      first.c.magnitude,
      first.c.pvalue,
      'improvement',
    ].join(','),
  );
  const accepted = await changes({}, { accept: 'text/csv' });
  assert.is(accepted.text, res.text);
});

test('GET /results:changes: extreme values (±1.7e308, 5e-324) and constant series answer 200 in every format', async () => {
  const benchmark = await seed.benchmark();
  const site = await seed.site({ name: 'Extremes' });
  const series: Record<string, number[]> = {
    huge: [...Array(12).fill(-1.7e308), ...Array(12).fill(1.7e308)],
    tiny: [...Array(12).fill(5e-324), ...Array(12).fill(0)],
    constant: Array(24).fill(42),
    mixed: Array.from({ length: 24 }, (_, i) => [1.7e308, -1.7e308, 5e-324, 0][i % 4]!),
  };
  for (const [name, values] of Object.entries(series)) {
    const flavor = await seed.flavor(site.id, { name });
    await seed.results(
      values.map((score, i) => ({
        benchmark_id: benchmark.id,
        flavor_id: flavor.id,
        site_id: flavor.site_id,
        json: { score },
        execution_datetime: at(i),
      })),
    );
  }
  for (const format of ['json', 'csv', 'svg']) {
    const res = await t.request('GET', '/results:changes', { query: { benchmark_id: benchmark.id, metric: 'json.score', format } });
    assert.is(res.status, 200, res.text);
    assert.not.match(res.text, /NaN|Infinity/);
  }
  const body = (await t.request('GET', '/results:changes', { query: { benchmark_id: benchmark.id, metric: 'json.score' } })).body;
  const by = (name: string) => body.groups.find((g: any) => g.flavor.name === name);
  assert.equal(
    by('huge').changes.map((c: any) => [c.index, c.before.mean, c.after.mean, c.magnitude, c.pvalue]),
    [[12, -1.7e308, 1.7e308, 2, 0]],
  );
  assert.equal(
    by('tiny').changes.map((c: any) => [c.index, c.magnitude, c.direction]),
    [[12, -1, 'regression']],
  );
  assert.equal(by('constant').changes, []);
  assert.equal(by('constant').segments[0].stddev, 0);
  assert.equal(by('huge').segments[0].stddev, 0);
});

test('GET /results:changes: the errors (problem+json, precise)', async () => {
  const cases: [Record<string, string>, number, string, RegExp][] = [
    [{ metric: 'score' }, 422, 'INVALID_METRIC', /metric 'score' is not a JSON path/],
    [{ max_pvalue: '0' }, 422, 'INVALID_QUERY', /max_pvalue/],
    [{ max_pvalue: '0.5' }, 422, 'INVALID_QUERY', /max_pvalue/],
    [{ min_magnitude: '-0.1' }, 422, 'INVALID_QUERY', /min_magnitude/],
    [{ min_size: '1' }, 422, 'INVALID_QUERY', /min_size/],
    [{ min_size: '2.5' }, 422, 'INVALID_QUERY', /min_size/],
    [{ changed_after: 'yesterday' }, 422, 'INVALID_QUERY', /changed_after/],
    [{ group_by: 'tag' }, 422, 'INVALID_QUERY', /group_by/],
    [{ confidence: '0.9' }, 422, 'INVALID_QUERY', /confidence/],
    [{ benchmark_id: randomUUID() }, 404, 'NOT_FOUND', /./],
  ];
  for (const [query, status, code, detail] of cases) {
    const res = await changes(query);
    assertProblem(res, status, code);
    assert.match(res.body.detail, detail, `${JSON.stringify(query)}: ${res.body.detail}`);
  }
});

test('GET /results:changes: a long series is segmented in a worker thread, with the same answer as in place', async () => {
  const benchmark = await seed.benchmark();
  const site = await seed.site({ name: 'Long' });
  const flavor = await seed.flavor(site.id, { name: 'long' });
  const values = series(
    [
      [1500, 100],
      [1200, 90],
      [800, 97],
    ],
    1,
    7,
  );
  await seed.results(
    values.map((score, i) => ({
      benchmark_id: benchmark.id,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { score },
      execution_datetime: new Date(START + i * 60_000),
    })),
  );
  const segmenter = t.server.context.changes.segmenter;
  const before = segmenter.segmentedInWorker;
  const res = await t.request('GET', '/results:changes', { query: { benchmark_id: benchmark.id, metric: 'json.score' } });
  assert.is(res.status, 200, res.text);
  assert.is(segmenter.segmentedInWorker, before + 1);
  const group = res.body.groups[0];
  assert.equal(
    group.changes.map((c: any) => c.index),
    [1500, 2700],
  );
  const points = encodePoints(
    values.map((value, i) => ({ value, ms: START + i * 60_000, id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` })).reverse(),
  );
  const inPlace = seriesChanges(
    { g: flavor.id, n: values.length, points, first: START, last: START + (values.length - 1) * 60_000, site, flavor },
    { maxPvalue: 0.001, minMagnitude: 0.02, minSize: 5, better: 'higher', after: null },
  );
  assert.equal(group.segments, inPlace.segments);
  assert.equal(
    group.changes.map(({ result_id: _r, ...c }: any) => c),
    inPlace.changes.map(({ result_id: _r, ...c }) => c),
  );
  // The chart draws a sketch of the points: at most one mark per pixel column, however long the series.
  const svg = await t.request('GET', '/results:changes', { query: { benchmark_id: benchmark.id, metric: 'json.score', format: 'svg' } });
  const marks = svg.text.match(/class="point"/g)?.length ?? 0;
  assert.ok(marks > 100 && marks <= 750, `${marks} marks for ${values.length} points`);

  // The worker is sent a copy of the bytes: the caller's (a Buffer, as the driver gives them) stay whole.
  const own = new ChangesSegmenter({ minPoints: 1, idleMs: 50 });
  try {
    const copy = Buffer.from(points);
    const axis = { from: START, to: START + (values.length - 1) * 60_000, columns: 600 };
    const options = { maxPvalue: 0.001, minMagnitude: 0.02, minSize: 5 };
    const [inWorker] = await own.segment([{ points, n: values.length }], options, axis);
    assert.is(own.segmentedInWorker, 1);
    assert.is(points.byteLength, copy.byteLength);
    assert.ok(copy.equals(points), 'the bytes as they were');
    assert.equal(inWorker, summariseSeries(points, options, axis));
  } finally {
    await own.close();
  }
});

test('GET /results:changes: many short series do not hold the event loop (max delay under 100 ms)', async () => {
  // 40 series of 500 points, each far below 2,000 but 20,000 in all: a saw-tooth, the costliest shape
  // to segment (segmented in place, back to back, they hold the event loop 0.2-0.4 s here).
  const benchmark = await seed.benchmark();
  const site = await seed.site({ name: 'Many' });
  const normal = normals(11);
  for (let f = 0; f < 40; f++) {
    const flavor = await seed.flavor(site.id, { name: `many-${String(f).padStart(2, '0')}` });
    await seed.results(
      Array.from({ length: 500 }, (_, i) => ({
        benchmark_id: benchmark.id,
        flavor_id: flavor.id,
        site_id: flavor.site_id,
        json: { score: (i % 20 < 10 ? 100 : 120) + normal() },
        execution_datetime: new Date(START + i * 60_000),
      })),
    );
  }
  const query = { benchmark_id: benchmark.id, metric: 'json.score' };
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const res = await t.request('GET', '/results:changes', { query });
  delay.disable();
  assert.is(res.status, 200, res.text);
  const maxMs = delay.max / 1e6;
  assert.ok(maxMs < 100, `the event loop was held for ${maxMs.toFixed(0)} ms`);
  // The same answer as segmenting every series in place.
  const inPlace = await findChanges(t.server.context.orm.em.fork(), query);
  assert.is(res.body.groups.length, 40);
  assert.ok(res.body.groups.every((g: any) => g.changes.length > 0));
  assert.equal(res.body.groups, JSON.parse(JSON.stringify(inPlace.answer.groups)));
});

test('GET /results:changes: remembered, and forgotten when anything is written', async () => {
  const cache = t.server.context.changes.cache;
  cache.invalidate(); // only this test's answers
  const benchmark = await seed.benchmark();
  const site = await seed.site({ name: 'Cached' });
  const flavor = await seed.flavor(site.id, { name: 'cached' });
  // The cache keeps answers of at least minMatched results.
  await seed.results(
    Array.from({ length: cache.options.minMatched }, (_, i) => ({
      benchmark_id: benchmark.id,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { score: i < cache.options.minMatched / 2 ? 10 : 20 },
      execution_datetime: new Date(START + i * 60_000),
    })),
  );
  const query = { benchmark_id: benchmark.id, metric: 'json.score' };
  // The rows were written around the server, in several transactions: PostgreSQL's notification of
  // each empties the cache when it arrives, late on a loaded machine. Asked until the answer stays
  // remembered for a whole second (every one of them has come).
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  let first = await t.request('GET', '/results:changes', { query });
  for (let i = 0; i < 40; i++) {
    if (cache.size === 1) {
      await sleep(1000);
      if (cache.size === 1) break;
    }
    first = await t.request('GET', '/results:changes', { query });
  }
  assert.is(first.status, 200, first.text);
  assert.is(first.body.groups[0].changes[0].index, cache.options.minMatched / 2);
  assert.is(cache.size, 1);
  const svg = await t.request('GET', '/results:changes', { query: { ...query, format: 'svg' } });
  assert.is(svg.status, 200);
  assert.is(cache.size, 1, 'one computation serves every format');
  await t.user('changes-writer'); // a registration: a write
  assert.is(cache.size, 0, 'a write forgets it');
});

test.run();
