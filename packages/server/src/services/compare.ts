/**
 * GET /results:compare (COMPARE.md): one metric of one benchmark's visible results, grouped by
 * flavor or site. The values never leave PostgreSQL: one statement reads the matching results once
 * and computes the counts, the aggregates and the percentiles of every group, and returns the few
 * order statistics around the normal approximation of the median interval's ranks; the exact ranks
 * (which depend on the group's n only, compare-stats.ts) are picked among them. Should one fall
 * outside (never seen: the approximation is within 1), a second statement reads it, in the same
 * read-only snapshot.
 */
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import type { CompareQuery, Comparison } from '@benchmarks/sdk/contract/compare';
import { AppError } from '../core/errors.ts';
import { getItem } from './catalogue.ts';
import { benchmarks } from './benchmarks.ts';
import { parsePath, valueAt } from './json-filter.ts';
import { resultWhere } from './result-query.ts';
import { betterFromSchema, meanInterval, medianIntervalRank, normalQuantile, rankIntervals, type Better } from './compare-stats.ts';

export type CompareParams = Static<typeof CompareQuery>;
export type CompareAnswer = Static<typeof Comparison>;
export type CompareGroupAnswer = CompareAnswer['groups'][number];

/** Percentiles read with `percentile_cont`, in this order (constants: written into the statement). */
const FRACTIONS = 'array[0.05, 0.25, 0.5, 0.75, 0.95]::float8[]';

/** The segments of `json.<dotted.path>`; 422 INVALID_METRIC otherwise. */
export function metricPath(metric: string): string[] {
  const path = metric.startsWith('json.') ? parsePath(metric.slice('json.'.length)) : null;
  if (!path) {
    throw new AppError(
      422,
      'INVALID_METRIC',
      `metric must be json.<dotted.path> with non-empty segments (at most 20 segments and 200 characters), e.g. json.result.score; got '${metric}'.`,
      { errors: [{ in: 'query', path: 'metric', message: 'must be json.<dotted.path>' }] },
    );
  }
  return path;
}

function checkRankBy(query: CompareParams): void {
  if (query.rank_by !== 'price') return;
  if (!query.currency) {
    throw new AppError(
      422,
      'INVALID_QUERY',
      'rank_by=price needs currency (e.g. currency=EUR): prices in different currencies cannot be ranked together.',
      {
        errors: [{ in: 'query', path: 'currency', message: 'is required with rank_by=price' }],
      },
    );
  }
  if (query.group_by === 'site') {
    throw new AppError(422, 'INVALID_QUERY', 'rank_by=price needs group_by=flavor: prices belong to flavors, not sites.', {
      errors: [{ in: 'query', path: 'rank_by', message: 'price needs group_by=flavor' }],
    });
  }
}

interface StatsRow {
  matched: number;
  numbers: number;
  g: string | null;
  n: number | null;
  mean: number | null;
  stddev: number | null;
  min: number | null;
  max: number | null;
  ps: (number | string)[] | null;
  /** Ranks (from either end) and values of the order statistics around the estimated k. */
  pick_i: (number | string)[] | null;
  pick_x: (number | string)[] | null;
  site_id: string | null;
  site_name: string | null;
  flavor_id: string | null;
  flavor_name: string | null;
  price_per_hour: number | null;
  currency: string | null;
}

/**
 * How far (in ranks) around the estimate the statement returns order statistics; the estimate is
 * within 1 of the exact rank (compare-stats.test.ts).
 */
export const PICK_WINDOW = 3;

/**
 * The two statements. `m` holds the results of the list's WHERE (services/result-query.ts, exactly
 * as GET /results), each with `x`, its number at the path as double precision (null when the value
 * there is missing or not a JSON number). A number beyond double precision's range (only possible
 * in a document stored outside the API) counts as excluded rather than failing the cast.
 */
