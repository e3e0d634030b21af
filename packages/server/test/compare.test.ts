/**
 * GET /results:compare against a real database: statistics checked against values computed here
 * from the inserted numbers, small groups, ties, missing and non-numeric values, filters, both
 * directions, the x-better default, prices in and out of the currency, CSV, and the errors.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { compareResults } from '../src/services/compare/compare.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
let tagId: string;
const flavors: Record<string, { id: string; site_id: string }> = {};
const sites: Record<string, string> = {};

/** The scores of each flavor (besides the excluded and hidden results of A). */
const SCORES: Record<string, number[]> = {
  A: [100, 101, 102, 103, 104, 105, 106, 107, 108, 109],
  B: [50, 51, 52, 53, 54, 55, 56, 57, 58, 59],
  C: [101, 102, 103, 104, 105, 106, 107, 108, 109, 110],
  D: [500],
  E: [7, 8, 9],
};
const SITE_OF: Record<string, string> = { A: 'Alpha', B: 'Alpha', C: '=Beta, "q"', D: 'Gamma', E: 'Gamma' };
const FLAVOR_NAME: Record<string, string> = { A: 'a.large', B: 'b.small', C: '-minus', D: 'd.one', E: 'e.three' };

test.before(async () => {
  t = await startTestServer({}, 'compare');
  seed = await createSeeder(t);
  const benchmark = await seed.benchmark({
    schema: {
      type: 'object',
      properties: { result: { $ref: '#/$defs/result' } },
      $defs: { result: { type: 'object', properties: { score: { type: 'number' }, time: { type: 'number', 'x-better': 'lower' } } } },
    },
  });
  benchmarkId = benchmark.id;
  tagId = (await seed.tag()).id;
  for (const name of new Set(Object.values(SITE_OF))) sites[name] = (await seed.site({ name })).id;
  for (const [key, name] of Object.entries(FLAVOR_NAME)) {
    const f = await seed.flavor(sites[SITE_OF[key]!]!, { name });
    flavors[key] = { id: f.id, site_id: f.site_id };
  }
  const price = (key: string, value: number, currency: string) =>
    seed.sql('update flavor set price_per_hour = ?, currency = ? where id = ?', [value, currency, flavors[key]!.id]);
  await price('A', 2, 'EUR');
  await price('B', 1, 'EUR');
  await price('C', 1, 'USD');
  const at = (i: number) => new Date(Date.UTC(2024, 0, 1 + i));
  const rows = Object.entries(SCORES).flatMap(([key, scores]) =>
    scores.map((score, i) => ({
      benchmark_id: benchmarkId,
      flavor_id: flavors[key]!.id,
      site_id: flavors[key]!.site_id,
      // time = score / 10; B's machines have 4 cores, every other 8; B ran in 2023.
      json: { result: { score, time: score / 10 }, machine: { cores: key === 'B' ? 4 : 8 } },
      execution_datetime: key === 'B' ? new Date(Date.UTC(2023, 0, 1 + i)) : at(i),
      tags: key === 'A' ? [tagId] : [],
    })),
  );
  const a = flavors.A!;
  const excluded = [{ result: { score: 'fast' } }, { result: {} }, { result: { score: null } }];
  await seed.results([
    ...rows,
    ...excluded.map((json) => ({
      benchmark_id: benchmarkId,
      flavor_id: a.id,
      site_id: a.site_id,
      json,
      execution_datetime: at(0),
      tags: [tagId],
    })),
    // hidden: never counted
    {
      benchmark_id: benchmarkId,
      flavor_id: a.id,
      site_id: a.site_id,
      json: { result: { score: 1e6 } },
      execution_datetime: at(0),
      hidden: true,
    },
  ]);
});
test.after(async () => {
  await t.close();
});

const compare = (query: Record<string, string | number | string[] | undefined>, headers?: Record<string, string>) =>
  t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.result.score', ...query }, headers });

