/**
 * GET /results:compare?baseline=… against a real database: every group's `vs_baseline` equals the
 * contract's definitions computed here from the inserted numbers (all n·m differences formed and
 * sorted, U counted over pairs), the null rules (the baseline itself, too few values, values ≤ 0,
 * a ratio beyond a double), by flavor and by site, the 422s, CSV, SVG, and the remembered answers
 * keyed with the baseline.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { CompareCache } from '../src/services/compare/compare-cache.ts';
import { compareResults, type CompareParams } from '../src/services/compare/compare.ts';
import { normalCdf, normalQuantile } from '../src/services/compare/compare-stats.ts';
import { countStatements } from './support/statements.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
const flavors: Record<string, { id: string; site_id: string }> = {};
const sites: Record<string, string> = {};

/** Deterministic values around `center`, with ties (rounded to a step). */
const around = (center: number, n: number, spread: number, step = 1) =>
  Array.from({ length: n }, (_, i) => Math.round((center + spread * Math.sin(i * 1.7 + center)) / step) * step);

const VALUES: Record<string, number[]> = {
  base: around(100, 30, 8),
  fast: around(135, 40, 10),
  slow: around(80, 25, 6, 0.5),
  same: around(100, 12, 8),
  few: [120, 121, 122],
  zero: [0, 90, 95, 100, 105, 110],
  negative: [-5, 90, 95, 100, 105, 110],
  tiny: [1e-300, 2e-300, 3e-300, 4e-300, 5e-300],
  huge: [1e300, 2e300, 3e300, 4e300, 5e300, 6e300],
};
/** Sites: base, fast, few and tiny at Alpha; the others at Beta (pooled by site: Beta holds a 0 and a −5). */
const SITE_OF = (key: string) => (['base', 'fast', 'few', 'tiny'].includes(key) ? 'Alpha' : 'Beta');

test.before(async () => {
  t = await startTestServer({}, 'compare_baseline');
  seed = await createSeeder(t);
  benchmarkId = (await seed.benchmark({ schema: { type: 'object' } })).id;
  for (const name of ['Alpha', 'Beta']) sites[name] = (await seed.site({ name })).id;
  for (const key of Object.keys(VALUES)) {
    const f = await seed.flavor(sites[SITE_OF(key)]!, { name: key });
    flavors[key] = { id: f.id, site_id: f.site_id };
  }
  await seed.results(
    Object.entries(VALUES).flatMap(([key, values]) =>
      values.map((score, i) => ({
        benchmark_id: benchmarkId,
        flavor_id: flavors[key]!.id,
        site_id: flavors[key]!.site_id,
        json: { score },
        execution_datetime: new Date(Date.UTC(2025, 0, 1, 0, i)),
      })),
    ),
  );
});
test.after(async () => {
  await t.close();
});

const compare = (query: Record<string, string | number | undefined>) =>
  t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score', ...query } });

/** The contract's definitions, from the numbers themselves: every difference formed and sorted, U over pairs. */
function expected(x: number[], y: number[], confidence: number) {
  const d = x.flatMap((xi) => y.map((yj) => Math.log(xi) - Math.log(yj))).sort((p, q) => p - q);
  const nm = d.length;
  const median = nm % 2 ? d[(nm - 1) / 2]! : (d[nm / 2 - 1]! + d[nm / 2]!) / 2;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const k = Math.floor(nm / 2 - z * Math.sqrt((nm * (x.length + y.length + 1)) / 12));
  let u = 0;
  for (const xi of x) for (const yj of y) u += xi > yj ? 1 : xi === yj ? 0.5 : 0;
  const counts = new Map<number, number>();
  for (const v of [...x, ...y]) counts.set(v, (counts.get(v) ?? 0) + 1);
  const ties = [...counts.values()].reduce((s, c) => s + c ** 3 - c, 0);
  const total = x.length + y.length;
  const sigma = Math.sqrt(((x.length * y.length) / 12) * (total + 1 - ties / (total * (total - 1))));
  const pvalue = Math.min(1, 2 * normalCdf(-Math.max(0, Math.abs(u - nm / 2) - 0.5) / sigma));
  return { ratio: Math.exp(median), ratio_ci: k < 1 ? null : [Math.exp(d[k - 1]!), Math.exp(d[nm - k]!)], pvalue };
}

const close = (actual: number, wanted: number, label: string) =>
  assert.ok(Math.abs(actual - wanted) <= 1e-12 * Math.abs(wanted), `${label}: ${actual} ≠ ${wanted}`);

const byName = (groups: any[]) => new Map<string, any>(groups.map((g) => [g.flavor?.name ?? g.site.name, g]));

