/**
 * The SQL of result lists: filters, search terms, sort and pagination. One query for the page and
 * one for its total, with the same WHERE; every user value is a bound parameter.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppError } from '../../core/errors.ts';
import { parseDateBound } from '../../core/dates.ts';
import { filterSql, parseFilters, type Fragment, type JsonFilter } from '../query/json-filter.ts';
import { prefixedJsonPath } from '../query/json-path.ts';
import type { PageRequest } from '../query/pagination.ts';
import { parseSort, type SortTerm } from '../query/sort.ts';
import { BENCHMARK_NAME, resultSortKeys, SORT_FIELDS, type Join } from '../query/result-keys.ts';
import { orderSql, type KeyTerm } from '../query/keyset.ts';
import { fingerprint, ListWalk } from '../query/cursor.ts';
import { likePattern, Where } from '../../db/sql.ts';
import type { TotalCache } from './total-cache.ts';
import { prepared } from '../../db/bound-driver.ts';
import { poolIsQuiet } from '../../db/pool.ts';
import {
  filterCountSql,
  filterFragment,
  keyedOnly,
  PROBE_MARGIN,
  pathIdOf,
  sortedAfter,
  sortedCountSql,
  sortedFrom,
  sortedKeysSql,
  sortedOrder,
  sortedWhere,
  tableCountSql,
  workMemFor,
  type CountBounds,
  type MetricPaths,
  type MetricTable,
  type TableFilter,
} from '../metrics/metric-lookup.ts';
import { withWorkMem } from '../../db/work-mem.ts';

/** The query parameters of /results, /results:search and /users/self/results. */
export interface ResultListQuery {
  benchmark_id?: string;
  site_id?: string;
  flavor_id?: string;
  tags_ids?: string[];
  upload_before?: string;
  upload_after?: string;
  execution_before?: string;
  execution_after?: string;
  filters?: string[];
  terms?: string[];
  sort_by?: string;
  page?: number;
  per_page?: number;
  cursor?: string;
}

/** Which results a list may show: the visible ones, or every one of an uploader (hidden too). */
export type ResultScope = { visible: true } | { uploader: { iss: string; sub: string } };

/**
 * A result row as the list and get statements return it: the document as JSON text, and the
 * version of each catalogue row it embeds (services/catalogue/embeds.ts), tags as `id version` pairs in
 * display order.
 */
export interface ResultTextRow {
  id: string;
  benchmark_id: string;
  site_id: string;
  flavor_id: string;
  json: string;
  execution_datetime: Date;
  upload_datetime: Date;
  hidden: boolean;
  benchmark_version: string;
  site_version: string;
  flavor_version: string;
  tag_versions: string | null;
}

export const RESULT_COLUMNS = 'r.id, r.benchmark_id, r.site_id, r.flavor_id, r.json, r.execution_datetime, r.upload_datetime, r.hidden';

/**
 * What is sent for each selected result `p`. Computed over the page only (the outer select of a
 * limited subquery), never over every row a sort has to consider.
 */
export const RESULT_OUTPUTS =
  'p.id, p.benchmark_id, p.site_id, p.flavor_id, p.json::text as json, p.execution_datetime, p.upload_datetime, p.hidden, ' +
  '(select b.xmin::text from benchmark b where b.id = p.benchmark_id) as benchmark_version, ' +
  '(select s.xmin::text from site s where s.id = p.site_id) as site_version, ' +
  '(select f.xmin::text from flavor f where f.id = p.flavor_id) as flavor_version, ' +
  "(select string_agg(t.id::text || ' ' || t.xmin::text, ',' order by t.name, t.id) from result_tag rt join tag t on t.id = rt.tag_id where rt.result_id = p.id) as tag_versions";

/** The statement of one result by id, hidden or not; prepared (the most frequent statement, one text). */
export const RESULT_BY_ID_SQL = prepared(`select ${RESULT_OUTPUTS} from (select ${RESULT_COLUMNS} from result r where r.id = ?) p`);

