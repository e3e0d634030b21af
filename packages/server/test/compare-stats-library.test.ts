/**
 * The special functions of services/compare/compare-stats.ts are @stdlib's since they replaced hand-written
 * ones (Lanczos ln Γ, the incomplete beta function by continued fraction, the t quantile by
 * bisection, Acklam's normal quantile). The hand-written ones are kept here, and only here, to show
 * that no answer changed beyond its last digits: on a grid of the inputs a comparison uses, on
 * random ones (fast-check), and through what an answer shows (the mean's interval, the median's
 * interval rank).
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  meanInterval,
  medianIntervalRank,
  normalCdf,
  normalQuantile,
  studentTCdf,
  studentTQuantile,
} from '../src/services/compare/compare-stats.ts';

// ---- The hand-written functions as they were -------------------------------------------------

const LANCZOS = [
  676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

function oldLogGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - oldLogGamma(1 - x);
  const z = x - 1;
  let a = 0.99999999999980993;
  const t = z + 7.5;
  LANCZOS.forEach((c, i) => {
    a += c / (z + i + 1);
  });
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 1000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-15) break;
  }
  return h;
}

function oldRegularizedBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(oldLogGamma(a + b) - oldLogGamma(a) - oldLogGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(a, b, x)) / a;
  return 1 - (front * betaContinuedFraction(b, a, 1 - x)) / b;
}

function oldTCdf(t: number, df: number): number {
  const tail = 0.5 * oldRegularizedBeta(df / (df + t * t), df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

function oldTQuantile(p: number, df: number): number {
  if (p < 0.5) return -oldTQuantile(1 - p, df);
  if (p === 0.5) return 0;
  let lo = 0;
  let hi = 1;
  while (oldTCdf(hi, df) < p) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (oldTCdf(mid, df) < p) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Acklam's rational approximation (relative error below 1.2e-9). */
function oldNormalQuantile(p: number): number {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  if (p > 1 - 0.02425) return -oldNormalQuantile(1 - p);
  if (p < 0.02425) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** The median interval's rank as it was computed, with the Lanczos ln Γ. */
function oldIntervalRank(n: number, confidence: number): number {
  const limit = (1 - confidence) / 2 + 1e-12;
  const start = Math.max(0, Math.floor(n / 2 - 10 * Math.sqrt(n)));
  let logPmf = oldLogGamma(n + 1) - oldLogGamma(start + 1) - oldLogGamma(n - start + 1) - n * Math.LN2;
  let cdf = 0;
  let k = start;
  for (let i = start; i < n; i++) {
    cdf += Math.exp(logPmf);
    if (cdf > limit) break;
    k = i + 1;
    logPmf += Math.log(n - i) - Math.log(i + 1);
  }
  return k;
}

// ---- Old and new side by side ---------------------------------------------------------------

const relative = (a: number, b: number) => Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b), Number.MIN_VALUE);

/** The confidences an answer may use, and the degrees of freedom of groups of up to a million values. */
const CONFIDENCES = [0.5, 0.6, 0.68, 0.8, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999];
const DFS = [...Array.from({ length: 200 }, (_, i) => i + 1), 250, 500, 1000, 2000, 5000, 10_000, 100_000, 999_999];

/** Quantiles of Student's t to a double's precision (computed at 40 digits with mpmath: the incomplete beta function inverted). */
const T_TABLE: [number, number, number][] = [
  [0.975, 1, 12.706204736174705],
  [0.975, 2, 4.302652729749464],
  [0.975, 5, 2.5705818356363155],
  [0.975, 10, 2.228138851986275],
  [0.975, 30, 2.042272456301238],
  [0.975, 1000, 1.9623390808264085],
  [0.995, 4, 4.604094871349993],
  [0.9995, 3, 12.923978636687483],
  [0.75, 20, 0.6869544964488035],
  [0.8, 100000, 0.8416248279969009],
];

test('t quantile: @stdlib to 1e-12 of the tabled values, where the bisection was within 5e-9', () => {
  for (const [p, df, t] of T_TABLE) {
    assert.ok(relative(studentTQuantile(p, df), t) < 1e-12, `t(${p}, ${df}) = ${studentTQuantile(p, df)}, not ${t}`);
    assert.ok(relative(oldTQuantile(p, df), t) < 5e-9, `old t(${p}, ${df}) = ${oldTQuantile(p, df)}, not ${t}`);
  }
});

