/**
 * A comparison's answer from what was read of its groups (`ComparisonRead`, compare.ts): what the
 * statement returned and what the baseline's work gave, none of which depends on the confidence,
 * `better`, `rank_by` or `currency`. From one read, an answer at any of them costs the statistics
 * of each group (picked order statistics, t quantiles), the ratio's interval of each group against
 * the baseline (two selections, compare-baseline.ts), the ranks and the order: no statement, and
 * nothing per group that reads the whole baseline. compare-cache.ts remembers reads for that.
 */
import { setImmediate } from 'node:timers/promises';
import type { Static } from '@sinclair/typebox';
import type { CompareQuery, Comparison } from '@benchmarks/sdk/contract/compare';
import { type Baseline, ratioVersus, type Versus } from './compare-baseline.ts';
import { ascending, type Better, groupStatistics, medianIntervalRank, PERCENTILES, rankIntervals } from './compare-stats.ts';

export type CompareParams = Static<typeof CompareQuery>;
export type CompareAnswer = Static<typeof Comparison>;
export type CompareGroupAnswer = CompareAnswer['groups'][number];

/** One group as read, for every confidence. */
export interface GroupRead {
  g: string;
  n: number;
  mean: number;
  /** null when n = 1 or beyond the largest double. */
  stddev: number | null;
  min: number;
  max: number;
  /** PERCENTILES' order statistics, two per fraction. */
  around: number[];
  /**
   * Order statistics x(lowFrom), x(lowFrom + 1), …, and x(highFrom), …: those of the median's
   * interval at every confidence; every value (from x(1)) when `listed`.
   */
  lowFrom: number;
  low: ArrayLike<number>;
  highFrom: number;
  high: ArrayLike<number>;
  /** Whether `low` holds every value, in order (with a baseline: the groups it can be compared with, and itself). */
  listed: boolean;
  /** Others, read by a second statement for one confidence (never seen: `low` and `high` hold them), by rank. */
  more: Map<number, number> | null;
  site: { id: string; name: string };
  flavor: { id: string; name: string } | null;
  price_per_hour: number | null;
  currency: string | null;
  /** Against the baseline, what does not depend on the confidence; null for the baseline itself and a group it cannot be compared with. */
  versus: Versus | null;
}

/** What a comparison reads: the expensive part, the same at every confidence. */
export interface ComparisonRead {
  matched: number;
  excluded: number;
  groups: GroupRead[];
  /** The baseline's values, prepared (null without `baseline`, or when the baseline cannot be compared with). */
  baseline: Baseline | null;
  /** About what it takes in memory, in bytes (what the cache counts). */
  bytes: number;
}

/** x(i) of the group, when read. */
export function orderStatistic(group: GroupRead, i: number): number | undefined {
  if (i >= group.lowFrom && i < group.lowFrom + group.low.length) return group.low[i - group.lowFrom];
  if (i >= group.highFrom && i < group.highFrom + group.high.length) return group.high[i - group.highFrom];
  return group.more?.get(i);
}

/** Whether the read holds the order statistics of every group's median interval at `confidence`. */
export function holdsConfidence(read: ComparisonRead, confidence: number): boolean {
  return read.groups.every((group) => {
    const k = medianIntervalRank(group.n, confidence);
    return k === 0 || (orderStatistic(group, k) !== undefined && orderStatistic(group, group.n + 1 - k) !== undefined);
  });
}

/** What an answer adds to a read: the parameters that only shape it, and the benchmark's part. */
export interface AnswerParams {
  benchmarkId: string;
  metric: string;
  groupBy: 'flavor' | 'site';
  better: Better;
  confidence: number;
  minSamples: number;
  rankBy: 'metric' | 'price';
  currency: string | undefined;
  baseline: string | undefined;
  warnings: NonNullable<CompareAnswer['warnings']>;
}

/** The answer from a read that holds the confidence's order statistics (`holdsConfidence`). */
export async function answerFrom(read: ComparisonRead, params: AnswerParams): Promise<CompareAnswer> {
  const { better, confidence, groupBy, rankBy } = params;
  const groups = read.groups.map((group) => groupAnswer(group, confidence, better, groupBy));
  if (params.baseline) await againstBaseline(read, groups, confidence);
  rank(groups, better, params.minSamples, rankBy, params.currency);
  return {
    benchmark_id: params.benchmarkId,
    metric: params.metric,
    group_by: groupBy,
    better,
    confidence,
    rank_by: rankBy,
    matched: read.matched,
    excluded: read.excluded,
    ...(params.baseline ? { baseline: params.baseline } : {}),
    groups: order_(groups, better, rankBy),
    ...(params.warnings.length ? { warnings: params.warnings } : {}),
  };
}

