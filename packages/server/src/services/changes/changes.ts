/**
 * GET /results:changes (docs/spec/CHANGES.md): change points in the time series of one metric of
 * one benchmark's visible results, one series per flavor or site. One statement reads every
 * series (`readSeries`, the one place that knows where the values come from); each series is sorted
 * by time, segmented and sketched in Node (changes-series.ts), in a worker thread when the series
 * hold many points in all, its change points remembered by content (changes-segmenter.ts).
 */
import { IsolationLevel } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import type { Changes, ChangesQuery } from '@benchmarks/sdk/contract/changes';
import { parseDateBound } from '../../core/dates.ts';
import { getItem } from '../catalogue/catalogue.ts';
import { benchmarks } from '../catalogue/benchmarks.ts';
import { valueAt } from '../query/json-filter.ts';
import { resultWhere } from '../results/result-query.ts';
import { answerableFromTable, jsonNumber, metricPath, tableNumber, tableWhere } from '../compare/compare.ts';
import { completeMetricPath } from '../metrics/metric-values.ts';
import { betterFromSchema } from '../compare/compare-stats.ts';
import { comparePaths, pathWarnings, type SchemaPathsCache } from '../results/path-warnings.ts';
import { formatTimestamp } from '../../core/format.ts';
import { CompareCache } from '../compare/compare-cache.ts';
import { SKETCH_COLUMNS, type Sketch } from '@benchmarks/sdk/changes-chart';
import { type SeriesSummary, summariseSeries, type TimeAxis } from './changes-series.ts';
import type { DisposalStack } from '../../core/disposal.ts';
import { ChangesSegmenter } from './changes-segmenter.ts';

export type ChangesParams = Static<typeof ChangesQuery>;
export type ChangesAnswer = Static<typeof Changes>;
export type ChangesGroupAnswer = ChangesAnswer['groups'][number];

/** Remembered like comparisons (services/compare/compare-cache.ts): forgotten at every write. */
export class ChangesCache extends CompareCache<ChangesParams, ComputedChanges> {}

/** The answer, the benchmark's name (`image:tag`) for the chart's title and the sketch of the series it draws. */
export interface ComputedChanges {
  answer: ChangesAnswer;
  benchmarkName: string;
  sketch: Sketch;
}

/** One group's series as the statement returns it: `POINT_BYTES` per point, in no particular order (changes-series.ts). */
export interface Series {
  g: string;
  n: number;
  points: Uint8Array;
  /** Its first and last execution times, epoch milliseconds. */
  first: number;
  last: number;
  site: { id: string; name: string };
  flavor: { id: string; name: string } | null;
}

interface SeriesRow {
  matched: number;
  numbers: number;
  g: string;
  n: number;
  points: Uint8Array | null;
  first: number | string | null;
  last: number | string | null;
  site_id: string | null;
  site_name: string | null;
  flavor_id: string | null;
  flavor_name: string | null;
}

/**
 * Every group's series of the results the query matches (GET /results' WHERE, visible results
 * only), in one statement: a value is the JSON number at the path as the API shows it (the nearest
 * double; one beyond the largest double, possible only in a document stored outside the API,
 * counts as excluded, one that rounds to zero is 0). Each group's points come as one bytea of
 * fixed-size binary records (the double, the execution time, the id: no text formatting), in no
 * particular order: sorting them in PostgreSQL was most of the statement's time, by (execution
 * time, id) in Node (changes-series.ts, `sortPoints`) a few milliseconds per 25,000 points.
 *
 * The points come from the table of metric values when it can answer, as compare's do
 * (`answerableFromTable`): its index holds every column a series needs, where the documents cost a
 * heap page each. `documents` (for tests and measurements) reads the documents even then.
 */