/** Independent statistics of a list of numbers (the definitions of COMPARE.md). */
function expected(values: number[]) {
  const x = [...values].sort((p, q) => p - q);
  const n = x.length;
  const mean = x.reduce((s, v) => s + v, 0) / n;
  const stddev = n > 1 ? Math.sqrt(x.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : null;
  const percentile = (f: number) => {
    const pos = (n - 1) * f;
    const lo = Math.floor(pos);
    return lo + 1 < n ? x[lo]! + (pos - lo) * (x[lo + 1]! - x[lo]!) : x[lo]!;
  };
  return {
    n,
    mean,
    stddev,
    min: x[0],
    max: x[n - 1],
    p5: percentile(0.05),
    p25: percentile(0.25),
    median: percentile(0.5),
    p75: percentile(0.75),
    p95: percentile(0.95),
  };
}

const close = (actual: number, wanted: number, label: string) =>
  assert.ok(Math.abs(actual - wanted) < 1e-9 * Math.max(1, Math.abs(wanted)), `${label}: ${actual} ≠ ${wanted}`);
const names = (groups: any[]) => groups.map((g) => g.flavor?.name ?? g.site.name);

test('GET /results:compare: statistics of each group equal the values computed from the inserted numbers', async () => {
  const res = await compare({});
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get('content-type')!, 'application/json');
  const body = res.body;
  assert.equal(
    {
      benchmark_id: body.benchmark_id,
      metric: body.metric,
      group_by: body.group_by,
      better: body.better,
      confidence: body.confidence,
      rank_by: body.rank_by,
    },
    { benchmark_id: benchmarkId, metric: 'json.result.score', group_by: 'flavor', better: 'higher', confidence: 0.95, rank_by: 'metric' },
  );
  // 34 numbers, 3 results of A without one; the hidden result is not matched.
  assert.is(body.matched, 37);
  assert.is(body.excluded, 3);
  for (const [key, scores] of Object.entries(SCORES)) {
    const group = body.groups.find((g: any) => g.flavor.id === flavors[key]!.id);
    const want = expected(scores);
    assert.equal(group.site, { id: flavors[key]!.site_id, name: SITE_OF[key] });
    assert.is(group.flavor.name, FLAVOR_NAME[key]);
    assert.is(group.n, want.n);
    for (const field of ['mean', 'min', 'max', 'p5', 'p25', 'median', 'p75', 'p95'] as const)
      close(group[field], want[field]!, `${key}.${field}`);
    if (want.stddev === null) assert.is(group.stddev, null);
    else close(group.stddev, want.stddev, `${key}.stddev`);
  }
  const a = body.groups.find((g: any) => g.flavor.name === 'a.large');
  // n = 10 at 95 %: [x(2), x(9)] (tabulated); mean ± t(0.975, 9) · s / √10 with t = 2.2622.
  assert.equal(a.median_ci, [101, 108]);
  const half = (2.2622 * expected(SCORES.A!).stddev!) / Math.sqrt(10);
  assert.ok(Math.abs(a.mean_ci[0] - (104.5 - half)) < 1e-3 && Math.abs(a.mean_ci[1] - (104.5 + half)) < 1e-3, JSON.stringify(a.mean_ci));
  assert.equal(a.price, { per_hour: 2, currency: 'EUR' });
  assert.equal(a.per_price, { median: 52.25, median_ci: [50.5, 54] });
});