const JOINS: Record<Join, string> = {
  b: 'join benchmark b on b.id = r.benchmark_id',
  s: 'join site s on s.id = r.site_id',
  f: 'join flavor f on f.id = r.flavor_id',
};

export const DEFAULT_RESULT_SORT = '+execution_datetime';
const SORT_TEXT = `${Object.keys(SORT_FIELDS).join(', ')}, json.<dotted.path>`;

function isSortField(field: string): boolean {
  if (Object.hasOwn(SORT_FIELDS, field)) return true;
  return prefixedJsonPath(field) !== null;
}

export function parseResultSort(sortBy: string | undefined): SortTerm[] {
  return parseSort(sortBy, isSortField, SORT_TEXT, DEFAULT_RESULT_SORT);
}

const bound = (value: string) => parseDateBound(value).toISOString();

/**
 * How a list reads the metric values table (services/metrics/metric-lookup.ts), when it does: the
 * benchmark's paths there, and the one its sort walks (null: the sort reads the documents).
 */
export interface MetricPlan {
  paths: MetricPaths;
  sortPathId: number | null;
  /** Filtered lists sorted by the table with at most this many results look their matches up by id. */
  fewMatches: number;
  /** MetricTable.probeEntries. */
  probeEntries: number;
}

/** The table's lookup for a numeric filter on one of the plan's paths; null: read the document. */
function tableFilter(plan: MetricPlan | undefined, filter: JsonFilter, idColumn: string): Fragment | null {
  if (!plan || filter.value.kind !== 'number') return null;
  const id = pathIdOf(plan.paths, filter.path);
  return id === undefined ? null : filterFragment(id, filter, idColumn);
}

/**
 * The WHERE of a result list and the joins it needs. Throws 422 on a malformed filter. With
 * `metric`, numeric filters on its paths look the table up for the result whose id is `idColumn`
 * (default `r.id`): the same rows (services/metrics/metric-lookup.ts).
 */
export function resultWhere(
  query: ResultListQuery,
  scope: ResultScope,
  options: { termsAsIdSets?: boolean; metric?: MetricPlan; idColumn?: string } = {},
): { where: Where; joins: Set<Join> } {
  const where = new Where();
  const joins = new Set<Join>();
  if ('visible' in scope) where.add('not r.hidden');
  else where.add('r.uploader_iss = ? and r.uploader_sub = ?', scope.uploader.iss, scope.uploader.sub);
  if (query.benchmark_id) where.add('r.benchmark_id = ?', query.benchmark_id);
  if (query.site_id) where.add('r.site_id = ?', query.site_id);
  if (query.flavor_id) where.add('r.flavor_id = ?', query.flavor_id);
  for (const tagId of new Set(query.tags_ids ?? [])) {
    where.add('exists (select 1 from result_tag rt where rt.result_id = r.id and rt.tag_id = ?)', tagId);
  }
  if (query.upload_before) where.add('r.upload_datetime < ?::timestamptz', bound(query.upload_before));
  if (query.upload_after) where.add('r.upload_datetime > ?::timestamptz', bound(query.upload_after));
  if (query.execution_before) where.add('r.execution_datetime < ?::timestamptz', bound(query.execution_before));
  if (query.execution_after) where.add('r.execution_datetime > ?::timestamptz', bound(query.execution_after));
  for (const filter of parseFilters(query.filters)) {
    const { sql, params } = tableFilter(options.metric, filter, options.idColumn ?? 'r.id') ?? filterSql(filter, 'r.json');
    where.add(sql, ...params);
  }
  for (const term of query.terms ?? []) {
    if (term === '') continue;
    if (term.includes('\u0000')) {
      throw new AppError(422, 'INVALID_QUERY', 'A search term contains the NUL character (%00).', {
        errors: [{ in: 'query', path: 'terms', message: 'must not contain the NUL character' }],
      });
    }
    // The catalogue tables are small: find their matching ids once (init plans), not per result.
    const p = likePattern(term);
    if (options.termsAsIdSets && 'visible' in scope) {
      // The same condition as the set of matching visible ids, one index-driven part per kind:
      // counting through it reads only the matches (a tag term's 35,000 of a million results
      // instead of walking every visible result), where the condition below suits a page better.
      where.add(
        'r.id in (' +
          `select x.id from result x where not x.hidden and x.benchmark_id = any(array(select b.id from benchmark b where ${BENCHMARK_NAME} ilike ? escape '\\')) ` +
          `union all select x.id from result x where not x.hidden and x.site_id = any(array(select s.id from site s where s.name ilike ? escape '\\' or s.address ilike ? escape '\\')) ` +
          `union all select x.id from result x where not x.hidden and x.flavor_id = any(array(select f.id from flavor f where f.name ilike ? escape '\\')) ` +
          `union all select rt.result_id from result_tag rt join tag t on t.id = rt.tag_id where t.name ilike ? escape '\\')`,
        p,
        p,
        p,
        p,
        p,
      );
      continue;
    }
    where.add(
      `r.benchmark_id = any(array(select b.id from benchmark b where ${BENCHMARK_NAME} ilike ? escape '\\')) ` +
        `or r.site_id = any(array(select s.id from site s where s.name ilike ? escape '\\' or s.address ilike ? escape '\\')) ` +
        `or r.flavor_id = any(array(select f.id from flavor f where f.name ilike ? escape '\\')) ` +
        `or exists (select 1 from result_tag rt join tag t on t.id = rt.tag_id where rt.result_id = r.id and t.name ilike ? escape '\\')`,
      p,
      p,
      p,
      p,
      p,
    );
  }
  return { where, joins };
}

