/**
 * A group against a baseline group (GET /results:compare?baseline=…, docs/spec/CHANGES.md): with
 * x the group's n values and y the baseline's m values, all > 0 and sorted, and d the n·m
 * differences ln xᵢ − ln yⱼ,
 * - the ratio: exp of the median of d (Hodges–Lehmann on the log scale);
 * - its distribution-free interval [exp d₍ₖ₎, exp d₍ₙₘ₊₁₋ₖ₎], k = ⌊n·m/2 − z·√(n·m·(n+m+1)/12)⌋;
 * - the two-sided Mann–Whitney U p-value, normal approximation with tie correction and a
 *   continuity correction of ½.
 *
 * The k-th difference is selected without forming the n·m differences: the differences at most t
 * are counted by walking the smaller group in order (for each of its values, those of the other
 * far enough up form a suffix that only shrinks, found by galloping: O(n + m) for groups of a
 * size, O(n log(m/n)) for a small group against a large one); a range of values known to hold the
 * k-th is narrowed (halved, or cut where the counts place the k-th, in turns) until it holds few
 * enough differences to gather and sort (about twice the smaller group): at most 128 steps (64
 * halvings of the doubles between the bounds, by their order), about 10 on ordinary data. The k-th
 * difference is the very double sorting all n·m differences would give (floating-point
 * subtraction is monotone, so counting with it is consistent). O(n + m) memory: two groups of
 * 100,000 values take a fraction of a second, where the differences would be 10¹⁰ doubles. Pure
 * functions.
 */
import { normalCdf, normalQuantile } from './compare-stats.ts';

export interface VsBaseline {
  ratio: number;
  ratio_ci: [number, number] | null;
  pvalue: number;
}

/**
 * The first index from `j` on whose difference `ai − b[index]` is at most t (b.length when none):
 * those at most t follow those above it, as b is ascending. Galloping (1, 2, 4, … ahead, then
 * halving back), so that a small group against a large baseline costs O(n log(m/n)), not O(m),
 * while walking every a[i] in order still costs O(n + m) in all.
 */
function firstAtMost(ai: number, b: Float64Array, t: number, j: number): number {
  const m = b.length;
  if (j >= m || ai - b[j]! <= t) return j;
  let above = j; // ai − b[above] > t
  let step = 1;
  let at = j + 1;
  while (at < m && ai - b[at]! > t) {
    above = at;
    step *= 2;
    at = above + step;
  }
  let atMost = Math.min(at, m); // ai − b[atMost] ≤ t, or the end
  while (atMost - above > 1) {
    const mid = (above + atMost) >> 1;
    if (ai - b[mid]! > t) above = mid;
    else atMost = mid;
  }
  return atMost;
}

/** The number of differences a[i] − b[j] (as doubles) at most t; a and b sorted ascending. */
export function countAtMost(a: Float64Array, b: Float64Array, t: number): number {
  const m = b.length;
  let count = 0;
  let j = 0; // for a[i], the differences a[i] − b[j'] with j' ≥ j are at most t
  for (let i = 0; i < a.length; i++) {
    j = firstAtMost(a[i]!, b, t, j);
    if (j === m) break; // a larger a[i] has no difference at most t either
    count += m - j;
  }
  return count;
}

/** The smallest difference a[i] − b[j] greater than t (Infinity when none); a and b sorted. */
export function smallestAbove(a: Float64Array, b: Float64Array, t: number): number {
  let best = Number.POSITIVE_INFINITY;
  let j = 0;
  for (let i = 0; i < a.length; i++) {
    const ai = a[i]!;
    j = firstAtMost(ai, b, t, j);
    // b[j − 1] is the largest with a difference above t: the smallest such difference for a[i].
    if (j > 0) best = Math.min(best, ai - b[j - 1]!);
  }
  return best;
}

const view = new DataView(new ArrayBuffer(8));
const SIGN = 1n << 63n;

/** A finite double as a 64-bit integer of the same order (−0 and 0 the same). */
function orderKey(x: number): bigint {
  view.setFloat64(0, x === 0 ? 0 : x);
  const bits = view.getBigUint64(0);
  return bits & SIGN ? -(bits ^ SIGN) : bits;
}

function fromOrderKey(key: bigint): number {
  view.setBigUint64(0, key < 0n ? -key | SIGN : key);
  return view.getFloat64(0);
}

/**
 * The k-th smallest (1-based, 1 ≤ k ≤ n·m) of the differences a[i] − b[j] as doubles, without
 * forming them; a and b sorted ascending, finite, not empty. The range (lo, hi] that holds it is
 * narrowed (by value) until it holds at most `cap` differences, which are then gathered and
 * sorted; or until lo and hi are neighbouring doubles (ties), when hi is the one.
 */
