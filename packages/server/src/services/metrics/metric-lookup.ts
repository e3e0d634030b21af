/**
 * Result lists read from the metric values table (services/metrics/metric-values.ts; docs/querying.md,
 * "Filters and sorts from the metric values table"): every SQL text that lists take from
 * `metric_value` and `metric_path` is made here, so that a change of the table's storage changes
 * this module only.
 *
 * When a benchmark's values are complete, the table holds, for each of its results and each of
 * its chosen paths, a row with the JSON number the document holds there, or null when it holds none.
 * Hence:
 * - a numeric filter (`path op number`) on a chosen path is an EXISTS lookup of the table: the
 *   documents' filter matches numbers only, compared numerically, as the table's `numeric` values are;
 * - a sort by a chosen path reads the results holding a number there in the order of the table's
 *   (path, value) index (ties by result id); those without one come after them (missing or JSON null: last in
 *   both directions) or, for another kind of value (a string, a boolean, an object), before them
 *   when descending. The table serves a sort only when no result of the benchmark holds such a value
 *   there (`sortable`): the schema forces a number there, and the documents were checked.
 *
 * Correctness while paths change: a path's id is never reused, and its rows go with it in the
 * transaction that removes it; the rows of a path that stays are kept up to date by the triggers
 * whatever else happens to the benchmark's paths. So the ids read when the benchmark was complete
 * stay right as long as they exist: `stillThere` checks it after the list's statements, and the list
 * is read again from the documents when one has gone (a schema change at that moment).
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Fragment, JsonFilter } from '../query/json-filter.ts';
import { KEY_SLOTS } from '../../db/metric-rows.ts';
import { isNode, localRef } from '../schemas/schema-paths.ts';

const KEY_COLUMNS = Array.from({ length: KEY_SLOTS }, (_, i) => `s.k${i + 1}`).join(', ');

/** How long a benchmark's path ids are remembered (their use is checked by `stillThere`). */
const PATHS_MS = 2_000;
/**
 * How long a verdict of `sortable` is remembered. The schema (its digest is part of the key) keeps
 * uploads through the API right; this bounds how long results stored without validation (the import
 * from the original service) can go unnoticed.
 */
const VERIFY_MS = 5 * 60_000;
const MAX_ENTRIES = 1_000;

export interface MetricPaths {
  benchmarkId: string;
  /** The digest of the schema the paths were chosen from (metric_benchmark.digest). */
  digest: string;
  /** Path (its segments as JSON text) → id. */
  ids: Map<string, number>;
  /** Path id → its key slot (1 to 4: every row holds the result's number there in `k<slot>`). */
  slots: Map<number, number>;
}

const keyOf = (path: readonly string[]) => JSON.stringify(path);

/** The id of a path in the table, if it is one of the benchmark's. */
export function pathIdOf(paths: MetricPaths, path: readonly string[]): number | undefined {
  return paths.ids.get(keyOf(path));
}

const NUMERIC = new Set(['number', 'integer']);

/** `type` admits numbers (and perhaps null) only. */
function typeForcesNumber(type: unknown): boolean {
  const types = Array.isArray(type) ? type : [type];
  return types.length > 0 && types.some((t) => NUMERIC.has(t as string)) && types.every((t) => NUMERIC.has(t as string) || t === 'null');
}

/**
 * Whether every document valid against `schema` holds, at `path`, a number, JSON null or nothing:
 * some subschema that always applies there (through `properties`, `allOf` and local `$ref`s; never
 * a branch of `anyOf`, `oneOf` or `if`) has a `type` of numbers (and null) only.
 */
export function schemaForcesNumber(schema: unknown, path: readonly string[]): boolean {
  let budget = 2_000;
  const walk = (node: unknown, rest: readonly string[], depth: number): boolean => {
    if (!isNode(node) || depth > 64 || --budget < 0) return false;
    if (rest.length === 0 && typeForcesNumber(node.type)) return true;
    if (rest.length > 0 && isNode(node.properties) && Object.hasOwn(node.properties, rest[0]!)) {
      if (walk(node.properties[rest[0]!], rest.slice(1), depth + 1)) return true;
    }
    if (Array.isArray(node.allOf) && node.allOf.some((s) => walk(s, rest, depth + 1))) return true;
    return node.$ref !== undefined && walk(localRef(schema, node.$ref), rest, depth + 1);
  };
  return walk(schema, path, 0);
}

const SQL_OP: Record<JsonFilter['op'], string> = { '==': '=', '>': '>', '<': '<', '>=': '>=', '<=': '<=' };

