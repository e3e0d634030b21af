/**
 * A group against a baseline group (GET /results:compare?baseline=…, docs/spec/CHANGES.md): with
 * x the group's n values and y the baseline's m values, all > 0 and sorted, and d the n·m
 * differences ln xᵢ − ln yⱼ,
 * - the ratio: exp of the median of d (Hodges–Lehmann on the log scale);
 * - its distribution-free interval [exp d₍ₖ₎, exp d₍ₙₘ₊₁₋ₖ₎], k = ⌊n·m/2 − z·√(n·m·(n+m+1)/12)⌋;
 * - the two-sided Mann–Whitney U p-value, normal approximation with tie correction and a
 *   continuity correction of ½.
 *
 * One baseline is compared with every group of an answer (thousands of them, each maybe a handful of
 * values, against a baseline of 100,000): what depends on the baseline alone is prepared once per
 * request (`prepareBaseline`: its values sorted, their logarithms, its runs of equal values and their
 * tie sum, and an index of where its logarithms lie), and what each group costs grows with its own
 * size n and only with the logarithm of the baseline's m: nothing per group reads the whole baseline.
 * - U and the tie correction, O(n log m), a run of equal values of the group at a time
 *   (`mannWhitneyPValue`).
 * - The k-th difference, selected without forming the n·m differences (`kthDifference`): counts of
 *   the differences at most t narrow a range that holds it, about 7 steps on ordinary data, at most
 *   a few hundred whatever the data. It is the very double sorting all n·m differences would give
 *   (floating-point subtraction is monotone, so counting with it is consistent). O(n + m) memory:
 *   two groups of 100,000 values take a fraction of a second, where the differences would be 10¹⁰ doubles.
 * - What does not depend on the confidence (the ratio, the p-value: `versus`) is apart from what
 *   does (the interval: `ratioInterval`), so that a comparison remembered at one confidence answers
 *   at another for the price of the intervals alone (compare-cache.ts).
 *
 * Pure functions; the answers are exactly those of the definitions (the tests compare them with every
 * difference formed, and with U counted over every pair).
 */
import { normalCdf, normalQuantile } from './compare-stats.ts';

export interface VsBaseline {
  ratio: number;
  ratio_ci: [number, number] | null;
  pvalue: number;
}

/** What every group's comparison reads of the baseline, prepared once (`prepareBaseline`). */
export interface Baseline {
  /** The m values, ascending, all > 0. */
  readonly values: Float64Array;
  /** Their natural logarithms, in the same order. */
  readonly logs: Float64Array;
  /** The distinct values, ascending (one per run of equal values). */
  readonly runValues: Float64Array;
  /** Where each run begins in `values`, and m after the last: run r is values[runStarts[r] … runStarts[r + 1]). */
  readonly runStarts: Int32Array;
  /** Σ (t³ − t) over the runs (t their lengths): the baseline's share of the tie correction. */
  readonly ties: number;
  /** The ranges of the logarithms. */
  readonly buckets: Buckets;
}

/** The natural logarithms of the values, in their order. */
export function logarithms(values: ArrayLike<number>): Float64Array {
  const out = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) out[i] = Math.log(values[i]!);
  return out;
}

/**
 * Where the values of a sorted array fall among as many equal ranges between its first and its
 * last: `starts[q]` is the first index in range q or above (`starts[size]` the length). Where the
 * first value at least v lies is then known to within the values of one range, O(1), instead of
 * O(log m) by halving: what makes a count against a large baseline cost O(n), not O(n log m).
 */
export interface Buckets {
  readonly low: number;
  /** Ranges per unit of value (0 when every value is the same). */
  readonly scale: number;
  readonly size: number;
  readonly starts: Int32Array;
}

/** The range of v (the first for any v below the first value, the last above the last value). */
function bucketOf(buckets: Buckets, v: number): number {
  const q = Math.floor((v - buckets.low) * buckets.scale);
  return q > 0 ? (q < buckets.size ? q : buckets.size - 1) : 0;
}

