/**
 * The statistics of a group against a baseline (services/compare/compare-baseline.ts), against independent
 * computations: the Hodges–Lehmann ratio and its interval against all n·m differences formed and
 * sorted (fast-check, ties and all), the Mann–Whitney p-value against the permutation distribution
 * of U enumerated exhaustively for small groups, and two groups of 100,000 values.
 */
// test: own process: it measures its heap, which what earlier files leave to collect would grow
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  bucketsOf,
  countAtMost,
  kthDifference,
  mannWhitneyPValue,
  prepareBaseline,
  vsBaseline,
  type Baseline,
} from '../src/services/compare/compare-baseline.ts';
import { normalCdf, normalQuantile } from '../src/services/compare/compare-stats.ts';

const ascending = (a: number, b: number) => a - b;

/** x (sorted) against the baseline y (sorted), as the server compares them: the baseline prepared once. */
const against = (x: ArrayLike<number>, y: ArrayLike<number>, confidence: number) => vsBaseline(x, prepareBaseline(y), confidence);

/** The contract's definitions, with every difference formed and sorted: O(n·m). */
function bruteForce(x: number[], y: number[], confidence: number) {
  const d: number[] = [];
  for (const xi of x) for (const yj of y) d.push(Math.log(xi) - Math.log(yj));
  d.sort(ascending);
  const nm = d.length;
  const median = nm % 2 ? d[(nm - 1) / 2]! : (d[nm / 2 - 1]! + d[nm / 2]!) / 2;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const k = Math.floor(nm / 2 - z * Math.sqrt((nm * (x.length + y.length + 1)) / 12));
  return { ratio: Math.exp(median), ratio_ci: k < 1 ? null : [Math.exp(d[k - 1]!), Math.exp(d[nm - k]!)], d };
}

/** Positive values, with ties likely (a few distinct values) or not, over many magnitudes. */
const positives = (max: number) =>
  fc.oneof(
    fc.array(fc.double({ min: 1e-300, max: 1e300, noNaN: true }), { minLength: 1, maxLength: max }),
    fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: max }),
    fc.array(fc.double({ min: 90, max: 110, noNaN: true }), { minLength: 1, maxLength: max }),
  );

test('the k-th difference and the count below a value equal those of the sorted n·m differences (fast-check)', () => {
  fc.assert(
    fc.property(positives(30), positives(30), fc.nat(), (xs, ys, pick) => {
      const a = Float64Array.from(xs.sort(ascending), Math.log);
      const b = Float64Array.from(ys.sort(ascending), Math.log);
      const { d } = bruteForce(xs, ys, 0.95);
      const k = 1 + (pick % d.length);
      assert.is(kthDifference(a, b, k), d[k - 1]);
      const t = d[pick % d.length]!;
      assert.is(countAtMost(a, b, t), d.filter((v) => v <= t).length);
    }),
    { numRuns: 500 },
  );
});

test('the ratio and its interval equal the brute-force ones, at any confidence, ties and all (fast-check)', () => {
  fc.assert(
    fc.property(positives(40), positives(40), fc.constantFrom(0.5, 0.8, 0.9, 0.95, 0.99, 0.999), (xs, ys, c) => {
      xs.sort(ascending);
      ys.sort(ascending);
      const got = against(xs, ys, c);
      const want = bruteForce(xs, ys, c);
      if (!Number.isFinite(want.ratio) || (want.ratio_ci && !want.ratio_ci.every(Number.isFinite))) {
        assert.is(got, null);
        return;
      }
      assert.ok(got);
      assert.is(got.ratio, want.ratio);
      assert.equal(got.ratio_ci, want.ratio_ci);
      assert.ok(got.pvalue >= 0 && got.pvalue <= 1);
    }),
    { numRuns: 500 },
  );
});