function compareSql(query: CompareParams, path: string[], z: number, window: number) {
  const { where } = resultWhere(query, { visible: true });
  const group = query.group_by === 'site' ? 'r.site_id' : 'r.flavor_id';
  const value = valueAt('r.json', path); // the path as GET /results filters and sorts read it
  const values =
    // m: every matching result, x its number (null without one). The bounds compare jsonb with jsonb
    // (no numeric is built per row); case keeps the cast to numbers within range.
    `with m as (select g, case when jsonb_typeof(v) = 'number' and v <= '1e308'::jsonb and v >= '-1e308'::jsonb then v::float8 end as x ` +
    `from (select ${group} as g, ${value.sql} as v from result r ${where.toSql()}) r) `;
  const valueParams = [...value.params, ...where.params];
  const names =
    query.group_by === 'site'
      ? 'left join site si on si.id = s.g'
      : 'left join flavor f on f.id = s.g left join site si on si.id = f.site_id';
  const flavorColumns =
    query.group_by === 'site'
      ? 'null::text as flavor_id, null::text as flavor_name, null::float8 as price_per_hour, null::text as currency'
      : 'f.id::text as flavor_id, f.name as flavor_name, f.price_per_hour::float8 as price_per_hour, f.currency';
  // Each value's rank from the nearer end of its group's order (`least(i, n + 1 − i)`), kept when
  // it is within `window` of ⌊n/2 + 1/2 − z·√n/2⌋: both bounds of the median's interval at once.
  const picks =
    'p as (select g, array_agg(i::int order by i) as pick_i, array_agg(x order by i) as pick_x from (' +
    'select g, x, i, least(i, n + 1 - i) as depth, floor(n::float8 / 2 + 0.5 - ?::float8 * sqrt(n::float8) / 2) as estimate from (' +
    'select g, x, row_number() over (partition by g order by x) as i, count(*) over (partition by g) as n from m where x is not null) w) d ' +
    'where depth between estimate - ? and estimate + ? group by g) ';
  const stats =
    values +
    `, ${picks}` +
    'select t.matched, t.numbers, s.g::text as g, s.n, s.mean, s.stddev, s.min, s.max, s.ps, p.pick_i, p.pick_x, ' +
    `si.id::text as site_id, si.name as site_name, ${flavorColumns} ` +
    'from (select count(*)::int as matched, count(x)::int as numbers from m) t ' +
    'left join (select g, count(*)::int as n, avg(x) as mean, stddev_samp(x) as stddev, min(x) as min, max(x) as max, ' +
    `percentile_cont(${FRACTIONS}) within group (order by x) as ps from m where x is not null group by g) s on true ` +
    'left join p on p.g = s.g ' +
    names;
  const orderStats =
    values +
    'select o.g::text as g, o.i, o.x from (select g, x, row_number() over (partition by g order by x) as i from m where x is not null) o ' +
    // The (group, rank) pairs as one JSON value: one statement text whatever their number.
    'join jsonb_to_recordset(?::jsonb) as want(g uuid, i int) on want.g = o.g and want.i = o.i';
  return { stats: { sql: stats, params: [...valueParams, z, window, window] }, orderStats: { sql: orderStats, params: valueParams } };
}

/** `better` as asked, else the schema's `x-better` on the metric's property, else higher. */
function direction(query: CompareParams, schema: unknown, path: string[]): Better {
  return query.better ?? betterFromSchema(schema, path) ?? 'higher';
}

/**
 * The comparison, and the benchmark's name (`image:tag`) for the chart's title. `pickWindow` is
 * for tests (a negative one makes every order statistic come from the second statement).
 */