test('GET /results:compare: one value has no stddev and no mean interval; small groups are listed unranked, last', async () => {
  const { groups } = (await compare({})).body;
  const d = groups.find((g: any) => g.flavor.name === 'd.one');
  assert.equal(
    {
      n: d.n,
      mean: d.mean,
      stddev: d.stddev,
      median_ci: d.median_ci,
      mean_ci: d.mean_ci,
      rank: d.rank,
      price: d.price,
      per_price: d.per_price,
    },
    { n: 1, mean: 500, stddev: null, median_ci: [500, 500], mean_ci: null, rank: null, price: null, per_price: null },
  );
  const e = groups.find((g: any) => g.flavor.name === 'e.three');
  assert.equal(e.median_ci, [7, 9]); // k = 0: [min, max]
  assert.is(e.rank, null);
  // A and C overlap: both rank 1 (C first: its median is higher); B lies below both: 3; then the unranked by median.
  assert.equal(names(groups), ['-minus', 'a.large', 'b.small', 'd.one', 'e.three']);
  assert.equal(
    groups.map((g: any) => g.rank),
    [1, 1, 3, null, null],
  );
  // min_samples=1 ranks every group: D (500, its interval [500, 500]) is first alone.
  const all = (await compare({ min_samples: 1 })).body.groups;
  assert.equal(names(all), ['d.one', '-minus', 'a.large', 'b.small', 'e.three']);
  assert.equal(
    all.map((g: any) => g.rank),
    [1, 2, 2, 4, 5],
  );
  // At 0.999, n = 10 gives k = 0: [min, max]; B is still apart from A and C.
  const strict = (await compare({ confidence: 0.999 })).body.groups;
  assert.equal(strict.find((g: any) => g.flavor.name === 'a.large').median_ci, [100, 109]);
  assert.equal(
    strict.map((g: any) => g.rank),
    [1, 1, 3, null, null],
  );
});

test('GET /results:compare: better=lower reverses ranks and order; x-better in the schema is the default', async () => {
  const lower = (await compare({ better: 'lower' })).body;
  assert.is(lower.better, 'lower');
  // B first; A and C each have only B entirely below them: both rank 2 (A first: lower median).
  assert.equal(names(lower.groups), ['b.small', 'a.large', '-minus', 'e.three', 'd.one']);
  assert.equal(
    lower.groups.map((g: any) => g.rank),
    [1, 2, 2, null, null],
  );
  assert.equal(lower.groups[0].per_price, { median: 54.5, median_ci: [51, 58] }); // times the price (1)
  assert.equal(lower.groups[1].per_price, { median: 209, median_ci: [202, 216] }); // times 2
  // result.time carries "x-better": "lower" (through $ref): lower by default, higher when asked.
  const time = (await compare({ metric: 'json.result.time' })).body;
  assert.is(time.better, 'lower');
  assert.equal(names(time.groups), ['b.small', 'a.large', '-minus', 'e.three', 'd.one']);
  assert.is((await compare({ metric: 'json.result.time', better: 'higher' })).body.better, 'higher');
});

test('GET /results:compare: missing or non-numeric values are excluded, never an error', async () => {
  const none = (await compare({ metric: 'json.result.nothing' })).body;
  assert.equal({ matched: none.matched, excluded: none.excluded, groups: none.groups }, { matched: 37, excluded: 37, groups: [] });
  // `machine` is an object in every result.
  assert.is((await compare({ metric: 'json.machine' })).body.excluded, 37);
  const cores = (await compare({ metric: 'json.machine.cores' })).body;
  assert.is(cores.excluded, 3);
  // Nothing matches at all.
  const empty = (await compare({ filters: ['machine.cores > 100'] })).body;
  assert.equal({ matched: empty.matched, excluded: empty.excluded, groups: empty.groups }, { matched: 0, excluded: 0, groups: [] });
});

test('compare: the order statistics read by the second statement equal those picked from the first', async () => {
  for (const query of [{}, { group_by: 'site' as const }, { confidence: 0.6, better: 'lower' as const }]) {
    const full = { benchmark_id: benchmarkId, metric: 'json.result.score', ...query };
    const picked = await compareResults(t.server.context.orm.em.fork(), full);
    const fetched = await compareResults(t.server.context.orm.em.fork(), full, { pickWindow: -1000 });
    assert.equal(fetched.answer, picked.answer);
    assert.equal(picked.answer, (await compare(query)).body);
  }
});