export function kthDifference(a: Float64Array, b: Float64Array, k: number, cap = 64 + 2 * Math.min(a.length, b.length)): number {
  const n = a.length;
  const m = b.length;
  // Walk the smaller of the two (a − b as doubles is exactly −(b − a)): the k-th of a − b is minus
  // the (n·m + 1 − k)-th of b − a.
  if (n > m) return 0 - kthDifference(b, a, n * m + 1 - k, cap) || 0;
  // Every difference lies in [min, max]: none at most min − 1 (|min| < 1500 for logarithms of doubles).
  let lo = a[0]! - b[m - 1]! - 1;
  let hi = a[n - 1]! - b[0]!;
  let atLo = 0; // differences at most lo (fewer than k)
  let atHi = n * m; // differences at most hi (k or more)
  for (let step = 0; atHi - atLo > cap; step++) {
    // Halving the doubles between lo and hi (by their order, not their value: at most 64 times,
    // however close to 0 a mass of tied differences lies), and every other step a cut where the
    // counts say the k-th lies (as if the differences spread evenly): few steps on ordinary data.
    const keyLo = orderKey(lo);
    const keyHi = orderKey(hi);
    if (keyHi - keyLo <= 1n) return hi; // neighbours: the k-th is hi
    const guess = lo + (hi - lo) * ((k - atLo) / (atHi - atLo));
    const mid = step % 2 === 0 && guess > lo && guess < hi ? guess : fromOrderKey(keyLo + ((keyHi - keyLo) >> 1n));
    const count = countAtMost(a, b, mid);
    if (count >= k) {
      hi = mid;
      atHi = count;
    } else {
      lo = mid;
      atLo = count;
    }
  }
  // Gather the differences in (lo, hi]: for each a[i], those of the b[j] from the first at most hi
  // to the first at most lo, a range whose ends only move up as a[i] does.
  const within = new Float64Array(atHi - atLo);
  let size = 0;
  let fromJ = 0;
  let toJ = 0;
  for (let i = 0; i < n; i++) {
    const ai = a[i]!;
    fromJ = firstAtMost(ai, b, hi, fromJ);
    toJ = firstAtMost(ai, b, lo, Math.max(toJ, fromJ));
    for (let j = fromJ; j < toJ; j++) within[size++] = ai - b[j]!;
  }
  within.sort();
  return within[k - atLo - 1]!;
}

/** The Mann–Whitney p-value (two-sided, normal approximation, tie and continuity corrections) of x against y, both sorted. */
export function mannWhitneyPValue(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = x.length;
  const m = y.length;
  const total = n + m;
  // Walk the merged order a run of equal values at a time: each gets the mean of the ranks it spans.
  let rankSumX = 0;
  let ties = 0; // Σ (t³ − t) over the runs of equal values
  let i = 0;
  let j = 0;
  let rank = 0;
  while (i < n || j < m) {
    const v = j >= m || (i < n && x[i]! <= y[j]!) ? x[i]! : y[j]!;
    let inX = 0;
    let inY = 0;
    while (i < n && x[i] === v) {
      i++;
      inX++;
    }
    while (j < m && y[j] === v) {
      j++;
      inY++;
    }
    const t = inX + inY;
    rankSumX += inX * (rank + (t + 1) / 2);
    ties += t * t * t - t;
    rank += t;
  }
  const u = rankSumX - (n * (n + 1)) / 2;
  const variance = ((n * m) / 12) * (total + 1 - ties / (total * (total - 1)));
  if (!(variance > 0)) return 1; // every value equal: nothing tells the groups apart
  const z = Math.max(0, Math.abs(u - (n * m) / 2) - 0.5) / Math.sqrt(variance);
  return Math.min(1, 2 * normalCdf(-z));
}

/** The natural logarithms of the values, in their order. */
export function logarithms(values: ArrayLike<number>): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.log(values[i]!);
  return out;
}

/**
 * The ratio of x's values to y's (both sorted ascending, every value > 0, not empty), its interval
 * at `confidence` and the Mann–Whitney p-value; null when the ratio or a bound of its interval lies
 * beyond the range of a double (1e300 against 1e-300: the caller names it in `out_of_range`).
 */
export function vsBaseline(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  confidence: number,
  /** The logarithms of y, when already computed (y is the baseline of every group). */
  b = logarithms(y),
): VsBaseline | null {
  const a = logarithms(x);
  const n = a.length;
  const m = b.length;
  const nm = n * m;
  let median: number;
  if (nm % 2 === 1) median = kthDifference(a, b, (nm + 1) / 2);
  else {
    const low = kthDifference(a, b, nm / 2);
    const high = countAtMost(a, b, low) >= nm / 2 + 1 ? low : smallestAbove(a, b, low);
    median = (low + high) / 2;
  }
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const k = Math.floor(nm / 2 - z * Math.sqrt((nm * (n + m + 1)) / 12));
  const ratio = Math.exp(median);
  const ratioCi: [number, number] | null = k < 1 ? null : [Math.exp(kthDifference(a, b, k)), Math.exp(kthDifference(a, b, nm + 1 - k))];
  if (!Number.isFinite(ratio) || (ratioCi && !ratioCi.every(Number.isFinite))) return null;
  return { ratio, ratio_ci: ratioCi, pvalue: mannWhitneyPValue(x, y) };
}