/** The filter as a lookup of the table for the result whose id is `idColumn` (fixed SQL text). */
export function filterFragment(pathId: number, filter: JsonFilter, idColumn: string): Fragment {
  return {
    sql: `exists (select 1 from metric_value v where v.path_id = ? and v.result_id = ${idColumn} and v.value ${SQL_OP[filter.op]} ?::numeric)`,
    params: [pathId, filter.value.kind === 'number' ? filter.value.json : null],
  };
}

/** What a table-only count bounds besides the filters (copies of the result's columns in the table). */
export interface CountBounds {
  site_id?: string;
  flavor_id?: string;
  execution_before?: string;
  execution_after?: string;
}

/** The bounds on the table's rows `alias` (the same as resultWhere's on the result's columns). */
function boundsSql(alias: string, bounds: CountBounds): Fragment {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    clauses.push(sql);
    params.push(value);
  };
  if (bounds.site_id) add(`${alias}.site_id = ?`, bounds.site_id);
  if (bounds.flavor_id) add(`${alias}.flavor_id = ?`, bounds.flavor_id);
  if (bounds.execution_before) add(`${alias}.execution_datetime < ?::timestamptz`, bounds.execution_before);
  if (bounds.execution_after) add(`${alias}.execution_datetime > ?::timestamptz`, bounds.execution_after);
  return { sql: clauses.map((c) => ` and ${c}`).join(''), params };
}

/** The operator that keeps what `op` does not (among numbers). */
const NEGATED: Record<JsonFilter['op'], string> = { '==': '<>', '>': '<=', '<': '>=', '>=': '<', '<=': '>' };

export interface TableFilter {
  pathId: number;
  filter: JsonFilter;
  /** The path's key slot: the filter is checked on the row's own `k<slot>`, with no set. */
  slot?: number;
  /**
   * Checked against the set of the results it does not keep (a number the filter refuses, or none
   * at the path) rather than of those it keeps: chosen when that set is the smaller.
   */
  complement?: boolean;
}

const filterValue = (f: TableFilter) => (f.filter.value.kind === 'number' ? f.filter.value.json : null);

/** The column of a key slot (a whole number from 1 to KEY_SLOTS, never user input). */
export function keyColumn(alias: string, slot: number): string {
  if (!Number.isInteger(slot) || slot < 1 || slot > KEY_SLOTS) throw new Error(`no key slot ${slot}`);
  return `${alias}.k${slot}`;
}

/** Whether the filters are checked without sets (every one on a key slot). */
export const keyedOnly = (filters: readonly TableFilter[]) => filters.every((f) => f.slot !== undefined);

/**
 * The filters checked on the rows `alias`, each ` and …`. One on a key slot compares the row's own
 * key column (null: no number there, which no filter keeps). The others are sets of result ids: uncorrelated, so PostgreSQL reads each set
 * once, from the filter's range of the path index (or the ranges outside it and the nulls, for a
 * complement) within the bounds, into a hash table (a hashed SubPlan), and checks every row of
 * `idColumn` against it. The cost is the set's size, whatever order the walk meets the matches in:
 * a filter anti-correlated with the sort (`machine.cpu.count > 4` with a score that falls as the
 * count grows) makes a walk pass a quarter of the path before its first match, which a lookup per
 * row made cost a second. PostgreSQL hashes a set only when its estimate fits in `hash_mem`, and
 * otherwise scans it again for every row (quadratic): the statements run with `work_mem` sized to
 * the sets (`workMemFor`, `withWorkMem`).
 */
function setsSql(filters: readonly TableFilter[], alias: string, bounds: CountBounds): Fragment {
  const b = boundsSql('f', bounds);
  const idColumn = `${alias}.result_id`;
  const parts = filters.map((f) =>
    f.slot !== undefined
      ? { sql: ` and ${keyColumn(alias, f.slot)} ${SQL_OP[f.filter.op]} ?::numeric`, params: [filterValue(f)] }
      : f.complement
        ? {
            sql:
              ` and (${idColumn} in (select f.result_id from metric_value f where f.path_id = ? and not f.hidden and f.value ${NEGATED[f.filter.op]} ?::numeric${b.sql} ` +
              `union all select f.result_id from metric_value f where f.path_id = ? and not f.hidden and f.value is null${b.sql})) is not true`,
            params: [f.pathId, filterValue(f), ...b.params, f.pathId, ...b.params],
          }
        : {
            sql: ` and (${idColumn} in (select f.result_id from metric_value f where f.path_id = ? and not f.hidden and f.value ${SQL_OP[f.filter.op]} ?::numeric${b.sql})) is true`,
            params: [f.pathId, filterValue(f), ...b.params],
          },
  );
  return { sql: parts.map((p) => p.sql).join(''), params: parts.flatMap((p) => p.params) };
}