export async function readSeries(
  em: EntityManager,
  query: ChangesParams,
  path: string[],
  options: { benchmarkId: string; documents?: boolean },
): Promise<{ matched: number; numbers: number; series: Series[]; source: 'table' | 'documents' }> {
  // Also checks the filters (422) before any statement.
  const { where } = resultWhere(query, { visible: true });
  const bySite = query.group_by === 'site';
  const names = bySite ? 'left join site si on si.id = s.g' : 'left join flavor f on f.id = s.g left join site si on si.id = f.site_id';
  const flavorColumns = bySite ? 'null::text as flavor_id, null::text as flavor_name' : 'f.id::text as flavor_id, f.name as flavor_name';
  // (g, id, t, x) of every matching result: x the number as the API shows it, the nearest double (0
  // for what rounds to zero); null when there is none or it is beyond the largest double.
  const documentPoints = (): { sql: string; params: unknown[] } => {
    const value = valueAt('r.json', path);
    const group = bySite ? 'r.site_id' : 'r.flavor_id';
    return {
      sql:
        `select g, id, t, (${jsonNumber('v')})::float8 as x from (select ${group} as g, r.id, r.execution_datetime as t, ${value.sql} as v ` +
        `from result r ${where.toSql()} offset 0) r offset 0`,
      params: [...value.params, ...where.params],
    };
  };
  // The same from the table: its value is the document's number exactly as stored (numeric), null
  // where the document has none.
  const tablePoints = (pathId: number): { sql: string; params: unknown[] } => {
    const tableFilter = tableWhere(query, pathId);
    const group = bySite ? 'v.site_id' : 'v.flavor_id';
    return {
      sql: `select ${group} as g, v.result_id as id, v.execution_datetime as t, (${tableNumber('v.value')})::float8 as x from metric_value v ${tableFilter.toSql()}`,
      params: tableFilter.params,
    };
  };

  const { rows, source } = await em.transactional(
    async (tx) => {
      // From the table of metric values when it holds the path and is complete in this snapshot.
      const pathId = options.documents || !answerableFromTable(query) ? null : await completeMetricPath(tx, options.benchmarkId, path);
      const points = pathId === null ? documentPoints() : tablePoints(pathId);
      // A point without a number is null, which string_agg leaves out; the first and last times to the
      // millisecond below, as sortPoints reads them.
      const aggregates =
        'select g, count(*)::int as matched, count(x)::int as n, ' +
        "string_agg(float8send(x) || timestamptz_send(t) || uuid_send(id), ''::bytea) as points, " +
        'floor(extract(epoch from min(t) filter (where x is not null)) * 1000)::float8 as first, ' +
        `floor(extract(epoch from max(t) filter (where x is not null)) * 1000)::float8 as last from (${points.sql}) p group by g`;
      const sql =
        'select sum(s.matched) over ()::int as matched, sum(s.n) over ()::int as numbers, s.g::text as g, s.n, s.points, s.first, s.last, ' +
        `si.id::text as site_id, si.name as site_name, ${flavorColumns} from (${aggregates}) s ${names}`;
      const rows = await tx.execute<SeriesRow[]>(sql, points.params);
      return { rows, source: pathId === null ? ('documents' as const) : ('table' as const) };
    },
    { readOnly: true, isolationLevel: IsolationLevel.REPEATABLE_READ },
  );

  const series = rows
    .filter((row) => row.n > 0 && row.points)
    .map(
      (row): Series => ({
        g: row.g,
        n: row.n,
        points: row.points!,
        first: Number(row.first),
        last: Number(row.last),
        site: { id: row.site_id!, name: row.site_name! },
        flavor: bySite ? null : { id: row.flavor_id!, name: row.flavor_name! },
      }),
    );
  return { matched: rows[0]?.matched ?? 0, numbers: rows[0]?.numbers ?? 0, series, source };
}