function groupAnswer(group: GroupRead, confidence: number, better: Better, groupBy: 'flavor' | 'site'): CompareGroupAnswer {
  const { n, around } = group;
  const k = medianIntervalRank(n, confidence);
  const priced = groupBy === 'flavor' && group.price_per_hour !== null && group.currency !== null;
  const { per_price, out_of_range, ...statistics } = groupStatistics(
    {
      n,
      mean: group.mean,
      stddev: group.stddev,
      min: group.min,
      max: group.max,
      around: PERCENTILES.map((_, i) => [around[2 * i]!, around[2 * i + 1]!] as const),
      medianCi: k === 0 ? [group.min, group.max] : [orderStatistic(group, k)!, orderStatistic(group, n + 1 - k)!],
      price: priced ? group.price_per_hour : null,
    },
    confidence,
    better,
  );
  return {
    site: group.site,
    flavor: groupBy === 'flavor' ? group.flavor : null,
    n,
    ...statistics,
    rank: null,
    price: priced ? { per_hour: group.price_per_hour!, currency: group.currency! } : null,
    per_price,
    out_of_range,
  };
}

/**
 * Sets `vs_baseline` on every group (`groups[i]` is `read.groups[i]`'s): null for the baseline
 * itself and for groups it cannot be compared with (fewer than min_samples values, or a value ≤ 0,
 * on either side), and where the ratio lies beyond a double (named in `out_of_range`).
 */
async function againstBaseline(read: ComparisonRead, groups: CompareGroupAnswer[], confidence: number): Promise<void> {
  let since = performance.now();
  for (const [i, group] of read.groups.entries()) {
    const answer = groups[i]!;
    if (!group.versus || !read.baseline) {
      answer.vs_baseline = null;
      continue;
    }
    answer.vs_baseline = ratioVersus(group.versus, read.baseline, confidence);
    if (answer.vs_baseline === null) answer.out_of_range.push('vs_baseline');
    // Many large groups take a while: let the other requests in every 20 ms or so.
    if (performance.now() - since > 20) {
      await setImmediate();
      since = performance.now();
    }
  }
}

/** Sets `rank` on the groups that qualify: enough values and, ranking by price, a price in the currency. */
function rank(
  groups: CompareGroupAnswer[],
  better: Better,
  minSamples: number,
  rankBy: 'metric' | 'price',
  currency: string | undefined,
): void {
  const intervals = groups.map((g) => {
    if (g.n < minSamples) return null;
    if (rankBy === 'metric') return g.median_ci;
    return g.price?.currency === currency && g.per_price ? g.per_price.median_ci : null;
  });
  rankIntervals(intervals, better).forEach((r, i) => {
    groups[i]!.rank = r;
  });
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Rank (unranked last), then the ranked quantity's median, better first (per_price's when ranking by
 * price), then the metric's median, then site and flavor name, then ids: a total order.
 */
function order_(groups: CompareGroupAnswer[], better: Better, rankBy: 'metric' | 'price'): CompareGroupAnswer[] {
  const sign = better === 'higher' ? -1 : 1;
  const nullsLast = (a: number | null | undefined, b: number | null | undefined, cmp: (a: number, b: number) => number) =>
    a == null ? (b == null ? 0 : 1) : b == null ? -1 : cmp(a, b);
  return [...groups].sort(
    (a, b) =>
      nullsLast(a.rank, b.rank, ascending) ||
      (rankBy === 'price'
        ? nullsLast(
            a.rank === null ? null : a.per_price?.median,
            b.rank === null ? null : b.per_price?.median,
            (x, y) => sign * ascending(x, y),
          )
        : 0) ||
      sign * ascending(a.median, b.median) ||
      byCodePoint(a.site.name, b.site.name) ||
      byCodePoint(a.flavor?.name ?? '', b.flavor?.name ?? '') ||
      byCodePoint(a.site.id, b.site.id) ||
      byCodePoint(a.flavor?.id ?? '', b.flavor?.id ?? ''),
  );
}
