/**
 * The statistics of GET /results:compare computed in Node (the sums and the sorting happen in
 * PostgreSQL, services/compare/compare.ts): the rank k of the median's order-statistic interval, the Student
 * t quantile of the mean's interval, the ranks with declared ties, the `x-better` annotation of a
 * metric in a benchmark's schema, and the arithmetic on a group's values (percentiles between two
 * order statistics, the mean's interval, the value for money) for any finite doubles: a result
 * beyond the range of a double is `null` and named in `out_of_range`, never an error, never
 * Infinity or NaN. Pure functions.
 *
 * The distributions' special functions (Student's t and the normal quantile and CDF, ln Γ) are
 * @stdlib's; what is kept here is the search for the median interval's exact rank, which no library
 * gives (docs/decisions.md, "Statistics: @stdlib's distributions, our own rank search").
 */
import { isNode, localRef } from '../schemas/schema-paths.ts';
import { distributions } from './distributions.ts';

/** P(T ≤ t) for Student's t with `df` degrees of freedom (@stdlib: the incomplete beta function). */
export function studentTCdf(t: number, df: number): number {
  return distributions().tCdf(t, df);
}

/** P(Z ≤ z) for the standard normal distribution (@stdlib). */
export function normalCdf(z: number): number {
  return distributions().normalCdf(z, 0, 1);
}

/** Results remembered per function below (all forgotten when full): many times what one answer needs. */
const MEMO_ENTRIES = 4096;

/**
 * `fn` remembering its results: a comparison computes the same quantile and rank for every group of
 * the same n (a few hundred groups, a few dozen distinct n), and the next comparison again.
 */
function memoized(fn: (a: number, b: number) => number): (a: number, b: number) => number {
  const memo = new Map<string, number>();
  return (a, b) => {
    const key = `${a} ${b}`;
    let value = memo.get(key);
    if (value === undefined) {
      value = fn(a, b);
      if (memo.size >= MEMO_ENTRIES) memo.clear();
      memo.set(key, value);
    }
    return value;
  };
}

/**
 * The p-quantile of Student's t with `df` degrees of freedom (p in (0, 1)), by @stdlib (the inverse
 * of the incomplete beta function). Remembered: a comparison asks for the same few.
 */
export const studentTQuantile: (p: number, df: number) => number = memoized((p, df) => {
  if (!(p > 0 && p < 1) || !(df > 0)) throw new RangeError(`studentTQuantile(${p}, ${df})`);
  return distributions().tQuantile(p, df);
});

/**
 * The rank k of the median's distribution-free interval [x(k), x(n + 1 − k)]: the largest k with
 * 2·P(B ≤ k − 1) ≤ 1 − confidence for B ~ Binomial(n, ½); 0 when even [min, max] falls short.
 * The probabilities are summed in log space, so a large n does not underflow. Remembered.
 */
export const medianIntervalRank: (n: number, confidence: number) => number = memoized(intervalRank);

function intervalRank(n: number, confidence: number): number {
  const alpha = 1 - confidence;
  // Rounding would otherwise move a boundary case (n = 6 at 0.96875) by one.
  const limit = alpha / 2 + 1e-12;
  // P(B ≤ n/2 − 10·√n) < 1e-80: start there (its terms could not reach α/2) instead of at 0.
  const start = Math.max(0, Math.floor(n / 2 - 10 * Math.sqrt(n)));
  const { gammaln } = distributions();
  let logPmf = gammaln(n + 1) - gammaln(start + 1) - gammaln(n - start + 1) - n * Math.LN2; // P(B = start)
  let cdf = 0;
  let k = start;
  for (let i = start; i < n; i++) {
    cdf += Math.exp(logPmf); // P(B ≤ i)
    if (cdf > limit) break;
    k = i + 1;
    logPmf += Math.log(n - i) - Math.log(i + 1);
  }
  return k;
}

/** The p-quantile of the standard normal distribution (p in (0, 1)), by @stdlib. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile(${p})`);
  return distributions().normalQuantile(p, 0, 1);
}

/**
 * The normal approximation of {@link medianIntervalRank} (with continuity correction):
 * ⌊n/2 + 1/2 − z·√n/2⌋, z the (1 − α/2) normal quantile. It is within 1 of the exact rank for every
 * n up to 20,000 at confidences from 0.5 to 0.999 (compare-stats.test.ts); PostgreSQL evaluates the
 * same expression to return the few order statistics around it in the statement that computes the
 * aggregates (services/compare/compare.ts), among which the exact ranks are then picked.
 */
