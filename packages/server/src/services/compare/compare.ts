/**
 * GET /results:compare (COMPARE.md): one metric of one benchmark's visible results, grouped by
 * flavor or site. The values never leave PostgreSQL: one statement reads the matching results once
 * and returns each group's aggregates and the order statistics its answer needs (`compareSql`); a
 * second reads any it missed (never seen), in the same read-only snapshot.
 *
 * With `baseline`, the groups that can be compared with it also return their sorted values, from
 * which each group's ratio to the baseline is computed in Node (compare-baseline.ts).
 *
 * What is read (`readComparison`: the statements and the baseline's work) does not depend on the
 * confidence, the direction, the ranking or the currency; the answer is computed from it
 * (compare-answer.ts), so that compare-cache.ts can share one read between all of them.
 *
 * Any finite double is a value, and no value makes the answer an error (docs/compare.md, "Extreme
 * values"): the mean and the spread are summed exactly, in PostgreSQL numeric (a double's `avg`
 * and `stddev_samp` overflow from about 1e154: one uploaded 1e155 would make every comparison including
 * it fail), and rounded once to a double; the rest is computed in Node (compare-stats.ts), where a
 * statistic beyond the range of a double is null and named in the group's `out_of_range`.
 *
 * What it costs at a million results (docs/performance.md, scenarios 8 and 9): from the documents,
 * reading the ~50,000 results of a benchmark (one heap page each, as results are stored in upload
 * order) is most of it. From the table of metric values, an index-only scan of the path's values,
 * hashed by group (`tableAggregates`): the numeric mean and variance are most of it.
 */
import { setImmediate } from 'node:timers/promises';
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../core/errors.ts';
import { parseDateBound } from '../../core/dates.ts';
import { getItem } from '../catalogue/catalogue.ts';
import { benchmarks } from '../catalogue/benchmarks.ts';
import { valueAt } from '../query/json-filter.ts';
import { parseJsonPath } from '../query/json-path.ts';
import { resultWhere } from '../results/result-query.ts';
import { betterFromSchema, medianIntervalRank, normalQuantile, PERCENTILES, percentilePosition, type Better } from './compare-stats.ts';
import { type Baseline, prepareBaseline, versus } from './compare-baseline.ts';
import {
  answerFrom,
  type CompareAnswer,
  type CompareParams,
  type ComparisonRead,
  type GroupRead,
  holdsConfidence,
  orderStatistic,
} from './compare-answer.ts';
import { comparePaths, pathWarnings, type SchemaPathsCache } from '../results/path-warnings.ts';
import { completeMetricPath } from '../metrics/metric-values.ts';
import { Where } from '../../db/sql.ts';

export type { CompareAnswer, CompareGroupAnswer, CompareParams } from './compare-answer.ts';

/** The largest finite double, and half the smallest positive one (less rounds to zero), as SQL numerics. */
const MAX_DOUBLE = '1.7976931348623157e308';
const HALF_MIN_DOUBLE = '2.4703282292062328e-324';

/**
 * The largest double plus half its ulp (2^969): what is below rounds to the largest double, what is
 * not to Infinity (the largest double's mantissa is odd, so the tie too).
 */
const ROUNDS_TO_INFINITY =
  '179769313486231575804128197568503885939002350117941411767545627891801114536396644853619288305177042633935372685103635187590438437370702292699562517687521668833979406288629832876259672468103520237920172119362601898937975098263032931492834697134299320496935997324255116936540444370309403987146642102044149678080';

/**
 * A numeric as the nearest double (PostgreSQL's cast refuses what rounds to ±Infinity or to zero):
 * zero when it rounds to zero, null when it rounds beyond the largest double.
 */
const toDouble = (numeric: string) =>
  `case when abs(${numeric}) < ${HALF_MIN_DOUBLE} then 0::float8 when abs(${numeric}) < ${ROUNDS_TO_INFINITY} then (${numeric})::float8 end`;