/** 2·P(B ≤ k − 1) ≤ α with exact binomial coefficients (BigInt): COMPARE.md's definition of k. */
function exactK(n: number, confidence: number): number {
  const total = 2n ** BigInt(n);
  let coefficient = 1n;
  let cumulative = 0n;
  let k = 0;
  for (let i = 0; i < n; i++) {
    cumulative += coefficient; // C(n, i)
    if (2 * (Number(cumulative) / Number(total)) > 1 - confidence + 1e-12) break;
    k = i + 1;
    coefficient = (coefficient * BigInt(n - i)) / BigInt(i + 1);
  }
  return k;
}

test('GET /results:compare: groups of 1,000 and 401 values: median_ci is [x(k), x(n + 1 − k)] of each, read from either statement', async () => {
  const other = await seed.benchmark();
  const sizes: [string, number][] = [
    ['A', 1000],
    ['B', 401],
  ];
  // x(i) = 1000 + 3i for A and 7i for B, inserted in a scrambled order (i·389 mod n visits every rank).
  const value = (key: string, i: number) => (key === 'A' ? 1000 + 3 * i : 7 * i);
  await seed.results(
    sizes.flatMap(([key, n]) =>
      Array.from({ length: n }, (_, j) => ({
        benchmark_id: other.id,
        flavor_id: flavors[key]!.id,
        site_id: flavors[key]!.site_id,
        json: { result: { score: value(key, ((j * 389) % n) + 1) } },
        execution_datetime: new Date(Date.UTC(2024, 1, 1, 0, j)),
      })),
    ),
  );
  for (const confidence of [0.5, 0.95, 0.999]) {
    const query = { benchmark_id: other.id, metric: 'json.result.score', confidence };
    const body = (await compare(query)).body;
    for (const [key, n] of sizes) {
      const group = body.groups.find((g: any) => g.flavor.id === flavors[key]!.id);
      const k = exactK(n, confidence);
      assert.ok(k > 0);
      assert.is(group.n, n);
      assert.equal(group.median_ci, [value(key, k), value(key, n + 1 - k)], `${key} at ${confidence}: k = ${k}`);
      const want = expected(Array.from({ length: n }, (_, i) => value(key, i + 1)));
      for (const field of ['min', 'p5', 'p25', 'median', 'p75', 'p95', 'max'] as const)
        close(group[field], want[field]!, `${key}.${field}`);
    }
    const fetched = await compareResults(t.server.context.orm.em.fork(), query, { pickWindow: -1000 });
    assert.equal(fetched.answer, body);
  }
});

test('GET /results:compare: a number beyond double precision (stored outside the API) is excluded, not an error', async () => {
  const other = await seed.benchmark();
  const a = flavors.A!;
  const [big, small] = await seed.results(
    [1, 2].map((score) => ({
      benchmark_id: other.id,
      flavor_id: a.id,
      site_id: a.site_id,
      json: { result: { score } },
      execution_datetime: new Date(),
    })),
  );
  await seed.sql(`update result set json = '{"result": {"score": -1e400}}'::jsonb where id = ?`, [big]);
  const res = await compare({ benchmark_id: other.id });
  assert.is(res.status, 200, res.text);
  assert.equal(
    { matched: res.body.matched, excluded: res.body.excluded, n: res.body.groups[0].n, median: res.body.groups[0].median },
    { matched: 2, excluded: 1, n: 1, median: 2 },
  );
  assert.ok(small);
});