export async function compareResults(
  em: EntityManager,
  query: CompareParams,
  options: { pickWindow?: number } = {},
): Promise<{ answer: CompareAnswer; benchmarkName: string }> {
  const path = metricPath(query.metric);
  checkRankBy(query);
  const confidence = query.confidence ?? 0.95;
  const minSamples = query.min_samples ?? 5;
  const groupBy = query.group_by ?? 'flavor';
  const rankBy = query.rank_by ?? 'metric';
  const benchmark = await getItem(em, benchmarks, query.benchmark_id);
  const better = direction(query, benchmark.json_schema, path);
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const sql = compareSql({ ...query, group_by: groupBy }, path, z, options.pickWindow ?? PICK_WINDOW);

  const { rows, at } = await em.transactional(
    async (tx) => {
      const rows = await tx.execute<StatsRow[]>(sql.stats.sql, sql.stats.params);
      const at = new Map<string, number>();
      for (const row of rows) {
        row.pick_i?.forEach((i, j) => {
          at.set(`${row.g} ${Number(i)}`, Number(row.pick_x![j]));
        });
      }
      // The ranks k and n + 1 − k of each group's median interval (none when k = 0: [min, max]).
      const missing: { g: string; i: number }[] = [];
      for (const row of rows) {
        if (row.g === null) continue;
        const k = medianIntervalRank(row.n!, confidence);
        if (k === 0) continue;
        for (const i of [k, row.n! + 1 - k]) if (!at.has(`${row.g} ${i}`)) missing.push({ g: row.g, i });
      }
      if (missing.length) {
        const more = await tx.execute<{ g: string; i: number | string; x: number }[]>(sql.orderStats.sql, [
          ...sql.orderStats.params,
          JSON.stringify(missing),
        ]);
        for (const o of more) at.set(`${o.g} ${Number(o.i)}`, Number(o.x));
      }
      return { rows, at };
    },
    { readOnly: true, isolationLevel: IsolationLevel.REPEATABLE_READ },
  );

  const groups = rows
    .filter((row) => row.g !== null)
    .map((row) => groupAnswer(row, confidence, better, groupBy, (i) => at.get(`${row.g} ${i}`)));
  rank(groups, better, minSamples, rankBy, query.currency);
  const answer: CompareAnswer = {
    benchmark_id: benchmark.id,
    metric: query.metric,
    group_by: groupBy,
    better,
    confidence,
    rank_by: rankBy,
    matched: rows[0]?.matched ?? 0,
    excluded: (rows[0]?.matched ?? 0) - (rows[0]?.numbers ?? 0),
    groups: order_(groups, better, rankBy),
  };
  return { answer, benchmarkName: `${benchmark.container_image}:${benchmark.container_tag}` };
}

function groupAnswer(
  row: StatsRow,
  confidence: number,
  better: Better,
  groupBy: 'flavor' | 'site',
  orderStat: (i: number) => number | undefined,
): CompareGroupAnswer {
  const n = row.n!;
  const [p5, p25, median, p75, p95] = row.ps!.map(Number) as [number, number, number, number, number];
  const k = medianIntervalRank(n, confidence);
  const medianCi: [number, number] = k === 0 ? [row.min!, row.max!] : [orderStat(k)!, orderStat(n + 1 - k)!];
  const stddev = n > 1 ? row.stddev : null;
  const priced = groupBy === 'flavor' && row.price_per_hour !== null && row.currency !== null;
  return {
    site: { id: row.site_id!, name: row.site_name! },
    flavor: groupBy === 'flavor' ? { id: row.flavor_id!, name: row.flavor_name! } : null,
    n,
    mean: row.mean!,
    stddev,
    min: row.min!,
    p5,
    p25,
    median,
    p75,
    p95,
    max: row.max!,
    median_ci: medianCi,
    mean_ci: meanInterval(row.mean!, stddev, n, confidence),
    rank: null,
    price: priced ? { per_hour: row.price_per_hour!, currency: row.currency! } : null,
    per_price: priced ? perPrice(median, medianCi, row.price_per_hour!, better) : null,
  };
}

/**
 * Value for money: higher is better, the metric per unit of money per hour (divided by the price);
 * lower is better, times the price (a cost: less is better). A free flavor has no finite value
 * per money when higher is better: null (docs/decisions.md).
 */
function perPrice(median: number, ci: [number, number], price: number, better: Better): CompareGroupAnswer['per_price'] {
  if (better === 'higher') {
    if (price === 0) return null;
    return { median: median / price, median_ci: [ci[0] / price, ci[1] / price] };
  }
  return { median: median * price, median_ci: [ci[0] * price, ci[1] * price] };
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
      nullsLast(a.rank, b.rank, (x, y) => x - y) ||
      (rankBy === 'price'
        ? nullsLast(a.rank === null ? null : a.per_price?.median, b.rank === null ? null : b.per_price?.median, (x, y) => sign * (x - y))
        : 0) ||
      sign * (a.median - b.median) ||
      byCodePoint(a.site.name, b.site.name) ||
      byCodePoint(a.flavor?.name ?? '', b.flavor?.name ?? '') ||
      byCodePoint(a.site.id, b.site.id) ||
      byCodePoint(a.flavor?.id ?? '', b.flavor?.id ?? ''),
  );
}