test('a small group against a large baseline and the other way round: the same as brute force (fast-check)', () => {
  fc.assert(
    fc.property(
      positives(4),
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 100, maxLength: 400 }),
      fc.boolean(),
      (few, many, swap) => {
        const [xs, ys] = swap ? [many, few] : [few, many];
        xs.sort(ascending);
        ys.sort(ascending);
        const got = against(xs, ys, 0.9);
        const want = bruteForce(xs, ys, 0.9);
        if (!got) return assert.ok(!Number.isFinite(want.ratio) || !want.ratio_ci?.every(Number.isFinite));
        assert.is(got.ratio, want.ratio);
        assert.equal(got.ratio_ci, want.ratio_ci);
        const a = Float64Array.from(xs, Math.log);
        const b = Float64Array.from(ys, Math.log);
        for (const k of [1, Math.ceil(want.d.length / 3), want.d.length]) assert.is(kthDifference(a, b, k), want.d[k - 1]);
      },
    ),
    { numRuns: 300 },
  );
});

/**
 * The p-value from its definition, in O(n·m): U counted over every pair (½ a tie), the tie sum over
 * the runs of the pooled values sorted, and the contract's normal approximation.
 */
function directPValue(x: number[], y: number[]): number {
  const n = x.length;
  const m = y.length;
  const total = n + m;
  let u = 0;
  for (const xi of x) for (const yj of y) u += xi > yj ? 1 : xi === yj ? 0.5 : 0;
  const pooled = [...x, ...y].sort(ascending);
  let ties = 0;
  for (let i = 0; i < pooled.length; ) {
    let t = 0;
    const v = pooled[i];
    while (i < pooled.length && pooled[i] === v) {
      i++;
      t++;
    }
    ties += t * t * t - t;
  }
  const variance = ((n * m) / 12) * (total + 1 - ties / (total * (total - 1)));
  if (!(variance > 0)) return 1;
  const z = Math.max(0, Math.abs(u - (n * m) / 2) - 0.5) / Math.sqrt(variance);
  return Math.min(1, 2 * normalCdf(-z));
}

test('the Mann–Whitney p-value equals its O(n·m) definition exactly: U over every pair, ties over the pooled values (fast-check)', () => {
  fc.assert(
    fc.property(positives(40), positives(300), (xs, ys) => {
      xs.sort(ascending);
      ys.sort(ascending);
      assert.is(mannWhitneyPValue(xs, prepareBaseline(ys)), directPValue(xs, ys));
    }),
    { numRuns: 500 },
  );
});

test('the k-th difference against a prepared baseline (its ranges) equals that of the sorted n·m differences (fast-check)', () => {
  fc.assert(
    fc.property(
      positives(6),
      fc.oneof(positives(400), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 100, maxLength: 400 })),
      fc.nat(),
      (xs, ys, pick) => {
        const a = Float64Array.from(xs.sort(ascending), Math.log);
        const b = Float64Array.from(ys.sort(ascending), Math.log);
        const { d } = bruteForce(xs, ys, 0.95);
        for (const k of [1 + (pick % d.length), 1, d.length, Math.ceil(d.length / 2)]) {
          assert.is(kthDifference(a, b, k, bucketsOf(b)), d[k - 1]);
          // A cap of 0 never gathers: the narrowing alone must find it.
          assert.is(kthDifference(a, b, k, bucketsOf(b), 0), d[k - 1]);
        }
      },
    ),
    { numRuns: 400 },
  );
});

test('known cases: a constant factor, equal groups, ties throughout, too few values for an interval', () => {
  const y = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19];
  const x = y.map((v) => v * 1.35);
  const r = against(x, y, 0.95)!;
  assert.ok(Math.abs(r.ratio - 1.35) < 1e-12, `ratio ${r.ratio}`);
  assert.ok(r.ratio_ci![0] < 1.35 && r.ratio_ci![1] > 1.35, `interval ${r.ratio_ci}`);
  // Against itself: 1, p = 1 (U is exactly its mean).
  const same = against(y, y, 0.95)!;
  assert.is(same.ratio, 1);
  assert.is(same.pvalue, 1);
  // No spread within either group: ratio 2 exactly, and every x above every y.
  const flat = against([4, 4, 4, 4, 4], [2, 2, 2, 2, 2], 0.95)!;
  assert.is(flat.ratio, 2);
  assert.equal(flat.ratio_ci, [2, 2]);
  assert.ok(flat.pvalue < 0.01, `p ${flat.pvalue}`);
  const allEqual = against([3, 3, 3], [3, 3, 3, 3], 0.95)!;
  assert.is(allEqual.ratio, 1);
  assert.is(allEqual.pvalue, 1);
  // n·m = 4: k = ⌊2 − 1.96·√(4·5/12)⌋ < 1, no interval.
  assert.is(against([1, 2], [3, 4], 0.95)!.ratio_ci, null);
  // One value each: the ratio of the two.
  assert.is(against([6], [3], 0.95)!.ratio, Math.exp(Math.log(6) - Math.log(3)));
});