/** Bytes of hash table per result id of a set (PostgreSQL's entry and its overhead, with room for estimates above the count). */
const SET_BYTES_PER_ID = 256;
const MIN_WORK_MEM_KB = 4 * 1024;
const MAX_WORK_MEM_KB = 2 * 1024 * 1024;

/**
 * The `work_mem` (kB) under which PostgreSQL hashes sets of these sizes: about four times the
 * memory they take, so that an estimate a few times the count still fits (hash_mem is work_mem
 * times hash_mem_multiplier, 2 by default). Only what a hash holds is allocated.
 */
export function workMemFor(setSizes: readonly number[]): number {
  const bytes = setSizes.reduce((a, n) => a + n, 0) * SET_BYTES_PER_ID;
  return Math.min(MAX_WORK_MEM_KB, Math.max(MIN_WORK_MEM_KB, Math.ceil(bytes / 1024)));
}

/** The filter's range of its path within the bounds: its count is the number of results it keeps. */
export function filterCountSql(f: TableFilter, bounds: CountBounds): Fragment {
  const b = boundsSql('d', bounds);
  return {
    sql: `select count(*)::int as total from metric_value d where d.path_id = ? and not d.hidden and d.value ${SQL_OP[f.filter.op]} ?::numeric${b.sql}`,
    params: [f.pathId, filterValue(f), ...b.params],
  };
}

/**
 * The number of visible results holding a number at the first filter's path that passes it and
 * passes the others (each on the table too), within the bounds: read from the table alone.
 */
export function tableCountSql(filters: readonly TableFilter[], bounds: CountBounds): Fragment {
  const matches = matchesSql(filters, bounds);
  return { sql: `select count(*)::int as total from metric_value d ${matches.sql}`, params: matches.params };
}

/** The WHERE of the table's rows `d` of the visible results that pass every filter within the bounds (one row each). */
function matchesSql(filters: readonly TableFilter[], bounds: CountBounds): Fragment {
  const [driver, ...others] = filters;
  if (!driver) throw new Error('matchesSql: no filter');
  const b = boundsSql('d', bounds);
  const f = setsSql(others, 'd', bounds);
  return {
    sql: `where d.path_id = ? and not d.hidden and d.value ${SQL_OP[driver.filter.op]} ?::numeric${b.sql}${f.sql}`,
    params: [driver.pathId, filterValue(driver), ...b.params, ...f.params],
  };
}

/**
 * When everything a list sorted by the table is bounded by is in the table: the ids and numbers of
 * one page of it (`k.result_id`, `k.value`) from the table alone, in order, so that only the page's
 * results are read; `order` puts the page's rows (joined to their results) back in that order.
 * `filters` come with the set each is checked against (`complement`), the driver first.
 *
 * Two ways to find the page:
 * - the walk: the sorted path's index in order, each entry checked against the filters, until the
 *   page is full (cheap when the filters keep most results, or the first ones in the order);
 * - `few`: the matches, from the driver filter's range (the others checked on each), with their
 *   number at the sorted path, then sorted (a top-N sort): from the range entry itself when the
 *   sorted path has a key slot (`sortSlot`), else looked up by id (metric_value_result_idx).
 *   Its cost is the matches', whatever the order; a walk's can be most of the path when the
 *   filter is anti-correlated with the sort.
 */
