/**
 * The statistics of GET /results:compare computed in Node (services/compare/compare-stats.ts): against
 * known values, and as properties over any finite doubles (fast-check), extremes included.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  betterFromSchema,
  groupStatistics,
  interpolate,
  meanInterval,
  medianIntervalRank,
  medianIntervalRankEstimate,
  normalQuantile,
  PERCENTILES,
  percentilePosition,
  rankIntervals,
  studentTCdf,
  studentTQuantile,
  valuePerPrice,
  type Better,
} from '../src/services/compare/compare-stats.ts';

const close = (actual: number, expected: number, tolerance: number, label = '') =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${label} ${actual} is not within ${tolerance} of ${expected}`);

test('studentTQuantile: the table values', () => {
  close(studentTQuantile(0.975, 1), 12.706, 5e-4, 't(0.975, 1)');
  close(studentTQuantile(0.975, 10), 2.228, 5e-4, 't(0.975, 10)');
  close(studentTQuantile(0.975, 30), 2.042, 5e-4, 't(0.975, 30)');
  close(studentTQuantile(0.995, 5), 4.032, 5e-4, 't(0.995, 5)');
  close(studentTQuantile(0.95, 2), 2.92, 5e-3, 't(0.95, 2)');
  close(studentTQuantile(0.975, 1e6), 1.95996, 1e-4, 't(0.975, ∞) = z');
  close(studentTQuantile(0.025, 10), -2.228, 5e-4, 'lower tail');
  assert.is(studentTQuantile(0.5, 7), 0);
  // t with one degree of freedom is Cauchy: F(t) = 1/2 + atan(t)/π.
  close(studentTCdf(3, 1), 0.5 + Math.atan(3) / Math.PI, 1e-12, 'Cauchy CDF');
  assert.throws(() => studentTQuantile(1, 3));
});

/** 2·P(B ≤ k − 1) ≤ α with exact binomial coefficients (BigInt), the definition itself. */
function exactK(n: number, confidence: number): number {
  const alpha = 1 - confidence;
  const total = 2n ** BigInt(n);
  let coefficient = 1n;
  let cumulative = 0n;
  let k = 0;
  for (let i = 0; i < n; i++) {
    cumulative += coefficient; // C(n, i)
    if (2 * (Number(cumulative) / Number(total)) > alpha + 1e-12) break;
    k = i + 1;
    coefficient = (coefficient * BigInt(n - i)) / BigInt(i + 1);
  }
  return k;
}

test('medianIntervalRank: the order statistics of the median interval, as tabulated and as defined', () => {
  // Tabulated (e.g. Conover, Practical Nonparametric Statistics): at 95 %, n = 10 → [x(2), x(9)],
  // n = 20 → [x(6), x(15)], n = 40 → [x(14), x(27)], n = 100 → [x(40), x(61)].
  assert.is(medianIntervalRank(10, 0.95), 2);
  assert.is(medianIntervalRank(20, 0.95), 6);
  assert.is(medianIntervalRank(40, 0.95), 14);
  assert.is(medianIntervalRank(100, 0.95), 40);
  // Too few values for any interval narrower than [min, max]: k = 0.
  for (const n of [1, 2, 3, 4, 5]) assert.is(medianIntervalRank(n, 0.95), 0, `n = ${n}`);
  assert.is(medianIntervalRank(6, 0.95), 1); // 2/64 ≤ 0.05
  assert.is(medianIntervalRank(6, 0.96875), 1); // exactly on the boundary: 2·(1/64) = 1 − 0.96875
  for (const confidence of [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]) {
    for (let n = 1; n <= 300; n += 7)
      assert.is(medianIntervalRank(n, confidence), exactK(n, confidence), `n = ${n}, confidence ${confidence}`);
  }
  // Large n: near the normal approximation n/2 − z·√n/2, and few terms. Work is counted, not timed:
  // the binomial terms summed (one Math.exp each) start 10·√n below n/2, about 9,000 of them, where a
  // sum from 0 (exactK above) would take 500,000 and more.
  const exp = Math.exp;
  let terms = 0;
  Math.exp = (x: number) => {
    terms++;
    return exp(x);
  };
  let k: number;
  try {
    k = medianIntervalRank(1_000_000, 0.95);
  } finally {
    Math.exp = exp;
  }
  assert.ok(terms > 0 && terms <= 10 * Math.sqrt(1_000_000) + 10, `${terms} terms summed`);
  close(k, 500_000 - 1.96 * 500, 2, 'k(1e6)');
});