/** The ranges of sorted, finite `xs` (not empty). A value's range only grows with the value (rounding is monotone). */
export function bucketsOf(xs: Float64Array): Buckets {
  const m = xs.length;
  const size = m;
  const low = xs[0]!;
  const span = xs[m - 1]! - low;
  const buckets = { low, scale: span > 0 ? size / span : 0, size, starts: new Int32Array(size + 1) };
  let j = 0;
  for (let q = 0; q < size; q++) {
    while (j < m && bucketOf(buckets, xs[j]!) < q) j++;
    buckets.starts[q] = j;
  }
  buckets.starts[size] = m;
  return buckets;
}

/** The baseline's values (sorted ascending, every one > 0, not empty), prepared for any number of groups: O(m). */
export function prepareBaseline(y: ArrayLike<number>): Baseline {
  const values = Float64Array.from(y);
  const m = values.length;
  const starts: number[] = [];
  const distinct: number[] = [];
  let ties = 0;
  for (let j = 0; j < m; ) {
    const v = values[j]!;
    starts.push(j);
    distinct.push(v);
    let t = 0;
    while (j < m && values[j] === v) {
      j++;
      t++;
    }
    ties += t * t * t - t;
  }
  starts.push(m);
  const logs = logarithms(values);
  return { values, logs, runValues: Float64Array.from(distinct), runStarts: Int32Array.from(starts), ties, buckets: bucketsOf(logs) };
}

/**
 * The first index in [j, end] whose difference `ai − b[index]` is at most t, those from `end` on
 * being at most t (or `end` = b.length): those at most t follow those above it, as b is ascending.
 * Galloping (1, 2, 4, … ahead, then halving back), so that a small group against a large baseline
 * costs O(n log(m/n)), not O(m), while walking every a[i] in order still costs O(n + m) in all.
 */
function firstAtMost(ai: number, b: Float64Array, t: number, j: number, end = b.length): number {
  if (j >= end || ai - b[j]! <= t) return j;
  let above = j; // ai − b[above] > t
  let step = 1;
  let at = j + 1;
  while (at < end && ai - b[at]! > t) {
    above = at;
    step *= 2;
    at = above + step;
  }
  return halving(ai, b, t, above, Math.min(at, end));
}

/**
 * The first index in (above, atMost] whose difference is at most t, by halving: ai − b[above] > t (or
 * `above` is before the start), ai − b[atMost] ≤ t (or the end). From j − 1 and the end, firstAtMost
 * with fewer reads when a[i]'s first is far from j (a small group against a large one).
 */
function halving(ai: number, b: Float64Array, t: number, above: number, atMost: number): number {
  while (atMost - above > 1) {
    const mid = (above + atMost) >> 1;
    if (ai - b[mid]! > t) above = mid;
    else atMost = mid;
  }
  return atMost;
}

/**
 * firstAtMost in [j, end] from the range of b holding ai − t (b's `buckets`): the first b[index] at
 * least ai − t lies in that range, and so does the first difference at most t but for rounding,
 * which moves it past the range's ends by a value or so at most: checked at both ends (and looked
 * for in all of [j, end] otherwise), so the answer is exact.
 */
function firstAtMostBucketed(ai: number, b: Float64Array, t: number, j: number, end: number, buckets: Buckets): number {
  const q = bucketOf(buckets, ai - t);
  let above = Math.min(Math.max(buckets.starts[q]!, j), end) - 1; // ai − b[above] > t (or before j)
  let atMost = Math.min(Math.max(buckets.starts[q + 1]!, j), end); // ai − b[atMost] ≤ t (or the end)
  if (atMost < end && ai - b[atMost]! > t) {
    above = atMost;
    atMost = end;
  } else if (above >= j && ai - b[above]! <= t) {
    atMost = above;
    above = j - 1;
  }
  return halving(ai, b, t, above, atMost);
}

