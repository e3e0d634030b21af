/**
 * Change points of one series (GET /results:changes, docs/spec/CHANGES.md): E-divisive means
 * (Matteson and James 2014, α = 1) proposes splits, Welch's t-test keeps them, and a re-test pass
 * drops the change points that no longer pass against their final neighbouring segments.
 *
 * - Cost: the divergence statistic of every split of a segment is computed in O(L log L) (the sums
 *   of pairwise distances of each prefix and suffix, with Fenwick trees over the values' ranks).
 *   The search runs in windows of `windowLength(minSize)` points overlapping by a quarter, and by
 *   2 × minSize at least (every position has minSize points on either side in one of them), each
 *   keeping at most `MAX_SPLITS_PER_WINDOW` splits, so a series' cost grows linearly with its
 *   length. A segment in which no split could pass (a bound from prefix sums, O(L)) is not
 *   searched. The windows' proposals are then re-tested on the whole series, in O(1) per test: the
 *   segments' counts, means and sums of squared deviations merge exactly (Chan et al.) when a
 *   change point between them is dropped.
 * - Any finite doubles: the series is scaled by a power of two that brings its largest magnitude
 *   near 1 (the tests and the divergence are scale-free; the scaling is exact) so that no sum
 *   overflows, from 5e-324 to ±1.7e308.
 * - Deterministic: the same series gives the same answer (ties go to the earliest position).
 */
import { distributions } from '../compare/distributions.ts';

export interface ChangeOptions {
  maxPvalue: number;
  minMagnitude: number;
  minSize: number;
}

/** A segment's summary on the scaled values: count, mean and sum of squared deviations from the mean. */
interface Moments {
  n: number;
  mean: number;
  m2: number;
}

export interface WelchTest {
  /** Welch's t (after − before), ±Infinity when both sides are constant and differ, 0 when both are equal. */
  t: number;
  /** Welch–Satterthwaite degrees of freedom; NaN when both sides are constant. */
  df: number;
  pvalue: number;
}

/** A series: numbers in time order. */
export type Values = readonly number[] | Float64Array;

/** The change points found: positions of the first point after each change, in increasing order. */
export function changePoints(values: Values, options: ChangeOptions): number[] {
  const n = values.length;
  if (n < 2 * options.minSize) return [];
  const y = scaled(values);
  const window = windowLength(options.minSize);
  const proposed = new Set<number>();
  if (n <= window) splitAll(y, 0, n, options, proposed);
  else {
    // Overlapping by a quarter, and by 2 × minSize at least: every position has minSize points on either side in one window.
    const step = Math.min((window * 3) / 4, window - 2 * options.minSize);
    for (let from = 0; ; from += step) {
      const to = Math.min(n, from + window);
      splitAll(y, Math.max(0, to - window), to, options, proposed);
      if (to === n) break;
    }
  }
  return retest(
    y,
    [...proposed].sort((a, b) => a - b),
    options,
  );
}

/** The windows' length: 1024 points, or 4 × minSize when larger (a multiple of 4). */
export function windowLength(minSize: number): number {
  return Math.max(1024, 4 * minSize);
}

/**
 * The power of two that brings the values' largest magnitude near 1 (0 when every value is 0):
 * multiplying by a power of two is exact (short of the subnormal range), so segment means scale back
 * to exactly what they were.
 */
export function scaleExponent(values: Values): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, Math.abs(values[i]!));
  return max === 0 ? 0 : Math.floor(Math.log2(max));
}

/** v × 2^k, in two steps so that neither factor leaves the range of normal doubles (k from −1074 to 1023). */
export function timesPowerOfTwo(v: number, k: number): number {
  const half = Math.trunc(k / 2);
  return v * 2 ** half * 2 ** (k - half);
}

/** The values times 2^−scaleExponent: within (−2, 2). */
export function scaled(values: Values): Float64Array {
  const k = -scaleExponent(values);
  const y = new Float64Array(values.length);
  for (let i = 0; i < values.length; i++) y[i] = timesPowerOfTwo(values[i]!, k);
  return y;
}

/** The most splits one window keeps: more in `windowLength` points is no longer a series of steps. */
export const MAX_SPLITS_PER_WINDOW = 32;