const joinSql = (joins: Set<Join>) =>
  (['b', 's', 'f'] as const)
    .filter((j) => joins.has(j))
    .map((j) => JOINS[j])
    .join(' ');

/**
 * The one JSON path a list is sorted by, when the list is of one benchmark's visible results
 * sorted by nothing else: the case the metric values table can serve.
 */
export function metricSortPath(query: ResultListQuery, scope: ResultScope): string[] | null {
  if (!('visible' in scope) || !query.benchmark_id) return null;
  const sort = parseResultSort(query.sort_by).filter((t) => t.field !== 'id');
  return sort.length === 1 ? prefixedJsonPath(sort[0]!.field) : null;
}

/** Sort fields an index serves, with or without an id filter (the visible and uploader indexes). */
const INDEXED_SORT_FIELDS = new Set(['id', 'execution_datetime', 'upload_datetime']);

/**
 * Whether a list is of the kind that may have to read many results to find one page: search
 * terms, JSON filters (from the metric values table or the documents), or a sort no index serves
 * (a JSON path the table does not sort, a name, a catalogue id). Such lists are admitted a few at a
 * time (services/runtime/admission.ts ExpensiveListAdmission). Date and id filters, tags, the
 * default order and a sort by the table's path walk an index.
 */
export function isExpensiveList(query: ResultListQuery, plan: MetricPlan | null): boolean {
  if (query.terms?.some((t) => t !== '')) return true;
  if ((query.filters ?? []).length > 0) return true;
  if (plan?.sortPathId != null) return false;
  return parseResultSort(query.sort_by).some((term) => !INDEXED_SORT_FIELDS.has(term.field));
}

/** The order of a list's query as key terms (services/query/result-keys.ts), and the joins they need. */
function sortKeys(query: ResultListQuery): { keys: KeyTerm[]; joins: Set<Join> } {
  return resultSortKeys(parseResultSort(query.sort_by));
}

/**
 * The walk of a result list (services/query/cursor.ts): by page, or after the query's cursor, which must
 * be one of this list's (the same WHERE with the same values, the same order). Throws 422 on a
 * malformed filter or sort, on cursor with page, and on a cursor of another list.
 */
export function resultWalk(query: ResultListQuery, scope: ResultScope): ListWalk {
  const { where } = resultWhere(query, scope);
  const { keys } = sortKeys(query);
  const order = orderSql(keys);
  return ListWalk.start(query, keys, fingerprint('results', where.toSql(), where.params, order.sql, order.params));
}

/** Where the keys of a result named by a cursor are read again (ListWalk.resolve): the result and its joins. */
export function resultKeysFrom(query: ResultListQuery): string {
  return `result r ${joinSql(sortKeys(query).joins)}`;
}