test('t quantile: @stdlib and the bisection agree to 5e-9 on every confidence and df a comparison uses', () => {
  let worst = 0;
  for (const c of CONFIDENCES) {
    for (const df of DFS) {
      const p = 1 - (1 - c) / 2;
      worst = Math.max(worst, relative(studentTQuantile(p, df), oldTQuantile(p, df)));
      worst = Math.max(worst, relative(studentTQuantile(1 - p, df), oldTQuantile(1 - p, df)));
    }
  }
  // The old one's own error (its CDF's, inverted): the tabled values above tell which is right.
  assert.ok(worst < 5e-9, `worst relative difference ${worst}`);
});

test('t quantile and CDF: random p (those of confidences 0.5 to 0.999) and df (fast-check)', () => {
  fc.assert(
    fc.property(fc.double({ min: 0.75, max: 0.9995, noNaN: true }), fc.integer({ min: 1, max: 1_000_000 }), (p, df) => {
      const q = studentTQuantile(p, df);
      assert.ok(relative(q, oldTQuantile(p, df)) < 5e-9, `t(${p}, ${df}) = ${q}, was ${oldTQuantile(p, df)}`);
      // The CDF inverts it to the last digits; the old CDF agrees to its own precision (1e-10 at a large df).
      assert.ok(Math.abs(studentTCdf(q, df) - p) < 1e-14, `F(${q}, ${df}) = ${studentTCdf(q, df)}`);
      assert.ok(Math.abs(studentTCdf(q, df) - oldTCdf(q, df)) < 1e-9);
    }),
    { numRuns: 2000 },
  );
});

test('normal quantile: @stdlib within Acklam’s 1.2e-9 of the old one, and exact where Acklam was not', () => {
  let worst = 0;
  for (let i = 1; i < 10_000; i++) {
    const p = i / 10_000;
    worst = Math.max(worst, relative(normalQuantile(p), oldNormalQuantile(p)));
    // Both round-trip through the CDF; @stdlib's to the last digits.
    assert.ok(Math.abs(normalCdf(normalQuantile(p)) - p) < 1e-15 * Math.max(1, 1 / p), `Φ(Φ⁻¹(${p}))`);
  }
  assert.ok(worst < 1.2e-9, `worst relative difference ${worst}`);
  // To a double's precision (mpmath: √2·erf⁻¹(2p − 1)).
  for (const [p, z] of [
    [0.975, 1.9599639845400543],
    [0.995, 2.5758293035489008],
    [0.9995, 3.290526731491895],
    [0.8, 0.8416212335729142],
    [0.6, 0.2533471031357998],
  ] as const)
    assert.ok(relative(normalQuantile(p), z) < 1e-14, `z(${p}) = ${normalQuantile(p)}, not ${z}`);
});

test('the median interval rank is the same with @stdlib’s ln Γ for every n to 5,000 and large ones', () => {
  const ns = [...Array.from({ length: 5000 }, (_, i) => i + 1), 10_000, 54_321, 100_000, 1_000_000];
  for (const c of [0.5, 0.8, 0.9, 0.95, 0.99, 0.999]) {
    for (const n of ns) {
      const k = medianIntervalRank(n, c);
      if (k !== oldIntervalRank(n, c)) assert.unreachable(`n = ${n}, confidence ${c}: ${k}, was ${oldIntervalRank(n, c)}`);
    }
  }
});

test('what an answer shows: the mean interval unchanged beyond its eighth digit', () => {
  fc.assert(
    fc.property(
      fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      fc.double({ min: 0, max: 1e6, noNaN: true }),
      fc.integer({ min: 2, max: 100_000 }),
      fc.constantFrom(...CONFIDENCES),
      (mean, stddev, n, c) => {
        const [lo, hi] = meanInterval(mean, stddev, n, c)!;
        const half = (oldTQuantile(1 - (1 - c) / 2, n - 1) * stddev) / Math.sqrt(n);
        assert.ok(Math.abs(hi - (mean + half)) <= 5e-9 * Math.max(1, Math.abs(mean) + half), `hi ${hi} vs ${mean + half}`);
        assert.ok(Math.abs(lo - (mean - half)) <= 5e-9 * Math.max(1, Math.abs(mean) + half), `lo ${lo} vs ${mean - half}`);
      },
    ),
    { numRuns: 2000 },
  );
});

test.run();