export function sortedKeysSql(
  pathId: number,
  sortSlot: number | undefined,
  filters: readonly TableFilter[],
  bounds: CountBounds,
  after: Fragment | null,
  order: { descending: boolean; idDescending: boolean },
): {
  keys: (limit: number, offset: number, few?: boolean) => Fragment;
  probe: (limit: number, offset: number, entries: number) => Fragment;
  count: (few?: boolean) => Fragment;
  order: string;
} {
  const b = boundsSql('s', bounds);
  const candidates = (few: boolean): Fragment => {
    if (few && sortSlot !== undefined) {
      const matches = matchesSql(filters, bounds);
      const k = keyColumn('d', sortSlot);
      return {
        sql: `select d.result_id, ${k} as value from metric_value d ${matches.sql} and ${k} is not null`,
        params: matches.params,
      };
    }
    if (few) {
      const matches = matchesSql(filters, bounds);
      return {
        sql:
          'select s.result_id, s.value from metric_value s where s.path_id = ? and s.value is not null ' +
          `and s.result_id = any(array(select d.result_id from metric_value d ${matches.sql}))`,
        params: [pathId, ...matches.params],
      };
    }
    const f = setsSql(filters, 's', bounds);
    return {
      sql: `select s.result_id, s.value from metric_value s where s.path_id = ? and not s.hidden and s.value is not null${b.sql}${f.sql}`,
      params: [pathId, ...b.params, ...f.params],
    };
  };
  const dir = (d: boolean) => (d ? 'desc' : 'asc');
  const fewOf = (few: boolean) => few && filters.length > 0;
  return {
    keys: (limit, offset, few = false) => {
      const c = candidates(fewOf(few));
      return {
        sql:
          `select s.result_id, s.value from (${c.sql}) s${after ? ` where ${after.sql}` : ''} ` +
          `${sortedOrder(order.descending, order.idDescending)} limit ? offset ?`,
        params: [...c.params, ...(after?.params ?? []), limit, offset],
      };
    },
    probe: (limit, offset, entries) => {
      // The first `entries` of the walk (after the cursor), each checked by its own lookups: the
      // outer order is the inner one, so PostgreSQL stops as soon as the page is full.
      const checks = filters.map((f) =>
        f.slot !== undefined
          ? { sql: `${keyColumn('s', f.slot)} ${SQL_OP[f.filter.op]} ?::numeric`, params: [filterValue(f)] }
          : filterFragment(f.pathId, f.filter, 's.result_id'),
      );
      return {
        sql:
          `select s.result_id, s.value from (select s.result_id, s.value, ${KEY_COLUMNS} from metric_value s ` +
          `where s.path_id = ? and not s.hidden and s.value is not null${b.sql}${after ? ` and ${after.sql}` : ''} ` +
          `${sortedOrder(order.descending, order.idDescending)} limit ?) s ` +
          `${checks.length ? `where ${checks.map((c) => c.sql).join(' and ')} ` : ''}` +
          `${sortedOrder(order.descending, order.idDescending)} limit ? offset ?`,
        params: [pathId, ...b.params, ...(after?.params ?? []), entries, ...checks.flatMap((c) => c.params), limit, offset],
      };
    },
    count: (few = false) => {
      const c = candidates(fewOf(few));
      return { sql: `select count(*)::int as n from (${c.sql}) s`, params: c.params };
    },
    order: `order by k.value ${dir(order.descending)}, k.result_id ${dir(order.idDescending)}`,
  };
}

/**
 * A list of at most this many results (its total), sorted by the table and filtered, looks its
 * matches up by id instead of walking the sorted path: a walk checks entries until the page is
 * full, which for a selective filter means most of the path.
 */
export const FEW_MATCHES = 2_000;

/**
 * A walk whose page should fill within this many entries (from the filters' share of the results)
 * first reads at most PROBE_MARGIN times as many, checking each by lookups: a few milliseconds, where
 * the sets of filters keeping most results cost a hash of most of the benchmark.
 */
const PROBE_ENTRIES = 1_000;
export const PROBE_MARGIN = 2;

/** The FROM of a page of visible results that hold a number at the sorted path: its rows `s` joined to their results `r`. */
export function sortedFrom(): string {
  return 'metric_value s join result r on r.id = s.result_id';
}

/** The conditions of that FROM: the path's rows of visible results holding a number (a row without one has value null). */
export function sortedWhere(pathId: number): Fragment {
  return { sql: 's.path_id = ? and not s.hidden and s.value is not null', params: [pathId] };
}

/** The order of those rows: by number, ties by id, each in its direction (the index's order). */
export function sortedOrder(descending: boolean, idDescending: boolean): string {
  return `order by s.value ${descending ? 'desc' : 'asc'}, s.result_id ${idDescending ? 'desc' : 'asc'}`;
}

/** Those rows after the row holding `number` with id `id` (a cursor's keys), in that order. */
export function sortedAfter(number: string, id: string, descending: boolean, idDescending: boolean): Fragment {
  const op = descending ? '<' : '>';
  if (descending === idDescending) return { sql: `(s.value, s.result_id) ${op} (?::numeric, ?::uuid)`, params: [number, id] };
  const idOp = idDescending ? '<' : '>';
  return {
    sql: `s.value ${op}= ?::numeric and (s.value ${op} ?::numeric or s.result_id ${idOp} ?::uuid)`,
    params: [number, number, id],
  };
}