/**
 * The SQL of one page and of its total (exposed for EXPLAIN in tests and benchmarks). With
 * `metric` (services/metrics/metric-lookup.ts), numeric filters on the table's paths look the
 * table up, and a sort by one of its paths walks the table (`table`: the numbers part, then the
 * rest from the documents). With `walk` after a cursor (resolved), the rows after the cursor's
 * result and one more row than a page are read; the page's outputs read each row's sort keys
 * (`_k0`, …) for the next cursor. Without `walk`, the query's page by number.
 */
export function resultListSql(
  query: ResultListQuery,
  scope: ResultScope,
  options: { walk?: ListWalk; metric?: MetricPlan } = {},
): { page: Fragment; count: Fragment; request: PageRequest; table?: SortedByTable; sets?: TableSets } {
  const walk = options.walk ?? resultWalk({ ...query, cursor: undefined }, scope);
  const metric = options.metric;
  const sets = metric ? tableSets(query, scope, metric) : undefined;
  const { where, joins } = resultWhere(query, scope, { metric });
  const counted = query.terms?.some((t) => t !== '') ? resultWhere(query, scope, { termsAsIdSets: true, metric }) : { where, joins };
  const count = {
    sql: `select count(*)::int as total from result r ${joinSql(counted.joins)} ${counted.where.toSql()}`,
    params: counted.where.params,
  };
  const sorted = sortKeys(query);
  for (const join of sorted.joins) joins.add(join);
  const order = orderSql(sorted.keys);
  const request = { page: walk.page, per_page: walk.perPage };
  const { limit, offset } = walk;
  const after = walk.after();
  const keyColumns = walk.keyColumns(true);
  const outputs = `${RESULT_OUTPUTS}, ${keyColumns.sql}`;
  if (metric?.sortPathId != null) {
    const table = sortedByTable(query, scope, metric, metric.sortPathId, walk, outputs, keyColumns.params);
    // Rows after the numbers in the list's order (no number at the path: missing or null), from the documents.
    const sortPath = metricSortPath(query, scope)!;
    const rest = where.and(both({ sql: "jsonb_typeof(r.json #> ?::text[]) is distinct from 'number'", params: [sortPath] }, after));
    table.tail = (tailOffset, tailLimit) => ({
      sql: `select ${outputs} from (select ${RESULT_COLUMNS} from result r ${joinSql(joins)} ${rest.sql} ${order.sql} limit ? offset ?) p`,
      params: [...keyColumns.params, ...rest.params, ...order.params, tailLimit, tailOffset],
    });
    return { page: table.page, count: sets ? sets.total(sets.filters) : count, request, table, ...(sets ? { sets } : {}) };
  }
  const rows = where.and(after);
  return {
    page: {
      // The subquery keeps its order: the outer select only adds columns to each row.
      sql: `select ${outputs} from (select ${RESULT_COLUMNS} from result r ${joinSql(joins)} ${rows.sql} ${order.sql} limit ? offset ?) p`,
      params: [...keyColumns.params, ...rows.params, ...order.params, limit, offset],
    },
    count: sets ? sets.total(sets.filters) : count,
    request,
    ...(sets ? { sets } : {}),
  };
}

/**
 * The numeric filters of a list bounded only by what the table holds (`tableOnly`, at least one
 * filter): what choosing each filter's set takes (services/metrics/metric-lookup.ts, `setsSql`).
 */
export interface TableSets {
  /** In the query's order, none a complement yet. */
  filters: TableFilter[];
  /** Each filter's count: the results it keeps within the bounds. */
  filterCounts: Fragment[];
  /** The visible results of the benchmark within the bounds (the plain list's total). */
  plainCount: Fragment;
  /** The list's total with these filters, the first one the driver. */
  total(filters: TableFilter[]): Fragment;
}