test('medianIntervalRankEstimate: within 1 of the exact rank (the statement returns ±3 around it)', () => {
  close(normalQuantile(0.975), 1.959964, 1e-6, 'z(0.975)');
  close(normalQuantile(0.9995), 3.290527, 1e-6, 'z(0.9995)');
  close(normalQuantile(0.1), -1.281552, 1e-6, 'z(0.1)');
  let worst = 0;
  for (const confidence of [0.5, 0.68, 0.8, 0.9, 0.95, 0.99, 0.999]) {
    const z = normalQuantile(1 - (1 - confidence) / 2);
    const ns = [...Array.from({ length: 3000 }, (_, i) => i + 1), ...Array.from({ length: 200 }, (_, i) => 3000 + i * 997), 1_000_000];
    for (const n of ns)
      worst = Math.max(worst, Math.abs(Math.max(0, medianIntervalRankEstimate(n, z)) - medianIntervalRank(n, confidence)));
  }
  assert.ok(worst <= 1, `worst ${worst}`);
});

test('meanInterval: mean ± t·s/√n; null below two values', () => {
  const [lo, hi] = meanInterval(10, 2, 11, 0.95)!;
  close(hi - 10, (2.228 * 2) / Math.sqrt(11), 1e-3);
  close(10 - lo, hi - 10, 1e-12);
  assert.is(meanInterval(10, null, 1, 0.95), null);
  assert.equal(meanInterval(10, 0, 5, 0.95), [10, 10]);
});

test('rankIntervals: overlapping intervals share a rank, in both directions; null stays unranked', () => {
  const intervals: ([number, number] | null)[] = [[10, 20], [15, 25], [30, 40], [0, 5], null, [21, 29]];
  // higher: [30,40] first; [21,29] is below it; [15,25] overlaps [21,29] (rank 2 as well: only [30,40] lies above);
  // [10,20]: [30,40] and [21,29] lie above → 3; [0,5]: four above → 5.
  assert.equal(rankIntervals(intervals, 'higher'), [3, 2, 1, 5, null, 2]);
  // lower: [0,5] first; [10,20] and [15,25] each have only [0,5] below → 2; [21,29]: [0,5], [10,20] → 3; [30,40]: four → 5.
  assert.equal(rankIntervals(intervals, 'lower'), [2, 2, 5, 1, null, 3]);
  // Touching bounds overlap (not entirely on one side).
  assert.equal(
    rankIntervals(
      [
        [1, 2],
        [2, 3],
      ],
      'higher',
    ),
    [1, 1],
  );
  assert.equal(rankIntervals([], 'higher'), []);
});