/**
 * The sample standard deviation from the exact variance (numeric): the square root of its double
 * where that is exact to a double's precision (a numeric variance holds about 16 significant digits
 * at least, its square root far fewer at large magnitudes), else the numeric square root (of a
 * variance beyond a double's range or below 1e-300); null when even that is beyond the largest double.
 */
/**
 * The number `v` (jsonb) as a numeric: 0 when it rounds to zero, null when it is no JSON number or
 * lies beyond the largest double. `tableNumber`: a stored metric value (numeric) likewise.
 */
export const jsonNumber = (v: string) =>
  `case when jsonb_typeof(${v}) = 'number' and ${v} <= '${MAX_DOUBLE}'::jsonb and ${v} >= '-${MAX_DOUBLE}'::jsonb then ` +
  `case when ${v} < '${HALF_MIN_DOUBLE}'::jsonb and ${v} > '-${HALF_MIN_DOUBLE}'::jsonb then 0::numeric else ${v}::numeric end end`;
export const tableNumber = (v: string) =>
  `case when ${v} <= ${MAX_DOUBLE} and ${v} >= -${MAX_DOUBLE} then ` +
  `case when ${v} < ${HALF_MIN_DOUBLE} and ${v} > -${HALF_MIN_DOUBLE} then 0::numeric else ${v} end end`;

const STDDEV = `case when s.var between 1e-300 and 1e300 then sqrt(s.var::float8) else ${toDouble('sqrt(s.var)')} end`;

/**
 * For each of PERCENTILES, the two order statistics (1-based in `xs`) it lies between: an array of
 * x(⌊f·(n − 1)⌋ + 1), x(⌈f·(n − 1)⌉ + 1) pairs, computed with the same double arithmetic as in
 * Node (compare-stats.ts, percentilePosition), which interpolates between them.
 */
const AROUND = `array[${PERCENTILES.map(
  (f) => `s.xs[floor(${f}::float8 * (s.n - 1))::int + 1], s.xs[ceil(${f}::float8 * (s.n - 1))::int + 1]`,
).join(', ')}]`;

