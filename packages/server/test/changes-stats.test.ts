/**
 * The segmentation of GET /results:changes (services/changes/changes-stats.ts), checked against
 * statistics recomputed here another way: the E-divisive statistic from its definition (every
 * pair), Welch's t and degrees of freedom by hand, and the p-value by numerical integration of
 * Student's t density. Series with known steps are found at the right place, in one window and
 * across windows; flat and barely changed series give nothing; extreme values never fail.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bestSplit,
  changePoints,
  MAX_SPLITS_PER_WINDOW,
  moments,
  scaled,
  summarise,
  welch,
  windowLength,
} from '../src/services/changes/changes-stats.ts';

const OPTIONS = { maxPvalue: 0.001, minMagnitude: 0.02, minSize: 5 };

/** A seeded generator (mulberry32) and normal deviates from it (Box–Muller): the same series every run. */
function generator(seed: number) {
  let a = seed;
  const uniform = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/** A series of `levels` ([length, mean] pieces) with normal noise of `sd`. */
function steps(levels: [number, number][], sd: number, seed = 1): number[] {
  const normal = generator(seed);
  return levels.flatMap(([length, mean]) => Array.from({ length }, () => mean + sd * normal()));
}

/** The E-divisive statistic (α = 1) of the split at k, from its definition: every pair. */
function divergence(x: number[], k: number): number {
  const left = x.slice(0, k);
  const right = x.slice(k);
  let between = 0;
  for (const a of left) for (const b of right) between += Math.abs(a - b);
  const within = (xs: number[]) => {
    let sum = 0;
    for (let i = 0; i < xs.length; i++) for (let j = i + 1; j < xs.length; j++) sum += Math.abs(xs[i]! - xs[j]!);
    return sum / ((xs.length * (xs.length - 1)) / 2);
  };
  const n = left.length;
  const m = right.length;
  return ((n * m) / (n + m)) * ((2 * between) / (n * m) - within(left) - within(right));
}

/** ln Γ(x), Lanczos (g = 7, 9 terms). */
function lnGamma(x: number): number {
  const c = [
    0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
    -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x);
  const z = x - 1;
  let a = c[0]!;
  const t = z + 7.5;
  for (let i = 1; i < 9; i++) a += c[i]! / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** Two-sided p-value of t with df degrees of freedom: 2 ∫_|t|^∞ of the density, by Simpson's rule after x = |t| / s. */
function integratedPvalue(t: number, df: number): number {
  const logC = lnGamma((df + 1) / 2) - lnGamma(df / 2) - 0.5 * Math.log(df * Math.PI);
  const density = (x: number) => Math.exp(logC - ((df + 1) / 2) * Math.log1p((x * x) / df));
  const a = Math.abs(t);
  const f = (s: number) => (s === 0 ? 0 : (density(a / s) * a) / (s * s));
  const steps = 20_000;
  const h = 1 / steps;
  let sum = f(0) + f(1);
  for (let i = 1; i < steps; i++) sum += (i % 2 ? 4 : 2) * f(i * h);
  return (2 * sum * h) / 3;
}

/** Welch's t and degrees of freedom from their textbook formulas. */
function handWelch(x: number[], y: number[]) {
  const mean = (v: number[]) => v.reduce((s, a) => s + a, 0) / v.length;
  const variance = (v: number[]) => v.reduce((s, a) => s + (a - mean(v)) ** 2, 0) / (v.length - 1);
  const a = variance(x) / x.length;
  const b = variance(y) / y.length;
  return { t: (mean(y) - mean(x)) / Math.sqrt(a + b), df: (a + b) ** 2 / (a ** 2 / (x.length - 1) + b ** 2 / (y.length - 1)) };
}

const close = (actual: number, expected: number, relative: number, label: string) =>
  assert.ok(Math.abs(actual - expected) <= relative * Math.abs(expected), `${label}: ${actual} is not within ${relative} of ${expected}`);

test('bestSplit: the split the E-divisive statistic, computed pair by pair, puts highest (any series, fast-check)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 4, maxLength: 60 }),
      fc.integer({ min: 2, max: 6 }),
      (ints, minSize) => {
        fc.pre(ints.length >= 2 * minSize);
        const x = ints.map((v, i) => v + (i % 7) / 10);
        const k = bestSplit(scaled(x), 0, x.length, minSize);
        assert.ok(k >= minSize && k <= x.length - minSize, `split ${k} leaves minSize on both sides`);
        let best = Number.NEGATIVE_INFINITY;
        for (let j = minSize; j <= x.length - minSize; j++) best = Math.max(best, divergence(x, j));
        const chosen = divergence(x, k);
        assert.ok(chosen >= best - 1e-9 * Math.max(1, Math.abs(best)), `split ${k}: ${chosen} < the best ${best}`);
      },
    ),
    { numRuns: 300, seed: 28 },
  );
});