export function medianIntervalRankEstimate(n: number, z: number): number {
  return Math.floor(n / 2 + 0.5 - (z * Math.sqrt(n)) / 2);
}

/**
 * The t interval of a mean; null when n < 2 or the spread is unknown (stddev null), and when a
 * bound lies beyond the range of a double (a spread near 1e308: the caller says so).
 */
export function meanInterval(mean: number, stddev: number | null, n: number, confidence: number): [number, number] | null {
  if (n < 2 || stddev === null) return null;
  const t = studentTQuantile(1 - (1 - confidence) / 2, n - 1);
  let half = (t * stddev) / Math.sqrt(n);
  // t · s overflows first for a spread near the limit; s / √n first keeps what can be kept.
  if (!Number.isFinite(half)) half = t * (stddev / Math.sqrt(n));
  return finiteOrNull<[number, number]>([mean - half, mean + half]);
}

export type Better = 'higher' | 'lower';

/** `value` when every number in it (an array or an object of numbers, nested) is finite, else null. */
export function finiteOrNull<T>(value: T): T | null {
  const finite = (v: unknown): boolean =>
    typeof v === 'number' ? Number.isFinite(v) : typeof v === 'object' && v !== null ? Object.values(v).every(finite) : true;
  return finite(value) ? value : null;
}

/**
 * The number `fraction` (in [0, 1)) of the way from `lo` to `hi` (lo ≤ hi), as PostgreSQL's
 * `percentile_cont` interpolates: `lo + fraction · (hi − lo)`, the same double for the same inputs.
 * When hi − lo exceeds the range of a double (lo < 0 < hi, both near the limits), the sum of
 * `lo · (1 − fraction)` and `hi · fraction`, terms of opposite signs that cannot overflow. Always
 * within [lo, hi].
 */
export function interpolate(lo: number, hi: number, fraction: number): number {
  const span = hi - lo;
  const at = Number.isFinite(span) ? lo + fraction * span : lo * (1 - fraction) + hi * fraction;
  return Math.min(hi, Math.max(lo, at));
}

/** The fractions of the percentiles an answer gives: p5, p25, the median, p75 and p95. */
export const PERCENTILES = [0.05, 0.25, 0.5, 0.75, 0.95] as const;

/**
 * The 0-based positions, among the n sorted values, of the two order statistics a percentile lies
 * between (PostgreSQL's `percentile_cont`: ⌊f·(n − 1)⌋ and ⌈f·(n − 1)⌉), and the fraction between them.
 */
export function percentilePosition(fraction: number, n: number): { below: number; above: number; between: number } {
  const at = fraction * (n - 1);
  return { below: Math.floor(at), above: Math.ceil(at), between: at - Math.floor(at) };
}

export interface PerPrice {
  median: number;
  median_ci: [number, number];
}

/**
 * Value for money: higher is better, the metric per unit of money per hour (divided by the price);
 * lower is better, times the price (a cost: less is better). `free` when the flavor costs nothing and
 * higher is better (no finite value per money, docs/decisions.md); `out_of_range` when a quotient or
 * product lies beyond the range of a double (a median near 1e308 times a price, or divided by a
 * tiny one).
 */
export function valuePerPrice(median: number, ci: [number, number], price: number, better: Better): PerPrice | 'free' | 'out_of_range' {
  if (better === 'higher' && price === 0) return 'free';
  const per = better === 'higher' ? (v: number) => v / price : (v: number) => v * price;
  return finiteOrNull<PerPrice>({ median: per(median), median_ci: [per(ci[0]), per(ci[1])] }) ?? 'out_of_range';
}

/** The statistics an answer may leave null because their value lies beyond the range of a double. */
export type OutOfRange = 'stddev' | 'mean_ci' | 'per_price';

/** What PostgreSQL computed of one group's values (services/compare/compare.ts), every number finite. */
export interface GroupValues {
  n: number;
  /** Rounded once from the exact sum (PostgreSQL numeric): within [min, max]. */
  mean: number;
  /** The sample standard deviation; null when n = 1, or when it lies beyond the range of a double. */
  stddev: number | null;
  min: number;
  max: number;
  /** For each of {@link PERCENTILES}: the order statistics at its `below` and `above` positions. */
  around: readonly (readonly [number, number])[];
  /** [x(k), x(n + 1 − k)] of {@link medianIntervalRank}, or [min, max] when k = 0. */
  medianCi: [number, number];
  /** The flavor's price per hour; null without one (or when grouped by site). */
  price: number | null;
}