function tableSets(query: ResultListQuery, scope: ResultScope, metric: MetricPlan): TableSets | undefined {
  const only = tableOnly(query, scope, metric);
  if (!only?.filters.length) return undefined;
  const plain = resultWhere(
    {
      benchmark_id: query.benchmark_id,
      site_id: query.site_id,
      flavor_id: query.flavor_id,
      execution_before: query.execution_before,
      execution_after: query.execution_after,
    },
    scope,
  ).where;
  return {
    filters: only.filters,
    filterCounts: only.filters.map((f) => filterCountSql(f, only.bounds)),
    plainCount: { sql: `select count(*)::int as total from result r ${plain.toSql()}`, params: plain.params },
    total: (filters) =>
      filters.length === 1 && !filters[0]!.complement ? filterCountSql(filters[0]!, only.bounds) : tableCountSql(filters, only.bounds),
  };
}

/** The sets chosen for a list's filters, the statements' work_mem, and the list's total. */
export interface ChosenSets {
  /** The driver (the filter keeping fewest) first; each checked against its smaller set. */
  filters: TableFilter[];
  /** The work_mem that makes PostgreSQL hash the sets; 0: no set (every filter on a key slot). */
  workMemKb: number;
  total: number;
  /** The visible results of the benchmark within the bounds. */
  all: number;
}

/**
 * Chooses, from the filters' counts and the benchmark's (remembered as totals are), which set each
 * filter is checked against: the results it keeps, or those it does not when they are fewer (a
 * filter that keeps 75 % of the results is a set of the other 25 %, one that keeps all of them an
 * empty set); and the work_mem that makes PostgreSQL hash them.
 */
export async function chooseSets(em: EntityManager, sets: TableSets, count: (f: Fragment) => Promise<number>): Promise<ChosenSets> {
  const [all, ...kept] = await Promise.all([count(sets.plainCount), ...sets.filterCounts.map(count)]);
  const ranked = sets.filters
    .map((f, i) => ({ f: { ...f, complement: all! - kept[i]! < kept[i]! }, kept: kept[i]! }))
    .sort((a, b) => a.kept - b.kept);
  const filters = ranked.map((r) => r.f);
  const sized = ranked.filter((r) => r.f.slot === undefined);
  const workMemKb = sized.length ? workMemFor(sized.map((r) => Math.min(r.kept, Math.max(0, all! - r.kept)))) : 0;
  const total = filters.length === 1 ? ranked[0]!.kept : await withWorkMem(em, workMemKb, (tx) => countOf(tx, sets.total(filters)));
  return { filters, workMemKb, total, all: all! };
}

async function countOf(em: EntityManager, f: Fragment): Promise<number> {
  const [row] = await em.execute<{ total?: number; n?: number }[]>(f.sql, f.params);
  return row!.total ?? row!.n!;
}

/** A page of a list sorted by a path of the metric values table (resultListSql, findResultRows). */
export interface SortedByTable {
  /** The results holding a number at the path, in the list's order, from the page's offset (or after its cursor). */
  page: Fragment;
  /**
   * When the table alone bounds the list and it is filtered: the same page and count with the
   * filters' sets chosen (`chooseSets`), for a list of few results (`MetricPlan.fewMatches`) its
   * matches looked up by id.
   */
  sized?: (filters: TableFilter[], few: boolean) => { page: Fragment; numbers: Fragment };
  /** The page from the first `entries` of the walk, each checked by lookups (no set): full, or to be read again. */
  probe?: (filters: TableFilter[], entries: number) => Fragment;
  fewMatches: number;
  probeEntries: number;
  /** The sorted path has a key slot: the matches of a filter carry its number (`sortedKeysSql`). */
  keyedSort?: boolean;
  /** Those results of the whole list, counted (for a page by number past them). */
  numbers: Fragment;
  /** Whether results without a number there can be in the list (no numeric filter on the path). */
  tailPossible: boolean;
  /** The results after the numbers, from `offset` of them, at most `limit`. */
  tail: (offset: number, limit: number) => Fragment;
}

function both(a: Fragment | null, b: Fragment | null): Fragment | null {
  if (!a || !b) return a ?? b;
  return { sql: `(${a.sql}) and (${b.sql})`, params: [...a.params, ...b.params] };
}