test('baseline=<flavor>: vs_baseline of every group as the contract defines it; null rules; ranks and order unchanged', async () => {
  for (const confidence of [0.95, 0.8]) {
    const plain = await compare({ confidence });
    const res = await compare({ baseline: flavors.base!.id, confidence });
    assert.is(res.status, 200, res.text);
    assert.is(res.body.baseline, flavors.base!.id);
    assert.is(plain.body.baseline, undefined);
    assert.ok(plain.body.groups.every((g: any) => !('vs_baseline' in g)));
    // The baseline changes nothing else: same groups, same order, same ranks and statistics.
    assert.equal(
      res.body.groups.map(({ vs_baseline: _, ...g }: any) => g),
      plain.body.groups,
    );
    const groups = byName(res.body.groups);
    for (const key of ['fast', 'slow', 'same']) {
      const want = expected(VALUES[key]!, VALUES.base!, confidence);
      const got = groups.get(key).vs_baseline;
      close(got.ratio, want.ratio, `${key} ratio`);
      close(got.ratio_ci[0], want.ratio_ci![0]!, `${key} low`);
      close(got.ratio_ci[1], want.ratio_ci![1]!, `${key} high`);
      close(got.pvalue, want.pvalue, `${key} p`);
    }
    assert.ok(groups.get('fast').vs_baseline.ratio > 1.2 && groups.get('fast').vs_baseline.pvalue < 1e-6);
    assert.ok(groups.get('slow').vs_baseline.ratio < 0.9);
    assert.ok(groups.get('same').vs_baseline.pvalue > 0.05, 'the same values, fewer of them: no difference');
    // Null: the baseline itself, fewer than min_samples, a value ≤ 0; the ratio beyond a double is not reached here.
    for (const key of ['base', 'few', 'zero', 'negative']) assert.is(groups.get(key).vs_baseline, null, key);
    assert.ok(groups.get('huge').vs_baseline.ratio > 1e297);
    assert.ok(groups.get('tiny').vs_baseline.ratio < 1e-300);
  }
  // min_samples counts on both sides: at 13, `same` (12 values) has no ratio; at 31, none has (base has 30).
  assert.is(byName((await compare({ baseline: flavors.base!.id, min_samples: 13 })).body.groups).get('same').vs_baseline, null);
  const strict = await compare({ baseline: flavors.base!.id, min_samples: 31 });
  assert.ok(strict.body.groups.every((g: any) => g.vs_baseline === null));
  // An upper-case id names the same flavor.
  const upper = await compare({ baseline: flavors.base!.id.toUpperCase() });
  assert.is(upper.status, 200);
  assert.is(
    byName(upper.body.groups).get('fast').vs_baseline.ratio,
    byName((await compare({ baseline: flavors.base!.id })).body.groups).get('fast').vs_baseline.ratio,
  );
});

test('a ratio beyond the largest double is null and named in out_of_range, never an error', async () => {
  const res = await compare({ baseline: flavors.tiny!.id });
  assert.is(res.status, 200, res.text);
  const groups = byName(res.body.groups);
  // 1e300 / 1e-300 = 1e600: beyond a double.
  assert.is(groups.get('huge').vs_baseline, null);
  assert.equal(groups.get('huge').out_of_range, ['vs_baseline']);
  const fast = groups.get('fast');
  close(fast.vs_baseline.ratio, expected(VALUES.fast!, VALUES.tiny!, 0.95).ratio, 'fast against tiny');
  assert.equal(fast.out_of_range, []);
});

test('baseline=<site> with group_by=site: the pooled values of each site; a site holding a 0 has no ratio', async () => {
  const res = await compare({ group_by: 'site', baseline: sites.Alpha! });
  assert.is(res.status, 200, res.text);
  const groups = byName(res.body.groups);
  assert.is(groups.get('Alpha').vs_baseline, null);
  assert.is(groups.get('Beta').vs_baseline, null); // Beta pools `zero` and `negative`
  const filtered = await compare({ group_by: 'site', baseline: sites.Alpha!, filters: 'score > 0' });
  assert.is(filtered.status, 200, filtered.text);
  const pooled = (site: string) =>
    Object.entries(VALUES)
      .filter(([key]) => SITE_OF(key) === site)
      .flatMap(([, v]) => v)
      .filter((v) => v > 0);
  const want = expected(pooled('Beta'), pooled('Alpha'), 0.95);
  const got = byName(filtered.body.groups).get('Beta').vs_baseline;
  close(got.ratio, want.ratio, 'Beta ratio');
  close(got.pvalue, want.pvalue, 'Beta p');
});

test('422 when the baseline is not among the groups: unknown, a site while grouping by flavor, filtered out, not a uuid', async () => {
  for (const [query, path] of [
    [{ baseline: randomUUID() }, 'baseline'],
    [{ baseline: sites.Alpha! }, 'baseline'],
    [{ baseline: flavors.base!.id, group_by: 'site' }, 'baseline'],
    [{ baseline: flavors.base!.id, flavor_id: flavors.fast!.id }, 'baseline'],
  ] as const) {
    const res = await compare(query);
    assertProblem(res, 422, 'INVALID_QUERY');
    assert.match(res.body.detail, 'is not among the groups');
    assert.equal(res.body.errors[0].path, path);
  }
  assertProblem(await compare({ baseline: flavors.base!.id, group_by: 'site' }), 422, 'INVALID_QUERY');
  const malformed = await compare({ baseline: 'base' });
  assertProblem(malformed, 422, 'INVALID_QUERY');
  // Every format answers the same problem.
  assertProblem(await compare({ baseline: randomUUID(), format: 'csv' }), 422, 'INVALID_QUERY');
});