test('beyond a double: a ratio of 1e300 to 1e-300 is null (the caller names it); subnormal values are values', () => {
  assert.is(against([1e300, 1e300, 1e300], [1e-300, 1e-300, 1e-300], 0.95), null);
  const tiny = against([5e-324, 1e-320], [1e-310, 1e-300], 0.5)!;
  assert.ok(Number.isFinite(tiny.ratio) && tiny.ratio >= 0);
});

/** U of x against y, counted over pairs (½ a tie): the definition, independent of ranks. */
function pairU(x: number[], y: number[]): number {
  let u = 0;
  for (const xi of x) for (const yj of y) u += xi > yj ? 1 : xi === yj ? 0.5 : 0;
  return u;
}

/**
 * U of every way of splitting the pooled values into groups of n and m (the permutation
 * distribution): the sum of the chosen values' mid-ranks (counted by brute force), less n(n + 1)/2.
 */
function permutationUs(x: number[], y: number[]): number[] {
  const pooled = [...x, ...y];
  const ranks = pooled.map((v) => pooled.filter((w) => w < v).length + (pooled.filter((w) => w === v).length + 1) / 2);
  const n = x.length;
  const us: number[] = [];
  const walk = (from: number, left: number, sum: number) => {
    if (left === 0) {
      us.push(sum - (n * (n + 1)) / 2);
      return;
    }
    for (let i = from; i <= pooled.length - left; i++) walk(i + 1, left - 1, sum + ranks[i]!);
  };
  walk(0, n, 0);
  return us;
}

test('Mann–Whitney: the normal approximation of the exact permutation distribution, ties included', () => {
  fc.assert(
    fc.property(
      fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 2, maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 12 }), { minLength: 2, maxLength: 8 }),
      (xs, ys) => {
        xs.sort(ascending);
        ys.sort(ascending);
        const us = permutationUs(xs, ys);
        // The exact mean and variance of U over every split: what the tie-corrected formula must give.
        const mean = us.reduce((s, u) => s + u, 0) / us.length;
        const variance = us.reduce((s, u) => s + (u - mean) ** 2, 0) / us.length;
        const u = pairU(xs, ys);
        const want = variance > 1e-12 ? Math.min(1, 2 * normalCdf(-Math.max(0, Math.abs(u - mean) - 0.5) / Math.sqrt(variance))) : 1;
        const got = mannWhitneyPValue(xs, prepareBaseline(ys));
        assert.ok(Math.abs(got - want) < 1e-9, `p ${got}, from the permutation moments ${want}`);
      },
    ),
    { numRuns: 300 },
  );
});

test('Mann–Whitney: close to the exact permutation p-value for groups of 8 to 10 without ties', () => {
  let worst = 0;
  for (let seed = 1; seed <= 40; seed++) {
    let s = seed;
    const random = () => {
      s = (s * 16807) % 2147483647;
      return s / 2147483647;
    };
    const n = 8 + (seed % 3);
    const m = 8 + ((seed >> 1) % 3);
    const shift = (seed % 5) * 0.4;
    const xs = Array.from({ length: n }, () => random() + shift).sort(ascending);
    const ys = Array.from({ length: m }, () => random()).sort(ascending);
    const us = permutationUs(xs, ys);
    const mean = (n * m) / 2;
    const u = pairU(xs, ys);
    // Two-sided: the splits whose U lies at least as far from its mean, on either side.
    const exact = us.filter((v) => Math.abs(v - mean) >= Math.abs(u - mean)).length / us.length;
    worst = Math.max(worst, Math.abs(mannWhitneyPValue(xs, prepareBaseline(ys)) - exact));
  }
  // The continuity-corrected normal approximation of a distribution of 12,870 to 184,756 splits.
  assert.ok(worst < 0.02, `worst difference from the exact p-value ${worst}`);
});