/** The segments of `json.<dotted.path>`, as in `sort_by` (services/query/json-path.ts); 422 INVALID_METRIC otherwise. */
export function metricPath(metric: string): string[] {
  const path = parseJsonPath(metric, { bare: false });
  if (!path.ok) {
    throw new AppError(422, 'INVALID_METRIC', `metric '${metric}' is not a JSON path: ${path.reason}; e.g. json.result.score.`, {
      errors: [{ in: 'query', path: 'metric', message: 'must be json.<dotted.path>' }],
    });
  }
  return path.segments;
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
  /** Visible results matching the filters, and those of them with a number at the metric (every row the same). */
  matched: number;
  numbers: number;
  g: string;
  /** Values of the group (0 when its results have no number at the metric: not a group of the answer). */
  n: number;
  mean: number | null;
  /** null when n = 1 or beyond the largest double. */
  stddev: number | null;
  min: number | null;
  max: number | null;
  /** PERCENTILES' order statistics, two per fraction (AROUND); null when `xs` holds every value. */
  around: (number | string)[] | null;
  /**
   * Order statistics around the estimated ranks of the median interval's bounds: `low_x` are
   * x(low_from), x(low_from + 1), …; `high_x` likewise from `high_from`.
   */
  low_from: number;
  low_x: (number | string)[] | null;
  high_from: number;
  high_x: (number | string)[] | null;
  /**
   * The group's values in order, as big-endian doubles (float8send: no text to format or parse),
   * with `baseline` only, and only for a group it can be compared with (n ≥ min_samples, min > 0).
   */
  xs: Buffer | null;
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

/** The normal quantiles of the highest and the lowest confidence the contract allows (0.999, 0.5): the statement reads the median's interval at both and all between. */
const Z_FAR = normalQuantile(1 - (1 - 0.999) / 2);
const Z_NEAR = normalQuantile(1 - (1 - 0.5) / 2);

/**
 * `(g, x, xn)` of every result of the list's WHERE (services/results/result-query.ts, exactly as GET
 * /results): its group and its number at the path, as the API shows it (the nearest double, `x`)
 * and exactly as stored (`xn`, numeric: what the mean and the spread are summed from); both null
 * when the value there is missing or not a JSON number. A number beyond the largest double (only
 * possible in a document stored outside the API, which shows it as null) counts as excluded; one
 * that rounds to zero (likewise: 1e-400) is 0, as the API shows it; neither fails the cast. The
 * bounds compare jsonb with jsonb. `offset 0` keeps each level from being merged into the one
 * above: merged, PostgreSQL would repeat the expressions at every use, reading the path four times
 * per result and computing x once per aggregate.
 */
type Values = { sql: string; params: unknown[] };

function valuesSql(query: CompareParams, path: string[]): Values {
  const { where } = resultWhere(query, { visible: true });
  const group = query.group_by === 'site' ? 'r.site_id' : 'r.flavor_id';
  const value = valueAt('r.json', path); // the path as GET /results filters and sorts read it
  return {
    sql:
      'select g, xn::float8 as x, xn from (' +
      `select g, ${jsonNumber('v')} as xn from (select ${group} as g, ${value.sql} as v from result r ${where.toSql()} offset 0) r offset 0` +
      ') r offset 0',
    params: [...value.params, ...where.params],
  };
}

/** The result filters of a comparison (and of GET /results:changes, which takes the same). */
type TableFilters = Pick<
  CompareParams,
  'site_id' | 'flavor_id' | 'tags_ids' | 'upload_before' | 'upload_after' | 'execution_before' | 'execution_after' | 'filters'
>;

/**
 * Whether the table of metric values (services/metrics/metric-values.ts) holds what the query filters by:
 * site, flavor and execution time are there; tags, upload times and JSON filters need the result.
 */
export function answerableFromTable(query: TableFilters): boolean {
  return !query.filters?.length && !query.tags_ids?.length && !query.upload_before && !query.upload_after;
}

/** The WHERE of `valuesSql`'s results, on the table's rows of one path (the same bounds, resultWhere's). */
export function tableWhere(query: TableFilters, pathId: number): Where {
  const where = new Where().add('v.path_id = ?', pathId).add('not v.hidden');
  if (query.site_id) where.add('v.site_id = ?', query.site_id);
  if (query.flavor_id) where.add('v.flavor_id = ?', query.flavor_id);
  const bound = (value: string) => parseDateBound(value).toISOString();
  if (query.execution_before) where.add('v.execution_datetime < ?::timestamptz', bound(query.execution_before));
  if (query.execution_after) where.add('v.execution_datetime > ?::timestamptz', bound(query.execution_after));
  return where;
}

/**
 * `valuesSql` from the table: one row per result, as there, with the value as stored in the
 * document (numeric; null when there is no number there), so `xn` and `x` are those valuesSql
 * computes. An index-only scan of the path's range of metric_value_path_idx.
 */
function tableValuesSql(query: CompareParams, pathId: number): Values {
  const where = tableWhere(query, pathId);
  const group = query.group_by === 'site' ? 'v.site_id' : 'v.flavor_id';
  return {
    sql: `select g, xn::float8 as x, xn from (select ${group} as g, ${tableNumber('v.value')} as xn from metric_value v ${where.toSql()} offset 0) r offset 0`,
    params: where.params,
  };
}

/** The per-group aggregates the statement reads: `g`, `matched`, `n`, `mean`, `var` (numeric), `min`, `max`, `xs` (float8[], in order). */
type Aggregates = { sql: string; params: unknown[] };

/**
 * The aggregates over `valuesSql`'s (or `tableValuesSql`'s) rows: the exact mean and variance
 * (numeric), and the group's values in order (`array_agg(x order by x)`, sorted once with the grouping).
 */
function valuesAggregates(values: Values): Aggregates {
  return {
    sql:
      'select g, count(*)::int as matched, count(x)::int as n, avg(xn) as mean, var_samp(xn) as var, min(x) as min, max(x) as max, ' +
      `array_agg(x order by x) filter (where x is not null) as xs from (${values.sql}) m group by g`,
    params: values.params,
  };
}

/**
 * The same aggregates read straight from the table, when no value of the path is beyond a double
 * or rounds to zero (`plainValues`): then the value as stored is `xn` and its double is `x`, and
 * nothing is computed per value but the aggregates. The groups are hashed, not sorted: sorting all
 * the values by group and value was most of a comparison's time; each group's values are sorted
 * on their own instead, and arrive in order already (metric_value_path_idx is in value order: a
 * numeric and its nearest double are in the same order), which the sort only checks. The minimum
 * and the maximum are the first and the last of the ordered values. Exported for the test of its plan.
 */
export function tableAggregates(query: CompareParams, pathId: number): Aggregates {
  const where = tableWhere(query, pathId);
  const group = query.group_by === 'site' ? 'v.site_id' : 'v.flavor_id';
  return {
    sql:
      `select g, matched, n, mean, var, xs[1] as min, xs[n] as max, xs from (select ${group} as g, count(*)::int as matched, ` +
      'count(v.value)::int as n, avg(v.value) as mean, var_samp(v.value) as var, ' +
      'case when count(v.value) > 0 then array(select x from unnest(array_agg(v.value::float8)) x order by x) end as xs ' +
      `from metric_value v ${where.toSql()} group by ${group}) a`,
    params: where.params,
  };
}

/**
 * Whether every visible value of the path is a double as stored: none beyond the largest double
 * (possible only in a document stored outside the API) and none that rounds to zero but is not
 * zero (likewise: 1e-400). Four probes of metric_value_path_idx, ordered by value within the path.
 * Exported for tests.
 */
export async function plainValues(em: EntityManager, pathId: number): Promise<boolean> {
  const any = (condition: string) => `exists (select 1 from metric_value v where v.path_id = ? and not v.hidden and ${condition})`;
  const [row] = await em.execute<{ extreme: boolean }[]>(
    `select ${any(`v.value > ${MAX_DOUBLE}`)} or ${any(`v.value < -${MAX_DOUBLE}`)} or ` +
      `${any(`v.value > -${HALF_MIN_DOUBLE} and v.value < 0`)} or ${any(`v.value > 0 and v.value < ${HALF_MIN_DOUBLE}`)} as extreme`,
    [pathId, pathId, pathId, pathId],
  );
  return !row?.extreme;
}

/**
 * The two statements. The first aggregates each group in one pass (`Aggregates`), and returns the
 * order statistics around each percentile, and those of both bounds of the median's interval at
 * every confidence the contract allows: from `window` ranks below ⌊n/2 + 1/2 − z·√n/2⌋ at the highest
 * confidence (z = Z_FAR) to `window` ranks above it at the lowest (Z_NEAR), and the mirror
 * n + 1 − those; the exact ranks (which depend on n only, compare-stats.ts) are picked among them in
 * Node. Should an exact rank fall outside (never seen), the second statement reads the wanted order
 * statistics from `values`, (group, rank) pairs given as one JSON value. `valuesFrom` (with
 * `baseline`): the groups of at least that many values, all positive, also return their values in
 * order, from which the ratios to the baseline are computed in Node (compare-baseline.ts).
 */
function compareSql(query: CompareParams, aggregates: Aggregates, values: Values, window: number, valuesFrom: number | null) {
  const names =
    query.group_by === 'site'
      ? 'left join site si on si.id = s.g'
      : 'left join flavor f on f.id = s.g left join site si on si.id = f.site_id';
  const flavorColumns =
    query.group_by === 'site'
      ? 'null::text as flavor_id, null::text as flavor_name, null::float8 as price_per_hour, null::text as currency'
      : 'f.id::text as flavor_id, f.name as flavor_name, f.price_per_hour::float8 as price_per_hour, f.currency';
  // [a, b]: the ranks around the estimates of the lower bound's; [n + 1 − b, n + 1 − a] the upper's.
  const estimate = (z: string) => `floor(n::float8 / 2 + 0.5 - ${z}::float8 * sqrt(n::float8) / 2)::int`;
  // `listed`: a group whose values are returned whole (with a baseline): its order statistics are taken from them.
  const around =
    'select *, far - ?::int as a, near + ?::int as b from (' +
    `select *, ${estimate('?')} as far, ${estimate('?')} as near, (?::boolean and n >= ?::int and min > 0) as listed from (${aggregates.sql}) s0) s1`;
  const stats =
    'select sum(s.matched) over ()::int as matched, sum(s.n) over ()::int as numbers, s.g::text as g, s.n, ' +
    // The mean lies within [min, max]: least/greatest only guard the rounding of the numeric.
    `${toDouble(`least(greatest(s.mean, -${MAX_DOUBLE}), ${MAX_DOUBLE})`)} as mean, ${STDDEV} as stddev, s.min, s.max, ` +
    `case when not s.listed then ${AROUND} end as around, ` +
    'greatest(1, s.a) as low_from, case when not s.listed then s.xs[s.a : s.b] end as low_x, ' +
    'greatest(1, s.n + 1 - s.b) as high_from, case when not s.listed then s.xs[s.n + 1 - s.b : s.n + 1 - s.a] end as high_x, ' +
    "case when s.listed then (select string_agg(float8send(v), ''::bytea order by o) from unnest(s.xs) with ordinality u(v, o)) end as xs, " +
    `si.id::text as site_id, si.name as site_name, ${flavorColumns} ` +
    `from (${around}) s ${names}`;
  const orderStats =
    'select m.g::text as g, want.i, (array_agg(m.x order by m.x))[want.i] as x ' +
    `from (${values.sql}) m join jsonb_to_recordset(?::jsonb) as want(g uuid, i int) on want.g = m.g ` +
    'where m.x is not null group by m.g, want.i';
  return {
    stats: { sql: stats, params: [window, window, Z_FAR, Z_NEAR, valuesFrom !== null, valuesFrom ?? 0, ...aggregates.params] },
    orderStats: { sql: orderStats, params: values.params },
  };
}

/** `better` as asked, else the schema's `x-better` on the metric's property, else higher. */
function direction(query: CompareParams, schema: unknown, path: string[]): Better {
  return query.better ?? betterFromSchema(schema, path) ?? 'higher';
}

/** Where a comparison may remember what it read (compare-cache.ts): the expensive part, shared by the answers that differ only in what is derived from it. */
export interface SharedReads {
  part<P extends { matched: number; bytes: number }>(key: Record<string, unknown>, compute: () => Promise<P>): Promise<P>;
}

/**
 * The parameters a read depends on: every one but the format and those only the answer uses
 * (confidence, better, rank_by, currency; min_samples but with a baseline, where it chooses the
 * groups whose values are read), with their defaults.
 */
export function readKey(query: CompareParams): Record<string, unknown> {
  const { format: _f, confidence: _c, better: _b, rank_by: _r, currency: _cu, min_samples, ...read } = query;
  const baseline = query.baseline?.toLowerCase();
  return { ...read, group_by: query.group_by ?? 'flavor', ...(baseline ? { baseline, min_samples: min_samples ?? 5 } : {}) };
}

/**
 * The comparison, and the benchmark's name (`image:tag`) for the chart's title. `cache`: where
 * what it reads is remembered, shared with the same comparison at another confidence, direction,
 * ranking or currency. `pickWindow` is for tests (a negative one makes every order statistic come
 * from the second statement), and so is `documents` (read the documents even when the table of
 * metric values could answer): neither is remembered. `schemaPaths`: warn about metric and filter
 * paths the benchmark's schema does not describe.
 */
export async function compareResults(
  em: EntityManager,
  query: CompareParams,
  options: { pickWindow?: number; schemaPaths?: SchemaPathsCache; documents?: boolean; cache?: SharedReads } = {},
): Promise<{ answer: CompareAnswer; benchmarkName: string }> {
  const path = metricPath(query.metric);
  checkRankBy(query);
  const confidence = query.confidence ?? 0.95;
  const minSamples = query.min_samples ?? 5;
  const groupBy = query.group_by ?? 'flavor';
  const benchmark = await getItem(em, benchmarks, query.benchmark_id);
  const warnings = await pathWarnings(em, options.schemaPaths, benchmark.id, comparePaths(path, query));
  const baseline = query.baseline?.toLowerCase();
  const grouped = { ...query, group_by: groupBy };
  const read = () =>
    readComparison(em, grouped, path, benchmark.id, {
      confidence,
      minSamples,
      baseline,
      window: options.pickWindow ?? PICK_WINDOW,
      documents: options.documents ?? false,
    });
  const shared = options.pickWindow === undefined && !options.documents ? options.cache : undefined;
  let comparison = shared ? await shared.part(readKey(grouped), read) : await read();
  // A remembered read lacks an order statistic this confidence needs (never seen): read again.
  if (!holdsConfidence(comparison, confidence)) comparison = await read();
  const answer = await answerFrom(comparison, {
    benchmarkId: benchmark.id,
    metric: query.metric,
    groupBy,
    better: direction(query, benchmark.json_schema, path),
    confidence,
    minSamples,
    rankBy: query.rank_by ?? 'metric',
    currency: query.currency,
    baseline,
    warnings,
  });
  return { answer, benchmarkName: `${benchmark.container_image}:${benchmark.container_tag}` };
}

interface ReadOptions {
  /** The confidence whose order statistics must be there (read by the second statement if need be). */
  confidence: number;
  minSamples: number;
  baseline: string | undefined;
  window: number;
  documents: boolean;
}

/** The statements of a comparison, in one read-only snapshot, and the baseline's work. */
async function readComparison(
  em: EntityManager,
  query: CompareParams,
  path: string[],
  benchmarkId: string,
  options: ReadOptions,
): Promise<ComparisonRead> {
  const { confidence, baseline } = options;
  const documentValues = valuesSql(query, path); // also checks the filters (422) before any statement
  const { rows, totals, groups } = await em.transactional(
    async (tx) => {
      // From the table of metric values when it holds the path and is complete in this snapshot.
      const pathId = options.documents || !answerableFromTable(query) ? null : await completeMetricPath(tx, benchmarkId, path);
      const values = pathId === null ? documentValues : tableValuesSql(query, pathId);
      const aggregates = pathId !== null && (await plainValues(tx, pathId)) ? tableAggregates(query, pathId) : valuesAggregates(values);
      const sql = compareSql(query, aggregates, values, options.window, baseline ? options.minSamples : null);
      const all = await tx.execute<StatsRow[]>(sql.stats.sql, sql.stats.params);
      // No row when nothing matched; a row with n = 0 for a group none of whose results has a number.
      const rows = all.filter((row) => row.n > 0);
      const groups = rows.map(groupRead);
      // The ranks k and n + 1 − k of each group's median interval (none when k = 0: [min, max]).
      const missing: { g: string; i: number }[] = [];
      for (const group of groups) {
        const k = medianIntervalRank(group.n, confidence);
        if (k === 0) continue;
        for (const i of [k, group.n + 1 - k]) if (orderStatistic(group, i) === undefined) missing.push({ g: group.g, i });
      }
      if (missing.length) {
        const more = await tx.execute<{ g: string; i: number | string; x: number }[]>(sql.orderStats.sql, [
          ...sql.orderStats.params,
          JSON.stringify(missing),
        ]);
        const byGroup = new Map(groups.map((group) => [group.g, group]));
        for (const o of more) {
          const group = byGroup.get(o.g)!;
          group.more ??= new Map();
          group.more.set(Number(o.i), Number(o.x));
        }
      }
      return { rows, totals: all[0], groups };
    },
    { readOnly: true, isolationLevel: IsolationLevel.REPEATABLE_READ },
  );
  const prepared = baseline ? await againstBaseline(rows, groups, baseline, query.group_by ?? 'flavor') : null;
  const matched = totals?.matched ?? 0;
  let bytes = 1024 + (prepared ? 40 * prepared.values.length : 0);
  for (const group of groups)
    bytes += 400 + 8 * (group.around.length + group.low.length + group.high.length + (group.versus?.logs.length ?? 0));
  return { matched, excluded: matched - (totals?.numbers ?? 0), groups, baseline: prepared, bytes };
}

const numbers = (xs: (number | string)[] | null): number[] => (xs ?? []).map(Number);

/** A row of the statement as kept: numbers, without the text of its values. */
function groupRead(row: StatsRow): GroupRead {
  const group: GroupRead = {
    g: row.g,
    n: row.n,
    mean: row.mean!,
    stddev: row.stddev,
    min: row.min!,
    max: row.max!,
    around: numbers(row.around),
    lowFrom: row.low_from,
    low: numbers(row.low_x),
    highFrom: row.high_from,
    high: numbers(row.high_x),
    listed: row.xs !== null,
    more: null,
    site: { id: row.site_id!, name: row.site_name! },
    flavor: row.flavor_id === null ? null : { id: row.flavor_id, name: row.flavor_name! },
    price_per_hour: row.price_per_hour,
    currency: row.currency,
    versus: null,
  };
  if (row.xs !== null) {
    // Every value, in order: the order statistics are picked here, by the statement's arithmetic.
    const xs = new Float64Array(row.xs.length / 8);
    for (let i = 0; i < xs.length; i++) xs[i] = row.xs.readDoubleBE(8 * i);
    group.around = PERCENTILES.flatMap((fraction) => {
      const { below, above } = percentilePosition(fraction, row.n);
      return [xs[below]!, xs[above]!];
    });
    group.lowFrom = 1;
    group.low = xs;
    group.high = [];
  }
  return group;
}

/**
 * Sets `versus` on every group the baseline can be compared with (`groups[i]` is `rows[i]`'s):
 * those whose values were returned (at least min_samples, all > 0), on both sides, but the
 * baseline itself. Returns the prepared baseline (null when it has no values returned). 422 when
 * the baseline is not a group.
 */
async function againstBaseline(
  rows: readonly { g: string }[],
  groups: GroupRead[],
  baseline: string,
  groupBy: 'flavor' | 'site',
): Promise<Baseline | null> {
  const at = rows.findIndex((row) => row.g === baseline);
  if (at < 0) {
    throw new AppError(
      422,
      'INVALID_QUERY',
      `baseline ${baseline} is not among the groups: no ${groupBy} with that id has a visible result matching the filters ` +
        `with a number at the metric (with group_by=${groupBy}, baseline is the id of a ${groupBy}).`,
      { errors: [{ in: 'query', path: 'baseline', message: `must be the id of a ${groupBy} among the groups` }] },
    );
  }
  if (!groups[at]!.listed) return null;
  const prepared = prepareBaseline(groups[at]!.low);
  let since = performance.now();
  for (const [i, group] of groups.entries()) {
    if (i !== at && group.listed) group.versus = versus(group.low, prepared);
    // Many large groups take a while: let the other requests in every 20 ms or so.
    if (performance.now() - since > 20) {
      await setImmediate();
      since = performance.now();
    }
  }
  return prepared;
}