/** What one pass over the differences at a value t tells (`probe`). */
interface Probe {
  /** The differences at most t. */
  count: number;
  /** The largest of them (−Infinity when none). */
  atMost: number;
  /** The smallest difference above t (Infinity when none). */
  above: number;
}

/** The differences a[i] − b[j] (as doubles; a and b sorted ascending) at most t, the largest of them and the smallest above: one pass. */
function probe(a: Float64Array, b: Float64Array, t: number, out: Probe): Probe {
  const m = b.length;
  let count = 0;
  let atMost = Number.NEGATIVE_INFINITY;
  let above = Number.POSITIVE_INFINITY;
  let j = 0; // for a[i], the differences a[i] − b[j'] with j' ≥ j are at most t
  for (let i = 0; i < a.length; i++) {
    const ai = a[i]!;
    j = firstAtMost(ai, b, t, j);
    // b[j] gives a[i]'s largest difference at most t, b[j − 1] its smallest above t.
    if (j > 0) above = Math.min(above, ai - b[j - 1]!);
    if (j === m) continue; // a larger a[i] has none at most t either, but may have one above
    count += m - j;
    atMost = Math.max(atMost, ai - b[j]!);
  }
  out.count = count;
  out.atMost = atMost;
  out.above = above;
  return out;
}