const samePath = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((s, i) => s === b[i]);

/**
 * What a list is bounded by, when all of it is in the table: visible results of the benchmark,
 * numeric filters on its paths, site, flavor, execution time. Null otherwise.
 */
function tableOnly(query: ResultListQuery, scope: ResultScope, metric: MetricPlan): { filters: TableFilter[]; bounds: CountBounds } | null {
  if (!('visible' in scope) || query.tags_ids?.length || query.upload_before || query.upload_after) return null;
  if (query.terms?.some((t) => t !== '')) return null;
  const filters = parseFilters(query.filters);
  const onTable = filters.flatMap((filter) => {
    const pathId = filter.value.kind === 'number' ? pathIdOf(metric.paths, filter.path) : undefined;
    if (pathId === undefined) return [];
    const slot = metric.paths.slots.get(pathId);
    return [{ pathId, filter, ...(slot === undefined ? {} : { slot }) }];
  });
  if (onTable.length !== filters.length) return null;
  return {
    filters: onTable,
    bounds: {
      site_id: query.site_id,
      flavor_id: query.flavor_id,
      execution_before: query.execution_before ? bound(query.execution_before) : undefined,
      execution_after: query.execution_after ? bound(query.execution_after) : undefined,
    },
  };
}

/**
 * The numbers part of a list sorted by a path of the table (`MetricPlan.sortPathId`): the path's
 * rows of visible results walked in the index's order (number, then id), each checked against the
 * list's WHERE (the table's filters looked up by the row's result id, before its result is read).
 * After a cursor standing on a number, from that number and id; on another value, all of them
 * (descending: such values come first) or none; on a missing value, none.
 */
function sortedByTable(
  query: ResultListQuery,
  scope: ResultScope,
  metric: MetricPlan,
  pathId: number,
  walk: ListWalk,
  outputs: string,
  keyParams: unknown[],
): SortedByTable {
  const path = metricSortPath(query, scope)!;
  const descending = walk.keys[0]!.descending;
  const idKey = walk.keys.find((k) => k.unique)!;
  const { where } = resultWhere(query, scope, { metric, idColumn: 's.result_id' });
  const base = sortedWhere(pathId);
  let after: Fragment | null = null;
  const values = walk.values;
  if (values) {
    const rank = values[0];
    const id = values[walk.keys.indexOf(idKey)]!;
    if (rank === '0') after = sortedAfter(values[1]!, id, descending, idKey.descending);
    else if (!(rank === '1' && descending)) after = { sql: 'false', params: [] };
  }
  const tailPossible = !parseFilters(query.filters).some((f) => f.value.kind === 'number' && samePath(f.path, path));
  const tail = () => {
    throw new Error('resultListSql sets tail');
  };
  const only = tableOnly(query, scope, metric);
  if (only) {
    // Nothing but the table decides which rows and in which order: only the page's results are read.
    const sortSlot = metric.paths.slots.get(pathId);
    const sortedBy = (filters: TableFilter[]) =>
      sortedKeysSql(pathId, sortSlot, filters, only.bounds, after, { descending, idDescending: idKey.descending });
    const pageFrom = (keys: Fragment, order: string): Fragment => ({
      sql: `select ${outputs} from (select ${RESULT_COLUMNS} from (${keys.sql}) k join result r on r.id = k.result_id ${order}) p`,
      params: [...keyParams, ...keys.params],
    });
    const pageOf = (filters: TableFilter[], few: boolean) => {
      const sorted = sortedBy(filters);
      return { page: pageFrom(sorted.keys(walk.limit, walk.offset, few), sorted.order), numbers: sorted.count(few) };
    };
    const probe = (filters: TableFilter[], entries: number) => {
      const sorted = sortedBy(filters);
      return pageFrom(sorted.probe(walk.limit, walk.offset, entries), sorted.order);
    };
    const plain = pageOf(only.filters, false);
    return {
      ...plain,
      ...(only.filters.length > 0 ? { sized: pageOf, probe } : {}),
      fewMatches: metric.fewMatches,
      probeEntries: metric.probeEntries,
      keyedSort: sortSlot !== undefined,
      tailPossible,
      tail,
    };
  }
  const rows = where.and(both(base, after));
  const all = where.and(base);
  return {
    page: {
      sql: `select ${outputs} from (select ${RESULT_COLUMNS} from ${sortedFrom()} ${rows.sql} ${sortedOrder(descending, idKey.descending)} limit ? offset ?) p`,
      params: [...keyParams, ...rows.params, walk.limit, walk.offset],
    },
    numbers: sortedCountSql(all),
    fewMatches: metric.fewMatches,
    probeEntries: metric.probeEntries,
    tailPossible,
    tail,
  };
}