test('GET /results:compare: every /results filter applies (JSON filters, site, flavor, tags, dates)', async () => {
  const byFilter = (await compare({ filters: ['machine.cores >= 8'] })).body;
  assert.equal(names(byFilter.groups).sort(), ['-minus', 'a.large', 'd.one', 'e.three']);
  assert.is(byFilter.matched, 24); // B's 10 have 4 cores; the 3 excluded results have no machine
  const bySite = (await compare({ site_id: sites.Alpha })).body;
  assert.equal(names(bySite.groups), ['a.large', 'b.small']);
  assert.equal(
    bySite.groups.map((g: any) => g.rank),
    [1, 2],
  );
  const byTag = (await compare({ tags_ids: [tagId] })).body;
  assert.equal(
    { names: names(byTag.groups), matched: byTag.matched, excluded: byTag.excluded },
    { names: ['a.large'], matched: 13, excluded: 3 },
  );
  const byFlavor = (await compare({ flavor_id: flavors.C!.id })).body;
  assert.equal(names(byFlavor.groups), ['-minus']);
  const byDate = (await compare({ execution_before: '2024-01-01' })).body;
  assert.equal(names(byDate.groups), ['b.small']);
  const afterFirstDays = (await compare({ execution_after: '2024-01-05' })).body;
  assert.is(afterFirstDays.groups.find((g: any) => g.flavor.name === 'a.large').n, 5); // 6th to 10th of January
  assertProblem(await compare({ filters: ['cores >'] }), 422, 'INVALID_FILTER');
});

test('GET /results:compare: group_by=site pools the flavors of each site; no prices', async () => {
  const body = (await compare({ group_by: 'site' })).body;
  assert.is(body.group_by, 'site');
  const alpha = body.groups.find((g: any) => g.site.name === 'Alpha');
  const want = expected([...SCORES.A!, ...SCORES.B!]);
  assert.is(alpha.n, 20);
  close(alpha.median, want.median, 'Alpha median');
  close(alpha.stddev, want.stddev!, 'Alpha stddev');
  assert.equal({ flavor: alpha.flavor, price: alpha.price, per_price: alpha.per_price }, { flavor: null, price: null, per_price: null });
  assert.equal(
    body.groups.map((g: any) => g.site.name),
    ['=Beta, "q"', 'Alpha', 'Gamma'],
  );
  // Alpha's 20 values give [x(6), x(15)] = [55, 104], which overlaps Beta's [102, 109]: a tie. Gamma: 4 values.
  assert.equal(alpha.median_ci, [55, 104]);
  assert.equal(
    body.groups.map((g: any) => g.rank),
    [1, 1, null],
  );
});

test('GET /results:compare: rank_by=price ranks flavors priced in the currency by value for money', async () => {
  const eur = (await compare({ rank_by: 'price', currency: 'EUR' })).body;
  assert.is(eur.rank_by, 'price');
  // A: 104.5 / 2 = 52.25 in [50.5, 54]; B: 54.5 in [51, 58]: they overlap, both rank 1, B first (more per euro).
  // C is priced in USD: unranked, its value for money still shown; D and E have no price.
  assert.equal(names(eur.groups), ['b.small', 'a.large', 'd.one', '-minus', 'e.three']);
  assert.equal(
    eur.groups.map((g: any) => g.rank),
    [1, 1, null, null, null],
  );
  const c = eur.groups.find((g: any) => g.flavor.name === '-minus');
  assert.equal(
    { price: c.price, per_price: c.per_price },
    { price: { per_hour: 1, currency: 'USD' }, per_price: { median: 105.5, median_ci: [102, 109] } },
  );
  const usd = (await compare({ rank_by: 'price', currency: 'USD' })).body;
  assert.equal(
    usd.groups.map((g: any) => [g.flavor.name, g.rank]).filter(([, r]: any) => r !== null),
    [['-minus', 1]],
  );
  // Lower is better: the cost (median × price) ranks; B (54.5) before A (209), apart.
  const cost = (await compare({ rank_by: 'price', currency: 'EUR', better: 'lower' })).body;
  assert.equal(
    cost.groups.slice(0, 2).map((g: any) => [g.flavor.name, g.rank]),
    [
      ['b.small', 1],
      ['a.large', 2],
    ],
  );
  // A free flavor has no finite value per money when higher is better: per_price null, unranked.
  await seed.sql('update flavor set price_per_hour = 0 where id = ?', [flavors.B!.id]);
  try {
    const free = (await compare({ rank_by: 'price', currency: 'EUR' })).body;
    const b = free.groups.find((g: any) => g.flavor.name === 'b.small');
    assert.equal(
      { price: b.price, per_price: b.per_price, rank: b.rank },
      { price: { per_hour: 0, currency: 'EUR' }, per_price: null, rank: null },
    );
  } finally {
    await seed.sql('update flavor set price_per_hour = 1 where id = ?', [flavors.B!.id]);
  }
});