/** The number of differences a[i] − b[j] (as doubles) at most t; a and b sorted ascending. */
export function countAtMost(a: Float64Array, b: Float64Array, t: number): number {
  return probe(a, b, t, { count: 0, atMost: 0, above: 0 }).count;
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
 * Scratch space of kthDifference (it runs to its end without yielding): a comparison makes
 * thousands of selections of small groups, whose few allocations each would cost as much as the
 * selection itself. Kept for groups of at most SCRATCH_MAX values.
 */
const SCRATCH_MAX = 4096;
let scratchJ = new Int32Array(3 * 64);
let scratchD = new Float64Array(256);

/**
 * The k-th smallest (1-based, 1 ≤ k ≤ n·m) of the differences a[i] − b[j] as doubles, without
 * forming them; a and b sorted ascending, finite, not empty. The range (lo, hi] that holds it is
 * narrowed (by value) until it holds at most `cap` differences, which are then gathered and
 * sorted; until it holds differences of one value only (ties), which is the k-th; or until the
 * k-th is among the few at one end, merged from there. For each a[i] the b[j] whose differences
 * lie in (lo, hi] are kept (from the first at most hi to the first at most lo): a count searches
 * only among them, fewer at every step.
 */
export function kthDifference(
  a: Float64Array,
  b: Float64Array,
  k: number,
  /** b's ranges (bucketsOf), when prepared. */
  buckets: Buckets | null = null,
  cap = 64 + 2 * Math.min(a.length, b.length),
): number {
  const n = a.length;
  const m = b.length;
  // Walk the smaller of the two (a − b as doubles is exactly −(b − a)): the k-th of a − b is minus
  // the (n·m + 1 − k)-th of b − a.
  if (n > m) return 0 - kthDifference(b, a, n * m + 1 - k, null, cap) || 0;
  // Every difference lies in [min, max]: none at most min − 1 (|min| < 1500 for logarithms of doubles).
  const min = a[0]! - b[m - 1]!;
  let lo = min - 1;
  let hi = a[n - 1]! - b[0]!; // a difference, always: the largest at most where the k-th was placed
  let aboveLo = min; // the smallest difference above lo
  let atLo = 0; // differences at most lo (fewer than k)
  let atHi = n * m; // differences at most hi (k or more)
  // For a[i], the first j whose difference is at most hi (J[fromJ + i]), at most lo (J[toJ + i])
  // and at most the value tried (J[atJ + i]).
  if (scratchJ.length < 3 * n) scratchJ = new Int32Array(3 * n);
  const J = n <= SCRATCH_MAX ? scratchJ : new Int32Array(3 * n);
  let fromJ = 0;
  let toJ = n;
  let atJ = 2 * n;
  J.fill(0, fromJ, fromJ + n);
  J.fill(m, toJ, toJ + n);
  let halvings = 0; // by value
  // Against a much larger b, each a[i]'s first j lies far from the previous one: found from b's
  // ranges (O(1)) or by halving its range (log m), not by galloping to it (2 log(m/n)).
  const far = n * n < m;
  let sameEnd = 0; // cuts in a row that moved the same end (+: hi, −: lo) and did not halve the count between the ends
  let priorT = 0;
  let priorCount = 0;
  let lastT = 0;
  let lastCount = 0;
  for (let step = 0; atHi - atLo > cap; step++) {
    // Every difference in (lo, hi] is hi: so is the k-th.
    if (aboveLo === hi) return hi;
    // Mostly a cut where the counts say the k-th lies (as if the differences spread evenly: few
    // steps on ordinary data), the first where a middle value of a would have its share ⌈k/n⌉ of
    // them. A halving instead when the last two cuts moved the same end (they fall short of the k-th
    // on one side), and every other step after 32: of the range's value for the first 64, then of
    // the doubles between its ends (by their order, not their value: at most 64 more, however close
    // to 0 a mass of differences lies). At most 32 + 2·128 steps; about 8 on ordinary data.
    let mid: number;
    const secant =
      step >= 2 && lastCount !== priorCount ? lastT + ((k - lastCount) * (lastT - priorT)) / (lastCount - priorCount) : Number.NaN;
    const guess =
      step === 0
        ? a[n >> 1]! - b[m - Math.ceil(k / n)]!
        : secant > lo && secant < hi
          ? secant
          : lo + (hi - lo) * ((k - atLo) / (atHi - atLo));
    const half = lo / 2 + hi / 2;
    if (Math.abs(sameEnd) < 2 && (step < 32 || step % 2 === 0) && guess > lo && guess < hi) mid = guess;
    else if (halvings < 64 && half > lo && half < hi) {
      mid = half;
      halvings++;
    } else {
      const keyLo = orderKey(lo);
      const keyHi = orderKey(hi);
      if (keyHi - keyLo <= 1n) return hi; // neighbours: the k-th is hi
      mid = fromOrderKey(keyLo + ((keyHi - keyLo) >> 1n));
    }
    const cut = mid === guess;
    // The count at mid, the largest difference at most mid and the smallest above it.
    let count = 0;
    let atMost = Number.NEGATIVE_INFINITY;
    let above = Number.POSITIVE_INFINITY;
    let j = 0; // only moves up as a[i] does
    for (let i = 0; i < n; i++) {
      const ai = a[i]!;
      const from = Math.max(j, J[fromJ + i]!);
      const end = J[toJ + i]!;
      j = !far
        ? firstAtMost(ai, b, mid, from, end)
        : buckets
          ? firstAtMostBucketed(ai, b, mid, from, end, buckets)
          : halving(ai, b, mid, from - 1, end);
      J[atJ + i] = j;
      if (j > 0) above = Math.min(above, ai - b[j - 1]!);
      if (j < m) {
        count += m - j;
        atMost = Math.max(atMost, ai - b[j]!);
      }
    }
    priorT = lastT;
    priorCount = lastCount;
    lastT = mid;
    lastCount = count;
    const shrunk = Math.min(atHi, count >= k ? count : atHi) - Math.max(atLo, count < k ? count : atLo) <= (atHi - atLo) / 2;
    const tried = atJ;
    if (count >= k) {
      hi = atMost; // nothing lies in (atMost, mid]: the same count, the same j
      atHi = count;
      sameEnd = cut && !shrunk ? Math.max(sameEnd, 0) + 1 : 0;
      atJ = fromJ;
      fromJ = tried;
    } else {
      lo = mid;
      atLo = count;
      aboveLo = above;
      sameEnd = cut && !shrunk ? Math.min(sameEnd, 0) - 1 : 0;
      atJ = toJ;
      toJ = tried;
    }
    // The k-th is among the few largest at most hi, or the few smallest above lo: merged from there
    // (in J's free third).
    if (atHi - k < FEW) return fromAbove(a, b, J, fromJ, atJ, atHi - k);
    if (k - atLo <= FEW) return fromBelow(a, b, J, toJ, atJ, k - atLo);
  }
  // Gather the differences in (lo, hi] and sort them.
  const size = atHi - atLo;
  if (scratchD.length < size && size <= SCRATCH_MAX) scratchD = new Float64Array(size);
  const within = size <= SCRATCH_MAX ? scratchD : new Float64Array(size);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const ai = a[i]!;
    for (let j = J[fromJ + i]!; j < J[toJ + i]!; j++) within[at++] = ai - b[j]!;
  }
  return within.subarray(0, size).sort()[k - atLo - 1]!;
}