export interface GroupStatistics {
  mean: number;
  stddev: number | null;
  min: number;
  p5: number;
  p25: number;
  median: number;
  p75: number;
  p95: number;
  max: number;
  median_ci: [number, number];
  mean_ci: [number, number] | null;
  per_price: PerPrice | null;
  out_of_range: OutOfRange[];
}

/**
 * A group's statistics from its values: finite numbers, or null, with the statistics left null
 * because they exceed the range of a double named in `out_of_range` (never an error: one uploaded
 * 1e155 or 1.7e308 must not take a comparison down).
 */
export function groupStatistics(values: GroupValues, confidence: number, better: Better): GroupStatistics {
  const { n, mean, stddev, min, max, medianCi, price } = values;
  const [p5, p25, median, p75, p95] = PERCENTILES.map((fraction, i) => {
    const [below, above] = values.around[i]!;
    return interpolate(below, above, percentilePosition(fraction, n).between);
  }) as [number, number, number, number, number];
  const outOfRange: OutOfRange[] = [];
  if (n > 1 && stddev === null) outOfRange.push('stddev');
  const meanCi = meanInterval(mean, stddev, n, confidence);
  // Null with n > 1: a bound, or the spread it is built from, beyond the range of a double.
  if (meanCi === null && n > 1) outOfRange.push('mean_ci');
  const perPrice = price === null ? null : valuePerPrice(median, medianCi, price, better);
  if (perPrice === 'out_of_range') outOfRange.push('per_price');
  return {
    mean,
    stddev: n > 1 ? stddev : null,
    min,
    p5,
    p25,
    median,
    p75,
    p95,
    max,
    median_ci: medianCi,
    mean_ci: meanCi,
    per_price: typeof perPrice === 'object' ? perPrice : null,
    out_of_range: outOfRange,
  };
}

/** Numbers in ascending order, by comparison (a difference of two finite doubles may overflow). */
export const ascending = (a: number, b: number): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Ranks of intervals (null where `intervals[i]` is null: not ranked): 1 + the number of ranked
 * intervals entirely on the better side of this one. Groups whose intervals overlap share a rank.
 * O(g log g): the bounds are sorted once and counted by binary search.
 */
export function rankIntervals(intervals: readonly ([number, number] | null)[], better: Better): (number | null)[] {
  const ranked = intervals.filter((i): i is [number, number] => i !== null);
  // higher: count the lower bounds above this upper bound; lower: the upper bounds below this lower bound.
  const bounds = ranked.map(([lo, hi]) => (better === 'higher' ? lo : hi)).sort(ascending);
  // The bounds below x (with `atMost`, also those equal to it).
  const count = (x: number, atMost: boolean) => {
    let lo = 0;
    let hi = bounds.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (bounds[mid]! < x || (atMost && bounds[mid] === x)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  return intervals.map((interval) => {
    if (!interval) return null;
    const [lo, hi] = interval;
    return 1 + (better === 'higher' ? bounds.length - count(hi, true) : count(lo, false));
  });
}

type SchemaNode = Record<string, unknown>;

/** The node and the nodes its `$ref`s lead to (at most 32 steps: a cycle ends). */
function withRefs(root: unknown, node: SchemaNode): SchemaNode[] {
  const out = [node];
  let at: SchemaNode | null = node;
  for (let i = 0; i < 32 && at; i++) {
    const next = localRef(root, at.$ref);
    at = isNode(next) ? next : null;
    if (at && !out.includes(at)) out.push(at);
    else break;
  }
  return out;
}

/**
 * The `x-better` annotation ("higher" or "lower") of the property at `path` in a JSON Schema,
 * following `properties` (and `items` / `prefixItems` for integer segments) through local `$ref`s.
 * The annotation on the property node or on a schema it refers to counts; null when absent.
 */
export function betterFromSchema(schema: unknown, path: readonly string[]): Better | null {
  if (!isNode(schema)) return null;
  let nodes = withRefs(schema, schema);
  for (const segment of path) {
    const next: SchemaNode[] = [];
    for (const node of nodes) {
      const properties = node.properties;
      if (isNode(properties) && Object.hasOwn(properties, segment) && isNode(properties[segment])) next.push(properties[segment]);
      if (/^\d+$/.test(segment)) {
        const prefix = node.prefixItems;
        if (Array.isArray(prefix) && isNode(prefix[Number(segment)])) next.push(prefix[Number(segment)] as SchemaNode);
        else if (isNode(node.items)) next.push(node.items);
      }
    }
    if (next.length === 0) return null;
    nodes = next.flatMap((n) => withRefs(schema, n));
  }
  for (const node of nodes) {
    if (node['x-better'] === 'higher' || node['x-better'] === 'lower') return node['x-better'];
  }
  return null;
}