/** Splits [from, to) recursively, adding every kept split to `found`. */
function splitAll(y: Float64Array, from: number, to: number, options: ChangeOptions, found: Set<number>): void {
  const pending: [number, number][] = [[from, to]];
  let kept = 0;
  while (pending.length && kept < MAX_SPLITS_PER_WINDOW) {
    const [s, e] = pending.shift()!;
    if (e - s < 2 * options.minSize || !somePositionMayPass(y, s, e, options)) continue;
    const at = bestSplit(y, s, e, options.minSize);
    if (!passes(moments(y, s, at), moments(y, at, e), options)) continue;
    found.add(at);
    kept++;
    pending.push([s, at], [at, e]);
  }
}

/**
 * Whether some split of [s, e) with both sides of minSize points could pass the test: its Welch t
 * at least the normal critical value (the smallest over every degrees of freedom) and its change of
 * the mean large enough, from prefix sums (O(L), with a margin for their rounding). When none
 * could, the segment is not searched (most windows of a series hold no change).
 */
function somePositionMayPass(y: Float64Array, s: number, e: number, options: ChangeOptions): boolean {
  const length = e - s;
  let centre = 0;
  for (let i = s; i < e; i++) centre += y[i]!;
  centre /= length;
  const p1 = new Float64Array(length + 1);
  const p2 = new Float64Array(length + 1);
  for (let i = 0; i < length; i++) {
    const c = y[s + i]! - centre;
    p1[i + 1] = p1[i]! + c;
    p2[i + 1] = p2[i]! + c * c;
  }
  const critical = -distributions().normalQuantile(options.maxPvalue / 2, 0, 1) * (1 - 1e-6);
  for (let k = options.minSize; k <= length - options.minSize; k++) {
    const n2 = length - k;
    const mean1 = p1[k]! / k;
    const mean2 = (p1[length]! - p1[k]!) / n2;
    const var1 = Math.max(0, p2[k]! - k * mean1 * mean1) / (k - 1);
    const var2 = Math.max(0, p2[length]! - p2[k]! - n2 * mean2 * mean2) / (n2 - 1);
    const diff = Math.abs(mean2 - mean1);
    if (diff < options.minMagnitude * Math.abs(mean1 + centre) * (1 - 1e-6)) continue;
    if (diff >= critical * Math.sqrt(var1 / k + var2 / n2)) return true;
  }
  return false;
}

/**
 * The position τ in [s + minSize, e − minSize] that maximises the E-divisive statistic (α = 1)
 * between [s, τ) and [τ, e): nl·nr/(nl + nr) · (2·mean|x − y| − mean|x − x'| − mean|y − y'|).
 */
export function bestSplit(y: Float64Array, s: number, e: number, minSize: number): number {
  const length = e - s;
  const rank = ranks(y, s, e);
  const left = prefixDistances(y, s, rank, false);
  const right = prefixDistances(y, s, rank, true);
  const total = left[length]!;
  let best = s + minSize;
  let bestQ = Number.NEGATIVE_INFINITY;
  for (let k = minSize; k <= length - minSize; k++) {
    const nl = k;
    const nr = length - k;
    const within = left[k]!;
    const withinRight = right[nr]!;
    const between = total - within - withinRight;
    const q = (2 * between) / length - ((2 * within) / (nl - 1)) * (nr / length) - ((2 * withinRight) / (nr - 1)) * (nl / length);
    if (q > bestQ) {
      bestQ = q;
      best = s + k;
    }
  }
  return best;
}

/** Each value's rank among y[s, e) (from 1; equal values share the rank of the first of them). */
function ranks(y: Float64Array, s: number, e: number): Int32Array {
  const sorted = y.slice(s, e).sort();
  const rank = new Int32Array(e - s);
  for (let i = 0; i < rank.length; i++) rank[i] = lowerBound(sorted, y[s + i]!) + 1;
  return rank;
}