/**
 * How near one end of the range the k-th may lie to be picked by merging from that end (each pick
 * looks at every a[i]): no more than a count would cost.
 */
const FEW = 8;

/**
 * The (e + 1)-th largest difference at most hi, a[i]'s being a[i] − b[j] from j = J[fromJ + i] on
 * (descending); J[free …] is scratch.
 */
function fromAbove(a: Float64Array, b: Float64Array, J: Int32Array, fromJ: number, free: number, e: number): number {
  const m = b.length;
  J.copyWithin(free, fromJ, fromJ + a.length);
  let picked = Number.NaN;
  for (let pick = 0; pick <= e; pick++) {
    let best = -1;
    picked = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < a.length; i++) {
      const j = J[free + i]!;
      if (j < m && a[i]! - b[j]! > picked) {
        picked = a[i]! - b[j]!;
        best = i;
      }
    }
    J[free + best]!++;
  }
  return picked;
}

/**
 * The e-th smallest difference above lo (e ≥ 1), a[i]'s being a[i] − b[j] from j = J[toJ + i] − 1
 * down (ascending); J[free …] is scratch.
 */
function fromBelow(a: Float64Array, b: Float64Array, J: Int32Array, toJ: number, free: number, e: number): number {
  J.copyWithin(free, toJ, toJ + a.length);
  let picked = Number.NaN;
  for (let pick = 0; pick < e; pick++) {
    let best = -1;
    picked = Number.POSITIVE_INFINITY;
    for (let i = 0; i < a.length; i++) {
      const j = J[free + i]!;
      if (j > 0 && a[i]! - b[j - 1]! < picked) {
        picked = a[i]! - b[j - 1]!;
        best = i;
      }
    }
    J[free + best]!--;
  }
  return picked;
}

/** The first run of the baseline from `r` on whose value is at least v (galloping: the runs sought only move up). */
function firstRunAtLeast(runs: Float64Array, v: number, r: number): number {
  const count = runs.length;
  if (r >= count || runs[r]! >= v) return r;
  let below = r; // runs[below] < v
  let step = 1;
  let at = r + 1;
  while (at < count && runs[at]! < v) {
    below = at;
    step *= 2;
    at = below + step;
  }
  let atLeast = Math.min(at, count);
  while (atLeast - below > 1) {
    const mid = (below + atLeast) >> 1;
    if (runs[mid]! < v) below = mid;
    else atLeast = mid;
  }
  return atLeast;
}

/**
 * The Mann–Whitney p-value (two-sided, normal approximation, tie and continuity corrections) of x
 * (sorted) against the baseline, in O(n log m): the ranks of the merged order, a run of equal
 * values of x at a time (each gets the mean of the ranks it spans), with the baseline's values
 * below and equal to it found among its runs; the tie sum is the baseline's with the runs x joins
 * made longer. Sums of integers and halves, exact (so the same as merging both groups whole) as long
 * as (n + m)³ < 2⁵³, n + m up to 208,063.
 */