/** A full garbage collection (node's --expose-gc, switched on here for a new context). */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** The baseline with every array a comparison reads of it counted (a proxy counts the reads of an index). */
function countedBaseline(base: Baseline): { baseline: Baseline; readonly reads: number } {
  let reads = 0;
  const counted = <T extends object>(array: T): T =>
    new Proxy(array, {
      get(target, key) {
        if (typeof key === 'string' && key !== 'length') reads++;
        const value = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const baseline: Baseline = {
    ...base,
    values: counted(base.values),
    logs: counted(base.logs),
    runValues: counted(base.runValues),
    runStarts: counted(base.runStarts),
    buckets: { ...base.buckets, starts: counted(base.buckets.starts) },
  };
  return {
    baseline,
    get reads() {
      return reads;
    },
  };
}

test('two groups of 100,000 values: selected without the 10¹⁰ differences', () => {
  const y = Array.from({ length: 100_000 }, (_, i) => 1 + i / 1000);
  const x = y.map((v) => v * 1.5);
  // Work is counted, not timed: the reads of the baseline (a proxy counts them). Every one of the
  // 10¹⁰ differences would read it 10¹⁰ times; the selection reads each value about a hundred times.
  const counted = countedBaseline(prepareBaseline(y));
  // What earlier files of the test process left behind is collected first: the growth is this call's.
  collectGarbage();
  const heap = process.memoryUsage().heapUsed;
  const r = vsBaseline(x, counted.baseline, 0.95)!;
  // The differences of a set and the same set times c are symmetric around ln c.
  assert.ok(Math.abs(r.ratio - 1.5) < 1e-9, `ratio ${r.ratio}`);
  assert.ok(r.ratio_ci![0] < 1.5 && r.ratio_ci![1] > 1.5 && r.ratio_ci![1] / r.ratio_ci![0] < 1.02, `interval ${r.ratio_ci}`);
  assert.ok(r.pvalue < 1e-100, `p ${r.pvalue}`);
  // 10¹⁰ doubles would be 80 GB; a few megabytes tell them apart.
  const grown = process.memoryUsage().heapUsed - heap;
  assert.ok(grown < 64 * 1024 * 1024, `the heap grew by ${(grown / 1048576).toFixed(1)} MB`);
  assert.ok(counted.reads < 1e8, `the baseline read ${counted.reads} times`);
});

test('a baseline of 100,000 values against small groups: each group reads O(n log m) of it, not all of it', () => {
  // Regression: the p-value walked the merged order of the group and the whole baseline, and so did
  // nothing else; 10,000 groups of 10 against 100,000 values read the baseline 10,000 times.
  // Counted, not timed: the reads of the baseline's arrays (values, logarithms, runs, ranges) per group.
  let seed = 7;
  const random = () => {
    seed = (seed * 16807) % 2147483647;
    return seed / 2147483647;
  };
  const m = 100_000;
  for (const step of [0.01, 1e-9, 1]) {
    // Rounded to a step: many ties (0.01, 1: a few thousand and a few dozen distinct values) or none.
    const round = (v: number) => Math.round(v / step) * step;
    const y = Array.from({ length: m }, () => round(100 + 20 * random())).sort(ascending);
    const counted = countedBaseline(prepareBaseline(y));
    for (const n of [5, 10, 40]) {
      for (let g = 0; g < 6; g++) {
        const x = Array.from({ length: n }, () => round(90 + g * 5 + 20 * random())).sort(ascending);
        const before = counted.reads;
        const got = vsBaseline(x, counted.baseline, 0.95);
        const reads = counted.reads - before;
        // n·log₂(m) is 17n; a few dozen counts of n searches each, a few reads per search.
        assert.ok(reads < 60 * n * Math.log2(m), `n = ${n}, step ${step}: ${reads} reads of the baseline for one group`);
        assert.ok(reads < m / 4, `n = ${n}, step ${step}: ${reads} reads, a good part of the baseline's ${m} values`);
        // And the answer is the definition's, at every size: against brute force on a sample.
        if (g === 0 && n === 5) {
          const want = bruteForce(x, y, 0.95);
          assert.is(got!.ratio, want.ratio);
          assert.equal(got!.ratio_ci, want.ratio_ci);
          assert.is(got!.pvalue, directPValue(x, y));
        }
      }
    }
  }
});

test.run();