test('betterFromSchema: x-better on the property, through properties, $ref to $defs and array items', () => {
  const schema = {
    type: 'object',
    properties: {
      result: { $ref: '#/$defs/result' },
      runs: { type: 'array', items: { type: 'object', properties: { time: { type: 'number', 'x-better': 'lower' } } } },
      plain: { type: 'number' },
      bogus: { type: 'number', 'x-better': 'sideways' },
    },
    $defs: {
      result: { type: 'object', properties: { score: { type: 'number', 'x-better': 'higher' }, latency: { $ref: '#/$defs/latency' } } },
      latency: { type: 'number', 'x-better': 'lower' },
      loop: { $ref: '#/$defs/loop' },
    },
  };
  assert.is(betterFromSchema(schema, ['result', 'score']), 'higher');
  assert.is(betterFromSchema(schema, ['result', 'latency']), 'lower');
  assert.is(betterFromSchema(schema, ['runs', '0', 'time']), 'lower');
  assert.is(betterFromSchema(schema, ['plain']), null);
  assert.is(betterFromSchema(schema, ['bogus']), null);
  assert.is(betterFromSchema(schema, ['missing', 'x']), null);
  assert.is(betterFromSchema({ properties: { a: { $ref: '#/$defs/loop' } }, $defs: { loop: { $ref: '#/$defs/loop' } } }, ['a']), null);
  assert.is(betterFromSchema(true, ['a']), null);
  // An anchor or a malformed pointer leads nowhere (not to the root, no exception).
  const rooted = { 'x-better': 'lower', properties: { a: { $ref: '#anchor' }, b: { $ref: '#/%zz' } } };
  assert.is(betterFromSchema(rooted, ['a']), null);
  assert.is(betterFromSchema(rooted, ['b']), null);
  assert.is(
    betterFromSchema({ properties: { a: { $ref: '#/$defs/a%20b' } }, $defs: { 'a b': { 'x-better': 'higher' } } }, ['a']),
    'higher',
  );
  assert.is(betterFromSchema({ properties: { constructor: { 'x-better': 'lower' } } }, ['toString']), null);
});

// Properties over any finite doubles. The generators favour the values that broke comparisons
// (1e155, whose square overflows; ±1.7e308; the largest double; subnormals) among arbitrary ones.

const MAX = Number.MAX_VALUE;
const EXTREMES = [0, 1, -1, 1e155, -1e155, 1.7e308, -1.7e308, MAX, -MAX, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-200, 1e300, -1e300];
const anyDouble = fc.oneof(fc.constantFrom(...EXTREMES), fc.double({ noNaN: true, noDefaultInfinity: true }));
/** Where naive arithmetic cannot overflow or lose a subnormal's precision. */
const ordinaryDouble = fc.double({ min: -1e100, max: 1e100, noNaN: true }).map((v) => (Math.abs(v) < 1e-100 ? 0 : v));
const confidence = fc.double({ min: 0.5, max: 0.999, noNaN: true });
const better = fc.constantFrom<Better>('higher', 'lower');
const fraction = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const runs = { numRuns: 300 };

/** Every number in `value` (nested arrays and objects) is finite. */
function allFinite(value: unknown): boolean {
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value === 'object' && value !== null) return Object.values(value).every(allFinite);
  return true;
}
const near = (actual: number, wanted: number, scale: number) => Math.abs(actual - wanted) <= 1e-12 * scale;

test('property: interpolate stays within [lo, hi] for any finite doubles; equals lo + f·(hi − lo) where that is finite', () => {
  fc.assert(
    fc.property(anyDouble, anyDouble, fraction, (a, b, f) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      const at = interpolate(lo, hi, f);
      assert.ok(Number.isFinite(at) && lo <= at && at <= hi, `${at} from ${lo}, ${hi}, ${f}`);
      const naive = lo + f * (hi - lo);
      if (Number.isFinite(naive) && naive >= lo && naive <= hi) assert.is(at, naive); // exactly percentile_cont's
    }),
    runs,
  );
  assert.is(interpolate(-1.7e308, 1.7e308, 0.5), 0); // the naive formula gives Infinity
  assert.is(interpolate(-MAX, MAX, 0), -MAX);
});