/** The first position of `sorted` holding `key` or more. */
export function lowerBound(sorted: Float64Array, key: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * D[k]: the sum of |y_i − y_j| over the pairs of the first k points of y[s, s + rank.length) (of
 * the last k when `fromEnd`), for every k, in O(L log L): each point adds its distances to those
 * before it, from the count and the sum of the smaller ones (Fenwick trees over the ranks; equal
 * values add nothing to each other whichever side they count on).
 */
function prefixDistances(y: Float64Array, s: number, rank: Int32Array, fromEnd: boolean): Float64Array {
  const length = rank.length;
  const count = new Int32Array(length + 1);
  const sum = new Float64Array(length + 1);
  const d = new Float64Array(length + 1);
  let total = 0;
  for (let k = 0; k < length; k++) {
    const i = fromEnd ? length - 1 - k : k;
    const v = y[s + i]!;
    let below = 0;
    let belowSum = 0;
    for (let r = rank[i]! - 1; r > 0; r -= r & -r) {
      below += count[r]!;
      belowSum += sum[r]!;
    }
    d[k + 1] = d[k]! + v * (2 * below - k) + total - 2 * belowSum;
    total += v;
    for (let r = rank[i]!; r <= length; r += r & -r) {
      count[r]!++;
      sum[r]! += v;
    }
  }
  return d;
}

/** Count, mean and sum of squared deviations of y[from, to), in two passes (the sum compensated: Neumaier). */
export function moments(y: ArrayLike<number>, from: number, to: number): Moments {
  const n = to - from;
  let total = 0;
  let lost = 0;
  let constant = true;
  for (let i = from; i < to; i++) {
    const v = y[i]!;
    const next = total + v;
    lost += Math.abs(total) >= Math.abs(v) ? total - next + v : v - next + total;
    total = next;
    constant &&= v === y[from];
  }
  // Equal values: their mean exactly, no spread (n·v / n need not round back to v).
  if (constant) return { n, mean: y[from]!, m2: 0 };
  const mean = (total + lost) / n;
  let m2 = 0;
  for (let i = from; i < to; i++) m2 += (y[i]! - mean) ** 2;
  return { n, mean, m2 };
}

/** The moments of two adjacent segments together (Chan, Golub and LeVeque). */
function merged(a: Moments, b: Moments): Moments {
  const n = a.n + b.n;
  const delta = b.mean - a.mean;
  return { n, mean: a.mean + (delta * b.n) / n, m2: a.m2 + b.m2 + ((delta * delta) / n) * a.n * b.n };
}

/** The two-sided Welch's t-test between two samples of at least 2 values each. */
export function welch(before: Moments, after: Moments): WelchTest {
  const a = before.m2 / (before.n - 1) / before.n;
  const b = after.m2 / (after.n - 1) / after.n;
  const se2 = a + b;
  const diff = after.mean - before.mean;
  if (!(se2 > 0)) {
    // Both sides constant: a change for certain when they differ, none when they are equal.
    return diff === 0 ? { t: 0, df: Number.NaN, pvalue: 1 } : { t: diff > 0 ? Infinity : -Infinity, df: Number.NaN, pvalue: 0 };
  }
  const t = diff / Math.sqrt(se2);
  const ra = a / se2;
  const rb = b / se2;
  const df = 1 / ((ra * ra) / (before.n - 1) + (rb * rb) / (after.n - 1));
  const { normalCdf, tCdf } = distributions();
  const tail = df > 1e7 ? normalCdf(-Math.abs(t), 0, 1) : tCdf(-Math.abs(t), df);
  return { t, df, pvalue: Math.min(1, 2 * tail) };
}

/** Whether a split between `before` and `after` is kept: sizes, p-value and magnitude. */
function passes(before: Moments, after: Moments, options: ChangeOptions): boolean {
  if (before.n < options.minSize || after.n < options.minSize) return false;
  if (Math.abs(after.mean - before.mean) < options.minMagnitude * Math.abs(before.mean)) return false;
  if (after.mean === before.mean) return false;
  return welch(before, after).pvalue <= options.maxPvalue;
}

/**
 * The re-test pass: while some change point fails against its neighbouring segments, the one with
 * the largest p-value (the earliest among equals) is dropped and its segments merge.
 */
function retest(y: Float64Array, proposed: number[], options: ChangeOptions): number[] {
  if (proposed.length === 0) return [];
  const bounds = [0, ...proposed, y.length];
  // segment i is [bounds[i], bounds[i + 1]); change point i (1 … k) sits between segments i − 1 and i.
  const segs: (Moments | null)[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) segs.push(moments(y, bounds[i]!, bounds[i + 1]!));
  const prev = bounds.map((_, i) => i - 1);
  const next = bounds.map((_, i) => i + 1);
  const alive = bounds.map(() => true);
  // An entry of the heap is stale once its change point's neighbours changed (a newer entry is pushed).
  const version = bounds.map(() => 0);
  const failing = (c: number): number | null => {
    const before = segs[prev[c]!]!;
    const after = segs[c]!;
    if (passes(before, after, options)) return null;
    return before.n >= 2 && after.n >= 2 ? welch(before, after).pvalue : 1;
  };
  const heap = new Heap();
  for (let c = 1; c < bounds.length - 1; c++) {
    const p = failing(c);
    if (p !== null) heap.push(p, c, 0);
  }
  while (heap.size) {
    const { c, v } = heap.pop()!;
    if (!alive[c] || v !== version[c]) continue;
    // Drop c: segment c joins segment prev[c].
    alive[c] = false;
    const left = prev[c]!;
    const right = next[c]!;
    segs[left] = merged(segs[left]!, segs[c]!);
    segs[c] = null;
    next[left] = right;
    prev[right] = left;
    for (const neighbour of [left, right]) {
      if (neighbour <= 0 || neighbour >= bounds.length - 1 || !alive[neighbour]) continue;
      version[neighbour]!++;
      const q = failing(neighbour);
      if (q !== null) heap.push(q, neighbour, version[neighbour]);
    }
  }
  return bounds.filter((_, c) => c > 0 && c < bounds.length - 1 && alive[c]);
}

/** A max-heap of (p-value, change point) pairs: the largest p first, the earliest change point among equals. */
class Heap {
  private readonly items: { p: number; c: number; v: number }[] = [];
  get size(): number {
    return this.items.length;
  }
  private above(a: { p: number; c: number }, b: { p: number; c: number }): boolean {
    return a.p > b.p || (a.p === b.p && a.c < b.c);
  }
  push(p: number, c: number, v: number): void {
    const items = this.items;
    items.push({ p, c, v });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.above(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }
  pop(): { p: number; c: number; v: number } | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length && last) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.above(items[l]!, items[m]!)) m = l;
        if (r < items.length && this.above(items[r]!, items[m]!)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m]!, items[i]!];
        i = m;
      }
    }
    return top;
  }
}