test("welch: Welch's t and degrees of freedom as by hand; the p-value as by integrating Student's t density", () => {
  const cases: [number[], number[]][] = [
    [steps([[12, 100]], 2, 3), steps([[9, 98]], 4, 4)],
    [steps([[40, 10]], 1, 5), steps([[6, 10.9]], 0.5, 6)],
    [
      [1, 2, 3, 4, 5],
      [3, 5, 7, 9, 11, 13],
    ],
  ];
  for (const [x, y] of cases) {
    const got = welch(moments(x, 0, x.length), moments(y, 0, y.length));
    const hand = handWelch(x, y);
    close(got.t, hand.t, 1e-12, 't');
    close(got.df, hand.df, 1e-12, 'df');
    close(got.pvalue, integratedPvalue(hand.t, hand.df), 1e-7, `p (t = ${hand.t.toFixed(3)}, df = ${hand.df.toFixed(2)})`);
  }
  // Both sides constant: certain when they differ, nothing when they are equal.
  assert.equal(welch({ n: 5, mean: 1, m2: 0 }, { n: 5, mean: 2, m2: 0 }).pvalue, 0);
  assert.equal(welch({ n: 5, mean: 1, m2: 0 }, { n: 5, mean: 1, m2: 0 }).pvalue, 1);
});

test('changePoints: one step is found at its first point', () => {
  assert.equal(
    changePoints(
      steps(
        [
          [120, 100],
          [80, 85],
        ],
        2,
      ),
      OPTIONS,
    ),
    [120],
  );
  assert.equal(
    changePoints(
      steps(
        [
          [7, 100],
          [40, 120],
        ],
        2,
        9,
      ),
      OPTIONS,
    ),
    [7],
  );
});

test('changePoints: several steps in one window, and in a series of many windows (steps on and beside window edges)', () => {
  assert.equal(
    changePoints(
      steps(
        [
          [60, 100],
          [60, 90],
          [60, 95],
          [60, 80],
        ],
        1.5,
        2,
      ),
      OPTIONS,
    ),
    [60, 120, 180],
  );
  const window = windowLength(OPTIONS.minSize);
  const at = [window, window + (3 * window) / 4, 2 * window + 301, 5000];
  const long = steps(
    [
      [at[0]!, 100],
      [at[1]! - at[0]!, 90],
      [at[2]! - at[1]!, 95],
      [at[3]! - at[2]!, 88],
      [2000, 100],
    ],
    2,
    11,
  );
  assert.equal(changePoints(long, OPTIONS), at);
});

test('changePoints: flat noise, a change below min_magnitude and one that is not significant find nothing', () => {
  assert.equal(changePoints(steps([[3000, 100]], 2, 12), OPTIONS), []);
  // 1 % lower, very significant (p far below 0.001), but less than the 2 % asked for.
  const slight = steps(
    [
      [400, 100],
      [400, 99],
    ],
    0.2,
    13,
  );
  assert.ok(welch(moments(slight, 0, 400), moments(slight, 400, 800)).pvalue < 1e-20);
  assert.equal(changePoints(slight, OPTIONS), []);
  assert.equal(changePoints(slight, { ...OPTIONS, minMagnitude: 0.005 }), [400]);
  // 3 % lower in noise of 20 %: large enough, but no evidence at this size.
  assert.equal(
    changePoints(
      steps(
        [
          [20, 100],
          [20, 97],
        ],
        20,
        14,
      ),
      OPTIONS,
    ),
    [],
  );
});