/** The number of visible results with a number at the path that pass `where` (a WHERE over `s` and `r`). */
export function sortedCountSql(where: Fragment): Fragment {
  return { sql: `select count(*)::int as n from ${sortedFrom()} ${where.sql}`, params: where.params };
}

interface Entry<T> {
  at: number;
  value: Promise<T>;
}

/** The table as lists use it: which paths a benchmark has there, and which it can sort by. */
export class MetricTable {
  readonly #paths = new Map<string, Entry<MetricPaths | null>>();
  readonly #sortable = new Map<string, Entry<boolean>>();
  readonly #pathsMs: number;
  readonly #verifyMs: number;
  /** Lists of at most this many results look their matches up by id (FEW_MATCHES; tests set 0 or more). */
  readonly fewMatches: number;
  /** Walks expected to fill their page within this many entries first try lookups (PROBE_ENTRIES; tests set 0). */
  readonly probeEntries: number;

  constructor(options: { pathsMs?: number; verifyMs?: number; fewMatches?: number; probeEntries?: number } = {}) {
    this.#pathsMs = options.pathsMs ?? PATHS_MS;
    this.#verifyMs = options.verifyMs ?? VERIFY_MS;
    this.fewMatches = options.fewMatches ?? FEW_MATCHES;
    this.probeEntries = options.probeEntries ?? PROBE_ENTRIES;
  }

  /** The benchmark's paths when its values are complete; null otherwise (read the documents). */
  paths(em: EntityManager, benchmarkId: string): Promise<MetricPaths | null> {
    return this.#cached(this.#paths, benchmarkId, this.#pathsMs, async () => {
      const rows = await em.execute<{ digest: string; id: number; path: string[]; slot: number | null }[]>(
        'select m.digest, p.id, p.path, p.slot from metric_benchmark m join metric_path p on p.benchmark_id = m.benchmark_id ' +
          'where m.benchmark_id = ? and m.complete',
        [benchmarkId],
      );
      if (rows.length === 0) return null;
      return {
        benchmarkId,
        digest: rows[0]!.digest,
        ids: new Map(rows.map((r) => [keyOf(r.path), r.id])),
        slots: new Map(rows.flatMap((r) => (r.slot === null ? [] : [[r.id, r.slot] as [number, number]]))),
      };
    });
  }

  /**
   * Whether the table can serve a sort by `path`: its schema forces a number there, and no visible
   * result of the benchmark holds another kind of value there than a number or null (sorts that
   * include hidden results read the documents).
   */
  sortable(em: EntityManager, paths: MetricPaths, path: readonly string[]): Promise<boolean> {
    const key = `${paths.benchmarkId} ${paths.digest} ${keyOf(path)}`;
    return this.#cached(this.#sortable, key, this.#verifyMs, async () => {
      const [row] = await em.execute<{ json_schema: unknown }[]>('select json_schema from benchmark where id = ?', [paths.benchmarkId]);
      if (!row || !schemaForcesNumber(row.json_schema, path)) return false;
      const pathId = paths.ids.get(keyOf(path));
      if (pathId === undefined) return false;
      // Only the visible results the table holds no number for can hold something else: their rows
      // are the `value is null` range of the path's index, so only those documents are read.
      const [other] = await em.execute<{ found: boolean }[]>(
        'select exists (select 1 from metric_value v join result r on r.id = v.result_id ' +
          'where v.path_id = ? and v.value is null and not v.hidden ' +
          "and jsonb_typeof(r.json #> ?::text[]) not in ('number', 'null')) as found",
        [pathId, [...path]],
      );
      return other?.found === false;
    });
  }

  /** Whether the path ids a list used all exist still (their rows were right throughout). */
  async stillThere(em: EntityManager, ids: readonly number[]): Promise<boolean> {
    if (ids.length === 0) return true;
    const [row] = await em.execute<{ n: number }[]>('select count(*)::int as n from metric_path where id = any(?::int[])', [[...ids]]);
    const there = row?.n === new Set(ids).size;
    if (!there) this.#paths.clear();
    return there;
  }

  /** Forgets what is remembered (tests; a schema changed). */
  clear(): void {
    this.#paths.clear();
    this.#sortable.clear();
  }

  #cached<T>(map: Map<string, Entry<T>>, key: string, ttl: number, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const hit = map.get(key);
    if (hit && now - hit.at < ttl) return hit.value;
    if (map.size >= MAX_ENTRIES) map.clear();
    const value = load();
    map.set(key, { at: now, value });
    value.catch(() => {
      if (map.get(key)?.value === value) map.delete(key);
    });
    return value;
  }
}