test('CSV gains ratio, ratio_ci_low, ratio_ci_high, ratio_pvalue with a baseline (empty where null); the SVG marks it', async () => {
  const plain = await compare({ format: 'csv' });
  assert.ok(plain.text.split('\r\n')[0]!.endsWith(',out_of_range'));
  const res = await compare({ format: 'csv', baseline: flavors.base!.id });
  assert.is(res.status, 200);
  const [header, ...rows] = res.text.split('\r\n');
  const columns = header!.split(',');
  assert.equal(columns.slice(-5), ['out_of_range', 'ratio', 'ratio_ci_low', 'ratio_ci_high', 'ratio_pvalue']);
  const json = byName((await compare({ baseline: flavors.base!.id })).body.groups);
  const cells = new Map(rows.filter(Boolean).map((r) => [r.split(',')[1], r.split(',')]));
  const fast = cells.get('fast')!;
  const v = json.get('fast').vs_baseline;
  assert.equal(fast.slice(-4).map(Number), [v.ratio, v.ratio_ci[0], v.ratio_ci[1], v.pvalue]);
  assert.equal(cells.get('base')!.slice(-4), ['', '', '', '']);
  assert.equal(cells.get('few')!.slice(-4), ['', '', '', '']);

  const svg = await compare({ format: 'svg', baseline: flavors.base!.id });
  assert.is(svg.status, 200);
  assert.match(svg.text, /<g class="row baseline"[^>]*>/);
  assert.is(svg.text.match(/class="row baseline"/g)!.length, 1);
  assert.match(svg.text, /stroke-dasharray/); // the baseline's median across the plot
  assert.match(svg.text, /×/); // the ratios in the labels
  assert.not.match((await compare({ format: 'svg' })).text, /baseline/);
});

/** Counts the comparison statements the server sends (the statistics statement, one per read). */
const countCompareStatements = () => countStatements(t, 'sum(s.matched) over ()');

test('what a comparison read is shared at every confidence, direction and ranking: no statement, the same answers as computed afresh', async () => {
  const cache = new CompareCache({ minMatched: 0, ttlMs: 60_000 });
  const fork = () => t.server.context.orm.em.fork();
  const query = { benchmark_id: benchmarkId, metric: 'json.score', baseline: flavors.base!.id } as CompareParams;
  const statements = countCompareStatements();
  try {
    await compareResults(fork(), { ...query, confidence: 0.95 }, { cache });
    assert.is(statements.sent, 1);
    const variants: Partial<CompareParams>[] = [
      { confidence: 0.5 },
      { confidence: 0.999 },
      { confidence: 0.8123, better: 'lower' },
      { rank_by: 'price', currency: 'EUR' },
      { format: 'csv', confidence: 0.9 },
    ];
    for (const variant of variants) {
      const before = statements.sent;
      const remembered = await compareResults(fork(), { ...query, ...variant }, { cache });
      assert.is(statements.sent, before, `${JSON.stringify(variant)}: answered from what was read`);
      const fresh = await compareResults(fork(), { ...query, ...variant });
      assert.is(statements.sent, before + 1);
      assert.equal(remembered.answer, fresh.answer, JSON.stringify(variant));
    }
    // What the read depends on: the baseline, min_samples with a baseline (which groups' values are read), the filters.
    for (const other of [{ baseline: flavors.fast!.id }, { min_samples: 6 }, { site_id: sites.Alpha }, { baseline: undefined }]) {
      const before = statements.sent;
      await compareResults(fork(), { ...query, ...other }, { cache });
      assert.is(statements.sent, before + 1, `${JSON.stringify(other)}: read anew`);
    }
    cache.invalidate();
    const before = statements.sent;
    await compareResults(fork(), { ...query, confidence: 0.7 }, { cache });
    assert.is(statements.sent, before + 1, 'forgotten at a write');
  } finally {
    statements.stop();
  }
});

test('remembered comparisons are keyed with the baseline', async () => {
  const cache = new CompareCache({ minMatched: 0, ttlMs: 60_000 });
  let computed = 0;
  const compute = async () => {
    computed++;
    return { answer: { matched: 1 } as never, benchmarkName: 'b' };
  };
  const query = { benchmark_id: benchmarkId, metric: 'json.score' } as CompareParams;
  await cache.answer(query, compute);
  await cache.answer({ ...query, baseline: flavors.base!.id }, compute);
  await cache.answer({ ...query, baseline: flavors.fast!.id }, compute);
  assert.is(computed, 3);
  await cache.answer({ ...query, baseline: flavors.base!.id, format: 'csv' }, compute);
  await cache.answer(query, compute);
  assert.is(computed, 3);
});

test.run();