/**
 * Whether and how a list reads the metric values table (`table` given, services/metrics/metric-lookup.ts):
 * when it is of one benchmark whose values are complete, with numeric filters on the table's
 * paths, or sorted first by one of them that the table can sort by (visible results only). Null:
 * the documents alone.
 */
export async function metricPlan(
  em: EntityManager,
  table: MetricTable | undefined,
  query: ResultListQuery,
  scope: ResultScope,
): Promise<MetricPlan | null> {
  if (!table || !query.benchmark_id) return null;
  const numeric = parseFilters(query.filters).filter((f) => f.value.kind === 'number');
  const terms = parseResultSort(query.sort_by);
  const sortPath = metricSortPath(query, scope);
  const sortsFirst = sortPath !== null && prefixedJsonPath(terms[0]!.field) !== null;
  if (numeric.length === 0 && !sortsFirst) return null;
  const paths = await table.paths(em, query.benchmark_id);
  if (!paths) return null;
  const sortId = sortsFirst ? pathIdOf(paths, sortPath) : undefined;
  const sortPathId = sortId !== undefined && (await table.sortable(em, paths, sortPath!)) ? sortId : null;
  if (sortPathId === null && !numeric.some((f) => pathIdOf(paths, f.path) !== undefined)) return null;
  return { paths, sortPathId, fewMatches: table.fewMatches, probeEntries: table.probeEntries };
}

/** The path ids a plan's statements use. */
function planIds(plan: MetricPlan, query: ResultListQuery): number[] {
  const ids = parseFilters(query.filters).flatMap((f) => {
    const id = f.value.kind === 'number' ? pathIdOf(plan.paths, f.path) : undefined;
    return id === undefined ? [] : [id];
  });
  return plan.sortPathId === null ? ids : [...ids, plan.sortPathId];
}

/**
 * One page of result rows and the total of the list. The two statements run in parallel, on two
 * connections, unless `sequential` and the pool is busy (expensive lists then hold one connection
 * each, so that the few admitted at once leave the rest of the pool to everyone else; on a quiet
 * pool they take two, and answer in the time of the slower statement rather than of both). A page
 * after a cursor counts nothing: its total is the one the walk began with (services/query/cursor.ts).
 * With `table` (services/metrics/metric-lookup.ts), what the metric values table can answer is read there
 * (`metricPlan`); should a path it used be gone by the end (a schema change meanwhile), the page is
 * read again from the documents. A list the table alone bounds first chooses its filters' sets
 * from their counts (`chooseSets`, remembered as totals are); its total is then known.
 */