test('property: meanInterval is null or two finite bounds around the mean, never throws; mean ± t·s/√n for ordinary values', () => {
  fc.assert(
    fc.property(anyDouble, fc.option(anyDouble.map(Math.abs)), fc.integer({ min: 1, max: 1_000_000 }), confidence, (mean, stddev, n, c) => {
      const interval = meanInterval(mean, stddev, n, c);
      if (n < 2 || stddev === null) return assert.is(interval, null);
      if (interval === null) {
        // Only when a bound lies beyond the largest double (groupStatistics names it out of range).
        const half = studentTQuantile(1 - (1 - c) / 2, n - 1) * (stddev / Math.sqrt(n));
        return assert.ok(!(Number.isFinite(mean - half) && Number.isFinite(mean + half)), `${mean} ± ${half}`);
      }
      assert.ok(allFinite(interval) && interval[0] <= mean && mean <= interval[1], JSON.stringify(interval));
    }),
    runs,
  );
  fc.assert(
    fc.property(ordinaryDouble, ordinaryDouble.map(Math.abs), fc.integer({ min: 2, max: 10_000 }), confidence, (mean, stddev, n, c) => {
      const half = (studentTQuantile(1 - (1 - c) / 2, n - 1) * stddev) / Math.sqrt(n);
      const interval = meanInterval(mean, stddev, n, c)!;
      const scale = Math.max(Math.abs(mean), half, 1e-300);
      assert.ok(near(interval[0], mean - half, scale) && near(interval[1], mean + half, scale), JSON.stringify([interval, mean, half]));
    }),
    runs,
  );
  assert.is(meanInterval(1.7e308, 1.7e308, 2, 0.95), null);
});

test('property: valuePerPrice is free, out of range or finite; the median over or times the price for ordinary values', () => {
  const price = fc.oneof(fc.constantFrom(0, 5e-324, 1e-300, 1e9), fc.double({ min: 0, max: 1e9, noNaN: true }));
  fc.assert(
    fc.property(fc.array(anyDouble, { minLength: 3, maxLength: 3 }), price, better, (three, p, b) => {
      const [lo, median, hi] = [...three].sort((x, y) => x - y) as [number, number, number];
      const per = valuePerPrice(median, [lo, hi], p, b);
      if (b === 'higher' && p === 0) return assert.is(per, 'free');
      if (per === 'free') return assert.unreachable('free only for a free flavor when higher is better');
      if (per === 'out_of_range') {
        const raw = b === 'higher' ? [median / p, lo / p, hi / p] : [median * p, lo * p, hi * p];
        return assert.ok(!raw.every(Number.isFinite), `${raw} are finite`);
      }
      assert.ok(allFinite(per), JSON.stringify(per));
    }),
    runs,
  );
  fc.assert(
    fc.property(ordinaryDouble, fc.double({ min: 1e-6, max: 1e9, noNaN: true }), better, (median, p, b) => {
      const per = valuePerPrice(median, [median - 1, median + 1], p, b);
      assert.equal(
        per,
        b === 'higher'
          ? { median: median / p, median_ci: [(median - 1) / p, (median + 1) / p] }
          : {
              median: median * p,
              median_ci: [(median - 1) * p, (median + 1) * p],
            },
      );
    }),
    runs,
  );
});

/** The GroupValues PostgreSQL would give for these values (mean and stddev: any finite, or null). */
function groupValuesOf(values: number[], mean: number, stddev: number | null, c: number, price: number | null) {
  const x = [...values].sort((p, q) => p - q);
  const n = x.length;
  const k = medianIntervalRank(n, c);
  return {
    n,
    mean,
    stddev: n > 1 ? stddev : null,
    min: x[0]!,
    max: x[n - 1]!,
    around: PERCENTILES.map((f) => {
      const { below, above } = percentilePosition(f, n);
      return [x[below]!, x[above]!] as const;
    }),
    medianCi: (k === 0 ? [x[0]!, x[n - 1]!] : [x[k - 1]!, x[n - k]!]) as [number, number],
    price,
  };
}