export function mannWhitneyPValue(x: ArrayLike<number>, baseline: Baseline): number {
  const n = x.length;
  const { runValues, runStarts } = baseline;
  const m = baseline.values.length;
  const total = n + m;
  let rankSumX = 0;
  let ties = baseline.ties; // Σ (t³ − t) over the runs of equal values of x and y merged
  let r = 0;
  for (let i = 0; i < n; ) {
    const v = x[i]!;
    const before = i; // values of x below v
    while (i < n && x[i] === v) i++;
    const inX = i - before;
    r = firstRunAtLeast(runValues, v, r);
    const belowY = runStarts[r]!; // m when every value of y is below v
    const inY = r < runValues.length && runValues[r] === v ? runStarts[r + 1]! - belowY : 0;
    const t = inX + inY;
    rankSumX += inX * (before + belowY + (t + 1) / 2);
    ties += t * t * t - t - (inY * inY * inY - inY);
  }
  const u = rankSumX - (n * (n + 1)) / 2;
  const variance = ((n * m) / 12) * (total + 1 - ties / (total * (total - 1)));
  if (!(variance > 0)) return 1; // every value equal: nothing tells the groups apart
  const z = Math.max(0, Math.abs(u - (n * m) / 2) - 0.5) / Math.sqrt(variance);
  return Math.min(1, 2 * normalCdf(-z));
}

/** A group against the baseline at every confidence: the ratio and the p-value, and the group's logarithms for the intervals. */
export interface Versus {
  /** The group's logarithms, ascending. */
  readonly logs: Float64Array;
  readonly ratio: number;
  readonly pvalue: number;
}

/** The ratio of x's values (sorted ascending, every value > 0, not empty) to the baseline's, and the Mann–Whitney p-value: what does not depend on the confidence. */
export function versus(x: ArrayLike<number>, baseline: Baseline): Versus {
  const a = logarithms(x);
  const b = baseline.logs;
  const nm = a.length * b.length;
  let median: number;
  if (nm % 2 === 1) median = kthDifference(a, b, (nm + 1) / 2, baseline.buckets);
  else {
    const low = kthDifference(a, b, nm / 2, baseline.buckets);
    const at = probe(a, b, low, { count: 0, atMost: 0, above: 0 });
    median = (low + (at.count >= nm / 2 + 1 ? low : at.above)) / 2;
  }
  return { logs: a, ratio: Math.exp(median), pvalue: mannWhitneyPValue(x, baseline) };
}

/** The interval of the ratio at `confidence`: [exp d₍ₖ₎, exp d₍ₙₘ₊₁₋ₖ₎], null when k < 1. */
export function ratioInterval(group: Versus, baseline: Baseline, confidence: number): [number, number] | null {
  const a = group.logs;
  const b = baseline.logs;
  const nm = a.length * b.length;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const k = Math.floor(nm / 2 - z * Math.sqrt((nm * (a.length + b.length + 1)) / 12));
  return k < 1 ? null : [Math.exp(kthDifference(a, b, k, baseline.buckets)), Math.exp(kthDifference(a, b, nm + 1 - k, baseline.buckets))];
}

/**
 * The group's ratio to the baseline with its interval at `confidence` and the p-value; null when the
 * ratio or a bound of its interval lies beyond the range of a double (1e300 against 1e-300: the
 * caller names it in `out_of_range`).
 */
export function ratioVersus(group: Versus, baseline: Baseline, confidence: number): VsBaseline | null {
  const ratioCi = ratioInterval(group, baseline, confidence);
  if (!Number.isFinite(group.ratio) || (ratioCi && !ratioCi.every(Number.isFinite))) return null;
  return { ratio: group.ratio, ratio_ci: ratioCi, pvalue: group.pvalue };
}

/** The ratio of x's values (sorted ascending, every value > 0, not empty) to the baseline's, its interval and the p-value: `versus`, then `ratioVersus`. */
export function vsBaseline(x: ArrayLike<number>, baseline: Baseline, confidence: number): VsBaseline | null {
  return ratioVersus(versus(x, baseline), baseline, confidence);
}