export async function findResultRows(
  em: EntityManager,
  query: ResultListQuery,
  scope: ResultScope,
  totals?: TotalCache,
  options: { sequential?: boolean; walk?: ListWalk; table?: MetricTable; plan?: MetricPlan | null } = {},
): Promise<{ rows: ResultTextRow[]; total: number | undefined; walk: ListWalk }> {
  const walk = options.walk ?? resultWalk(query, scope);
  const plan = options.plan !== undefined ? options.plan : await metricPlan(em, options.table, query, scope);
  await walk.resolve(em, resultKeysFrom(query));
  const { page, count, table, sets } = resultListSql(query, scope, { walk, metric: plan ?? undefined });
  const cached = (f: Fragment) => (totals ? totals.total(f.sql, f.params, () => countOf(em, f)) : countOf(em, f));
  let chosen: Promise<ChosenSets> | undefined;
  const choice = () => (chosen ??= chooseSets(em, sets!, cached));
  const total = sets ? async () => (await choice()).total : () => cached(count);
  // A page in another order checks the table's filters by lookups (resultWhere): no set to hash.
  const pageRows = table
    ? () => tablePage(em, walk, table, sets ? choice : undefined)
    : () => em.execute<ResultTextRow[]>(page.sql, page.params);
  const found = await run();
  if (plan && options.table && !(await options.table.stillThere(em, planIds(plan, query)))) {
    return findResultRows(em, query, scope, totals, { ...options, table: undefined, plan: null });
  }
  return found;

  async function run(): Promise<{ rows: ResultTextRow[]; total: number | undefined; walk: ListWalk }> {
    if (walk.byCursor) return { rows: await pageRows(), total: undefined, walk };
    if (options.sequential && !poolIsQuiet(em)) {
      const rows = await pageRows();
      return { rows, total: await total(), walk };
    }
    // Both settle before the answer: when one fails (a statement timeout, a cancellation), the other,
    // with the same WHERE, is not left running on its connection after the client has its error.
    const [rows, counted] = await Promise.allSettled([pageRows(), total()]);
    if (rows.status === 'rejected') throw rows.reason;
    if (counted.status === 'rejected') throw counted.reason;
    return { rows: rows.value, total: counted.value, walk };
  }
}

/**
 * A page of a list sorted by the table: its numbers part, then, when the page reaches past the
 * numbers, the rows after them (read from the documents only then, not from a remembered total,
 * which may be a few seconds old). By page number, the numbers before the page's offset are known
 * when the numbers part returned some rows, and counted otherwise. With `choice` (the table alone
 * bounds the list), the statements check each filter against its chosen set, under its work_mem,
 * and a list of few results looks them up by id.
 */
async function tablePage(
  em: EntityManager,
  walk: ListWalk,
  table: SortedByTable,
  choice?: () => Promise<ChosenSets>,
): Promise<ResultTextRow[]> {
  let { page, numbers } = table;
  let workMemKb = 0;
  if (choice && table.sized) {
    const chosen = await choice();
    const matches = walk.byCursor ? walk.startTotal : chosen.total;
    // The matches sorted cost their number; a walk, at worst, the results the filters refuse
    // (when they come first in the order). With the sorted path's number in each match's entry,
    // the cheaper of the two bounds; without it, each match costs a lookup: few matches only.
    const few =
      matches !== undefined &&
      table.fewMatches >= 0 &&
      (matches <= table.fewMatches || (table.keyedSort === true && matches <= chosen.all - matches));
    ({ page, numbers } = table.sized(chosen.filters, few));
    workMemKb = chosen.workMemKb;
    // Filters that keep most results: the first entries of the walk, each checked by lookups, fill
    // the page unless the filters refuse what comes first in the order (then the sets, below).
    const reach = ((walk.offset + walk.limit) * Math.max(1, chosen.all)) / Math.max(1, chosen.total);
    if (!few && table.probe && !keyedOnly(chosen.filters) && reach <= table.probeEntries) {
      const probe = table.probe(chosen.filters, Math.ceil(PROBE_MARGIN * reach));
      const rows = await em.execute<ResultTextRow[]>(probe.sql, probe.params);
      if (rows.length >= walk.limit) return rows;
    }
  }
  const read = <T>(f: Fragment) =>
    choice && table.sized ? withWorkMem(em, workMemKb, (tx) => tx.execute<T[]>(f.sql, f.params)) : em.execute<T[]>(f.sql, f.params);
  const rows = await read<ResultTextRow>(page);
  if (rows.length >= walk.limit || !table.tailPossible) return rows;
  let tailOffset = 0;
  if (!walk.byCursor && rows.length === 0 && walk.offset > 0) {
    const [counted] = await read<{ n: number }>(numbers);
    tailOffset = Math.max(0, walk.offset - counted!.n);
  }
  const tail = table.tail(tailOffset, walk.limit - rows.length);
  return [...rows, ...(await em.execute<ResultTextRow[]>(tail.sql, tail.params))];
}