test('property: groupStatistics of any finite doubles: finite or null, nulls named in out_of_range, percentiles in order', () => {
  fc.assert(
    fc.property(
      fc.array(anyDouble, { minLength: 1, maxLength: 40 }),
      fc.option(anyDouble.map(Math.abs)),
      fc.option(fc.oneof(fc.constantFrom(0, 5e-324, 1e-300, 1e9), fc.double({ min: 0, max: 1e9, noNaN: true }))),
      confidence,
      better,
      (values, stddev, price, c, b) => {
        const input = groupValuesOf(values, values[0]!, stddev, c, price);
        const out = groupStatistics(input, c, b);
        assert.ok(allFinite(out), JSON.stringify(out));
        const { p5, p25, median, p75, p95 } = out;
        assert.ok(input.min <= p5 && p5 <= p25 && p25 <= median && median <= p75 && p75 <= p95 && p95 <= input.max, JSON.stringify(out));
        assert.is(out.out_of_range.includes('stddev'), input.n > 1 && input.stddev === null);
        assert.is(out.out_of_range.includes('mean_ci'), input.n > 1 && out.mean_ci === null);
        if (out.stddev === null && input.n > 1) assert.is(out.mean_ci, null);
        const free = price === 0 && b === 'higher';
        assert.is(out.out_of_range.includes('per_price'), price !== null && !free && out.per_price === null);
        if (price === null || free) assert.is(out.per_price, null);
      },
    ),
    runs,
  );
});

test('property: groupStatistics of ordinary values equals the naive computation', () => {
  fc.assert(
    fc.property(
      fc.array(ordinaryDouble, { minLength: 1, maxLength: 60 }),
      fc.double({ min: 0.01, max: 100, noNaN: true }),
      confidence,
      better,
      (values, price, c, b) => {
        const x = [...values].sort((p, q) => p - q);
        const n = x.length;
        const mean = x.reduce((s, v) => s + v, 0) / n;
        const stddev = n > 1 ? Math.sqrt(x.reduce((s, v) => s + (v - mean) ** 2, 0) / (n - 1)) : null;
        const out = groupStatistics(groupValuesOf(values, mean, stddev, c, price), c, b);
        const percentile = (f: number) => {
          const at = (n - 1) * f;
          const lo = Math.floor(at);
          return lo + 1 < n ? x[lo]! + (at - lo) * (x[lo + 1]! - x[lo]!) : x[lo]!;
        };
        const scale = Math.max(...x.map(Math.abs), 1e-300);
        PERCENTILES.forEach((f, i) => {
          const got = [out.p5, out.p25, out.median, out.p75, out.p95][i]!;
          assert.ok(near(got, percentile(f), scale), `p${f * 100}: ${got} ≠ ${percentile(f)}`);
        });
        assert.equal(out.mean_ci, meanInterval(mean, stddev, n, c));
        assert.equal(out.out_of_range, []);
        const per = b === 'higher' ? (v: number) => v / price : (v: number) => v * price;
        assert.equal(out.per_price, { median: per(out.median), median_ci: [per(out.median_ci[0]), per(out.median_ci[1])] });
      },
    ),
    runs,
  );
});

test('property: rankIntervals of any finite intervals is the definition (1 + the groups entirely better), integers', () => {
  const interval = fc.option(
    fc.tuple(anyDouble, anyDouble).map(([a, b]) => (a <= b ? [a, b] : [b, a]) as [number, number]),
    { freq: 5 },
  );
  fc.assert(
    fc.property(fc.array(interval, { maxLength: 30 }), better, (intervals, b) => {
      const ranks = rankIntervals(intervals, b);
      for (const [i, mine] of intervals.entries()) {
        const above = mine && intervals.filter((other) => other !== null && (b === 'higher' ? other[0] > mine[1] : other[1] < mine[0]));
        assert.is(ranks[i], above ? 1 + above.length : null);
      }
    }),
    runs,
  );
});

test('property: the t quantile and the median interval rank are finite for every n and confidence', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), confidence, (n, c) => {
      const k = medianIntervalRank(n, c);
      assert.ok(Number.isInteger(k) && k >= 0 && 2 * k <= n + 1, `k(${n}, ${c}) = ${k}`);
      const t = studentTQuantile(1 - (1 - c) / 2, n);
      assert.ok(Number.isFinite(t) && t > 0, `t(${c}, ${n}) = ${t}`);
    }),
    { numRuns: 100 },
  );
});

test.run();