/** `changed_after` in epoch milliseconds (the router has checked it is a date bound: 422 otherwise). */
function changedAfter(query: ChangesParams): number | null {
  return query.changed_after === undefined ? null : parseDateBound(query.changed_after).getTime();
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

type SeriesOptions = { maxPvalue: number; minMagnitude: number; minSize: number; better: 'higher' | 'lower'; after: number | null };

/** The shared time axis of the chart's panels: from the first point of any series to the last. */
export function timeAxis(series: readonly Series[]): TimeAxis {
  if (series.length === 0) return { from: 0, to: 0, columns: SKETCH_COLUMNS };
  return { from: Math.min(...series.map((s) => s.first)), to: Math.max(...series.map((s) => s.last)), columns: SKETCH_COLUMNS };
}

/** The change points of one series, as the answer shows them (computed in place). */
export function seriesChanges(series: Series, options: SeriesOptions, axis = timeAxis([series])): ChangesGroupAnswer {
  return groupAnswer(series, summariseSeries(series.points, options, axis), options);
}

function groupAnswer(series: Series, summary: SeriesSummary, options: SeriesOptions): ChangesGroupAnswer {
  const time = (ms: number) => formatTimestamp(new Date(ms));
  return {
    site: series.site,
    flavor: series.flavor,
    n: summary.n,
    first: time(summary.first),
    last: time(summary.last),
    segments: summary.segments.map((s) => ({
      from: time(s.from),
      to: time(s.to),
      n: s.n,
      mean: s.mean,
      median: s.median,
      stddev: s.stddev,
    })),
    changes: summary.changes
      .filter((c) => options.after === null || c.at >= options.after)
      .map((c) => ({
        at: time(c.at),
        result_id: c.result_id,
        index: c.index,
        before: c.before,
        after: c.after,
        magnitude: c.magnitude,
        pvalue: c.pvalue,
        direction: c.after.mean > c.before.mean === (options.better === 'higher') ? 'improvement' : 'regression',
        // Marked per caller after any cache (services/alerts/marks.ts).
        record: null,
      })),
  };
}

/**
 * The answer of GET /results:changes. `segmenter`: where the series are segmented (in a worker thread
 * when they hold many points in all), and the change points of series seen before remembered
 * (changes-segmenter.ts); without it every series is segmented in place. `documents` (tests,
 * measurements): read the documents even when the table of metric values could answer.
 */
export async function findChanges(
  em: EntityManager,
  query: ChangesParams,
  options: { schemaPaths?: SchemaPathsCache; segmenter?: ChangesSegmenter; documents?: boolean } = {},
): Promise<ComputedChanges> {
  const path = metricPath(query.metric);
  const after = changedAfter(query);
  const groupBy = query.group_by ?? 'flavor';
  const maxPvalue = query.max_pvalue ?? 0.001;
  const minMagnitude = query.min_magnitude ?? 0.02;
  const minSize = query.min_size ?? 5;
  const benchmark = await getItem(em, benchmarks, query.benchmark_id);
  const warnings = await pathWarnings(em, options.schemaPaths, benchmark.id, comparePaths(path, query));
  const better = query.better ?? betterFromSchema(benchmark.json_schema, path) ?? 'higher';
  const { matched, numbers, series } = await readSeries(em, { ...query, group_by: groupBy }, path, {
    benchmarkId: benchmark.id,
    documents: options.documents,
  });
  series.sort(
    (a, b) =>
      byCodePoint(a.site.name, b.site.name) ||
      byCodePoint(a.flavor?.name ?? '', b.flavor?.name ?? '') ||
      byCodePoint(a.site.id, b.site.id) ||
      byCodePoint(a.flavor?.id ?? '', b.flavor?.id ?? ''),
  );
  const seriesOptions = { maxPvalue, minMagnitude, minSize, better, after };
  const axis = timeAxis(series);
  const summaries = options.segmenter
    ? await options.segmenter.segment(series, seriesOptions, axis)
    : series.map((s) => summariseSeries(s.points, seriesOptions, axis));
  const groups = series.map((s, i) => groupAnswer(s, summaries[i]!, seriesOptions));
  const sketch: Sketch = { ...axis, groups: summaries.map((summary) => summary.sketch) };
  const answer: ChangesAnswer = {
    benchmark_id: benchmark.id,
    metric: query.metric,
    group_by: groupBy,
    better,
    max_pvalue: maxPvalue,
    min_magnitude: minMagnitude,
    min_size: minSize,
    matched,
    excluded: matched - numbers,
    groups,
    ...(warnings.length ? { warnings } : {}),
  };
  return { answer, benchmarkName: `${benchmark.container_image}:${benchmark.container_tag}`, sketch };
}

/** The changes domain: answers remembered for `ttlMs`, and the segmenter, whose worker ends with the app. */
export function startChanges(stack: DisposalStack, ttlMs: number): { cache: ChangesCache; segmenter: ChangesSegmenter } {
  return { cache: new ChangesCache({ ttlMs }), segmenter: stack.use('changes segmenter', new ChangesSegmenter(), (c) => c.close()) };
}