test('GET /results:compare: format=csv and Accept: text/csv; RFC 4180 escaping and the formula guard', async () => {
  const res = await compare({ format: 'csv' });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/csv; charset=utf-8/);
  const lines = res.text.split('\r\n');
  assert.is(lines.at(-1), '');
  assert.is(
    lines[0],
    'site_name,flavor_name,n,mean,stddev,min,p5,p25,median,p75,p95,max,median_ci_low,median_ci_high,mean_ci_low,mean_ci_high,rank,price_per_hour,currency,per_price_median,per_price_ci_low,per_price_ci_high,out_of_range',
  );
  assert.is(lines.length, 7); // header, five groups, the final line end
  // The site `=Beta, "q"` and the flavor `-minus`: guarded with ', quoted, quotes doubled.
  assert.ok(lines[1]!.startsWith(`"'=Beta, ""q""",'-minus,10,105.5,`), lines[1]);
  const a = lines[2]!.split(',');
  assert.equal(
    [a[0], a[1], a[2], a[8], a[12], a[13], a[16], a[17], a[18], a[19]],
    ['Alpha', 'a.large', '10', '104.5', '101', '108', '1', '2', 'EUR', '52.25'],
  );
  const d = lines[4]!.split(',');
  assert.equal([d[1], d[4], d[14], d[15], d[16], d[17], d[18]], ['d.one', '', '', '', '', '', '']);
  const accepted = await compare({}, { accept: 'text/csv' });
  assert.match(accepted.headers.get('content-type')!, 'text/csv');
  assert.match(accepted.headers.get('vary') ?? '', /\bAccept\b/i); // caches keep the formats apart
  assert.is(accepted.text, res.text);
  // An explicit format wins over Accept; */* and a browser's Accept give JSON.
  assert.match((await compare({ format: 'json' }, { accept: 'text/csv' })).headers.get('content-type')!, 'application/json');
  assert.match((await compare({}, { accept: '*/*' })).headers.get('content-type')!, 'application/json');
  assert.match(
    (await compare({}, { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' })).headers.get('content-type')!,
    'application/json',
  );
});

test('GET /results:compare: 404 unknown benchmark; 422 malformed metric, bad options, rank_by=price without currency', async () => {
  const unknown = await compare({ benchmark_id: randomUUID() });
  assertProblem(unknown, 404, 'NOT_FOUND');
  assert.match(unknown.body.detail, 'Benchmark');
  for (const metric of ['result.score', 'json.', 'json', 'json.a..b', 'json.result.', `json.${'a.'.repeat(30)}b`]) {
    const res = await compare({ metric });
    assertProblem(res, 422, 'INVALID_METRIC');
    assert.equal(res.body.errors[0].path, 'metric');
  }
  const priceless = await compare({ rank_by: 'price' });
  assertProblem(priceless, 422, 'INVALID_QUERY');
  assert.match(priceless.body.detail, 'rank_by=price needs currency');
  assertProblem(await compare({ rank_by: 'price', currency: 'EUR', group_by: 'site' }), 422, 'INVALID_QUERY');
  const invalid: Record<string, string | number>[] = [
    { confidence: 0.3 },
    { confidence: 1 },
    { min_samples: 0 },
    { better: 'sideways' },
    { group_by: 'tag' },
    { currency: 'eur' },
    { format: 'xml' },
    { sort_by: '+id' },
  ];
  for (const bad of invalid) {
    assertProblem(await compare(bad), 422, 'INVALID_QUERY');
  }
  assertProblem(await t.request('GET', '/results:compare', { query: { metric: 'json.result.score' } }), 422, 'INVALID_QUERY');
  assertProblem(await compare({ benchmark_id: 'nope' }), 422, 'INVALID_QUERY');
});

test.run();