/** (a + b) / 2, or a / 2 + b / 2 where the sum overflows (−1.7e308 and 1.7e308 give 0). */
const midpoint = (a: number, b: number) => {
  const m = (a + b) / 2;
  return Number.isFinite(m) ? m : a / 2 + b / 2;
};

export interface SegmentSummary {
  from: number;
  to: number;
  n: number;
  mean: number;
  median: number;
  stddev: number | null;
}

export interface ChangeSummary {
  index: number;
  before: SegmentSummary;
  after: SegmentSummary;
  magnitude: number | null;
  pvalue: number;
}

/**
 * The segments [from, to) the change points cut the series into, and each change point's
 * statistics against its neighbouring segments, in the values' own scale: the mean within the
 * segment's range (the scaled mean scaled back, exactly), the median between its two middle values
 * (never overflowing), the standard deviation null beyond the largest double.
 */
export function summarise(values: Values, points: readonly number[]): { segments: SegmentSummary[]; changes: ChangeSummary[] } {
  const y = scaled(values);
  const k = scaleExponent(values);
  const bounds = [0, ...points, values.length];
  const segments: SegmentSummary[] = [];
  const moment: Moments[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const from = bounds[i]!;
    const to = bounds[i + 1]!;
    const m = moments(y, from, to);
    moment.push(m);
    const sorted = Float64Array.from(values.slice(from, to)).sort();
    const n = to - from;
    const median = n % 2 ? sorted[(n - 1) / 2]! : midpoint(sorted[n / 2 - 1]!, sorted[n / 2]!);
    const mean = Math.min(sorted[n - 1]!, Math.max(sorted[0]!, timesPowerOfTwo(m.mean, k)));
    const stddev = n > 1 ? timesPowerOfTwo(Math.sqrt(m.m2 / (n - 1)), k) : null;
    segments.push({ from, to, n, mean, median, stddev: stddev !== null && Number.isFinite(stddev) ? stddev : null });
  }
  const changes = points.map((index, i): ChangeSummary => {
    const b = moment[i]!;
    const a = moment[i + 1]!;
    const magnitude = b.mean === 0 ? null : (a.mean - b.mean) / Math.abs(b.mean);
    return {
      index,
      before: segments[i]!,
      after: segments[i + 1]!,
      magnitude: magnitude !== null && Number.isFinite(magnitude) ? magnitude : null,
      pvalue: welch(b, a).pvalue,
    };
  });
  return { segments, changes };
}
