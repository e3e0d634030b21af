/** The count-only statistics of GET /results:compare (services/compare-stats.ts), against known values. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  betterFromSchema,
  meanInterval,
  medianIntervalRank,
  medianIntervalRankEstimate,
  normalQuantile,
  rankIntervals,
  studentTCdf,
  studentTQuantile,
} from '../src/services/compare-stats.ts';

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
  // Large n: near the normal approximation n/2 − z·√n/2, and fast. It takes milliseconds; the sum of
  // exact binomial coefficients (exactK above) would take hours at this n. 10 s tells them apart on
  // any machine, however loaded.
  const started = performance.now();
  const k = medianIntervalRank(1_000_000, 0.95);
  assert.ok(performance.now() - started < 10_000);
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
  assert.is(betterFromSchema({ properties: { constructor: { 'x-better': 'lower' } } }, ['toString']), null);
});

test.run();