test('changePoints: constant series, constant steps, and fewer than 2 × min_size points', () => {
  assert.equal(changePoints(Array(100).fill(7), OPTIONS), []);
  // n·v / n is not always v: equal values must still be one segment with no spread.
  for (const v of [0.1, 1 / 3, 1.7e308, 5e-324, -2.2e-308]) {
    assert.equal(changePoints(Array(37).fill(v), { ...OPTIONS, minMagnitude: 0 }), [], String(v));
    assert.equal(summarise(Array(37).fill(v), []).segments[0]!, { from: 0, to: 37, n: 37, mean: v, median: v, stddev: 0 });
  }
  assert.equal(changePoints([...Array(30).fill(7), ...Array(30).fill(8)], OPTIONS), [30]);
  assert.equal(changePoints([1, 1, 1, 1, 9, 9, 9, 9, 9], OPTIONS), []);
  assert.equal(changePoints([], OPTIONS), []);
});

test('changePoints and summarise: extreme values (±1.7e308, 5e-324) give finite answers', () => {
  const max = Number.MAX_VALUE;
  const series = [
    [...Array(20).fill(-max), ...Array(20).fill(max)],
    [...Array(20).fill(5e-324), ...Array(20).fill(0)],
    [...Array(20).fill(max), ...Array(20).fill(5e-324)],
    Array.from({ length: 40 }, (_, i) => (i % 2 ? max : -max)),
  ];
  for (const values of series) {
    const points = changePoints(values, OPTIONS);
    const { segments, changes } = summarise(values, points);
    const text = JSON.stringify({ segments, changes });
    assert.not.match(text, /NaN|Infinity/, text);
    for (const s of segments) assert.ok(Number.isFinite(s.mean) && Number.isFinite(s.median), text);
    for (const c of changes) assert.ok(c.pvalue >= 0 && c.pvalue <= 1, text);
  }
  assert.equal(changePoints(series[0]!, OPTIONS), [20]);
  const spread = summarise(series[0]!, []).segments[0]!;
  assert.is(spread.stddev, null, 'a standard deviation beyond the largest double is null');
  assert.is(spread.mean, 0);
  assert.equal(summarise(series[1]!, [20]).changes[0]!.magnitude, -1);
});

test('changePoints: any finite doubles never fail and give positions in order (fast-check)', () => {
  const double = fc.oneof(
    fc.constantFrom(Number.MAX_VALUE, -Number.MAX_VALUE, 5e-324, -5e-324, 0, 1, 1 + 2 ** -52),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
  fc.assert(
    fc.property(fc.array(double, { minLength: 1, maxLength: 80 }), fc.integer({ min: 2, max: 8 }), (values, minSize) => {
      const points = changePoints(values, { ...OPTIONS, minSize });
      const bounds = [0, ...points, values.length];
      if (points.length) {
        for (let i = 1; i < bounds.length; i++) assert.ok(bounds[i]! - bounds[i - 1]! >= minSize, `segments of minSize: ${points}`);
      }
      assert.not.match(JSON.stringify(summarise(values, points)), /NaN|Infinity|null,"median"/);
    }),
    { numRuns: 300, seed: 28 },
  );
});

test('changePoints: the same series gives the same answer; a window keeps a bounded number of splits', () => {
  const series = steps(
    [
      [500, 100],
      [700, 110],
      [300, 90],
    ],
    3,
    15,
  );
  assert.equal(changePoints(series, OPTIONS), changePoints([...series], OPTIONS));
  // A saw of period 10 (a "change" every 5 points): the work stays bounded, and the answer is still segments of minSize.
  const saw = Array.from({ length: 4000 }, (_, i) => (Math.floor(i / 5) % 2 ? 100 : 0));
  const points = changePoints(saw, OPTIONS);
  assert.ok(points.length > 0 && points.length <= (2 * MAX_SPLITS_PER_WINDOW * saw.length) / windowLength(5), String(points.length));
});

test.run();
