/**
 * The mechanics shared by the four reviewed resources (benchmarks, sites, flavors, tags): get,
 * create, update and list. Each resource describes itself once as a `CatalogueKind`; approve,
 * reject and delete are in review.ts.
 */
import { randomUUID } from 'node:crypto';
import type { EntityName, FilterQuery, RequiredEntityData } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { parseDateBound } from '../../core/dates.ts';
import { itemsVanishing, pageJson, PAGE_READ_ATTEMPTS, type PageEnvelope } from '../query/pagination.ts';
import { fingerprint, ListWalk } from '../query/cursor.ts';
import { columnKey, orderSql, type KeyTerm } from '../query/keyset.ts';
import { fixedFieldSort, type SortTerm } from '../query/sort.ts';
import { likePattern, type Where } from '../../db/sql.ts';
import type { EmbedCache } from './embeds.ts';
import type { JsonText } from '../../core/reply.ts';
import { prepared } from '../../db/bound-driver.ts';

export type ResourceType = 'benchmark' | 'site' | 'flavor' | 'tag';
export type ReviewStatus = 'on_review' | 'approved';

/** The columns every reviewed table has. Timestamps are Dates from the ORM, strings from raw SQL. */
export interface ReviewedRow {
  id: string;
  status: string;
  upload_datetime: Date | string;
  uploader_iss: string;
  uploader_sub: string;
}

/** The results (`count`, `deleted` of them deleted) and other rows (by name) that refer to an item. */
export type ReferenceCounts = { count: number; deleted: number } & Record<string, number>;
/** The select list of ReferenceCounts over `result` rows. */
export const COUNTS = 'count(*)::int as count, (count(*) filter (where deleted))::int as deleted';

/** How one reviewed resource is stored, shown and named; the generic mechanics do the rest. */
export interface CatalogueKind<Row extends ReviewedRow, Item> {
  type: ResourceType;
  /** Capitalised name used in messages: 'Benchmark'. */
  label: string;
  /** The SQL table: a fixed identifier, never user input. */
  table: string;
  entity: EntityName<Row>;
  view(row: Row): Item;
  /** How messages name an item, e.g. `ghcr.io/x/y:1.0`. */
  title(row: Row): string;
  /** The 409 DUPLICATE message for these fields. */
  duplicate(fields: Partial<Row>): string;
  /** The contract's sortable fields and default order. */
  sort: { readonly fields: readonly string[]; readonly default: string };
  /** Sortable fields that order by other SQL columns than their own (fixed text). */
  sortColumns?: Record<string, readonly string[]>;
  /** Text columns a search term may match. */
  searchColumns: readonly string[];
  /** Fields of the view an update body may echo (the contract's ReadOnlyEcho): checked, never stored. */
  readOnly: readonly string[];
  references: {
    /**
     * Counts what blocks removing the item. A reject only takes along what is itself on review
     * (a site's flavors on review), so it may count less than a delete.
     */
    count(em: EntityManager, id: string, mode: 'delete' | 'reject'): Promise<ReferenceCounts>;
    /** Deletes or unlinks what refers to the item, before the item itself is deleted. */
    cascade(em: EntityManager, id: string): Promise<void>;
    /** What a cascade does to them, for messages: 'delete them too'. */
    cascadeHint: string;
  };
}

/** What refers to an item through a column of `result`: its results, which a cascade deletes. */
export function resultReferences(column: string): CatalogueKind<ReviewedRow, unknown>['references'] {
  const results = `from result where ${column} = ?`;
  return {
    async count(em, id) {
      const [row] = await em.execute<ReferenceCounts[]>(`select ${COUNTS} ${results}`, [id]);
      return row!;
    },
    async cascade(em, id) {
      await em.execute(`delete ${results}`, [id]);
    },
    cascadeHint: 'delete them too',
  };
}

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; name?: string } | null;
  return e?.code === '23505' || e?.name === 'UniqueConstraintViolationException';
}

/** The item, whatever its status; 404 when there is none. */
export async function getItem<Row extends ReviewedRow>(em: EntityManager, kind: CatalogueKind<Row, unknown>, id: string): Promise<Row> {
  // FilterQuery<Row> is a conditional type TypeScript cannot resolve for a generic Row; `{ id }` filters every ReviewedRow.
  const row = await em.findOne(kind.entity, { id } as FilterQuery<Row>);
  if (!row) throw errors.notFound(kind.label, id);
  return row;
}

/** Flushes, turning a unique violation (also one lost in a race) into 409 DUPLICATE naming the item. */
async function flushUnique(em: EntityManager, message: () => string): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (isUniqueViolation(err)) throw errors.conflict('DUPLICATE', message());
    throw err;
  }
}

/**
 * Stores a new item uploaded by the caller: on review, or approved at once when an administrator
 * uploads it or when items of its kind are not reviewed (`review` false: tags with REVIEW_TAGS=false).
 * Uniqueness is left to the database constraints so that racing creates give one 409.
 */
export async function createItem<Row extends ReviewedRow>(
  em: EntityManager,
  kind: CatalogueKind<Row, unknown>,
  caller: Caller,
  fields: Partial<Row>,
  { review = true }: { review?: boolean } = {},
): Promise<Row> {
  // RequiredEntityData<Row> stays unresolved for a generic Row too: this is Partial<Row> and the columns of every ReviewedRow.
  const row = em.create(kind.entity, {
    ...fields,
    id: randomUUID(),
    status: caller.isAdmin || !review ? 'approved' : 'on_review',
    upload_datetime: new Date(),
    uploader_iss: caller.identity.iss,
    uploader_sub: caller.identity.sub,
  } as RequiredEntityData<Row>);
  await flushUnique(em, () => kind.duplicate(fields));
  return row;
}

/**
 * Replaces the editable fields of an item; status, uploader and upload time are kept. `body` is the
 * update body as sent: the read-only fields it echoes must equal the stored ones (checkEchoed).
 */
export async function updateItem<Row extends ReviewedRow>(
  em: EntityManager,
  kind: CatalogueKind<Row, unknown>,
  id: string,
  fields: Partial<Row>,
  body: object,
): Promise<Row> {
  const row = await getItem(em, kind, id);
  checkEchoed(kind, row, body);
  Object.assign(row, fields);
  await flushUnique(em, () => kind.duplicate(row));
  return row;
}

/**
 * Clients that edit what they read (the origin service's frontend) send an item's read-only fields
 * back: each one given must equal what a GET shows now (a timestamp the same instant, an id in any
 * case), else 422 INVALID_BODY naming it. Silently ignoring a different value would hide a client's
 * mistake, such as a PUT to the wrong id.
 */
export function checkEchoed<Row extends ReviewedRow>(kind: CatalogueKind<Row, unknown>, row: Row, body: object): void {
  const given = body as Record<string, unknown>;
  const shown = kind.view(row) as Record<string, unknown>;
  const differing = kind.readOnly.filter((field) => given[field] !== undefined && !sameValue(field, given[field], shown[field]));
  if (!differing.length) return;
  throw new AppError(
    422,
    'INVALID_BODY',
    `Read-only fields differ from the stored ${kind.label.toLowerCase()}: ${differing.join(', ')}. Leave them out, or send them as read.`,
    {
      errors: differing.map((field) => ({
        in: 'body' as const,
        path: `/${field}`,
        message: `is read-only: ${JSON.stringify(given[field])} differs from the stored ${JSON.stringify(shown[field])}`,
      })),
    },
  );
}

function sameValue(field: string, given: unknown, stored: unknown): boolean {
  if (given === stored) return true;
  if (typeof given !== 'string' || typeof stored !== 'string') return false;
  if (field === 'upload_datetime') return sameInstant(given, stored);
  if (field === 'id' || field.endsWith('_id')) return given.toLowerCase() === stored.toLowerCase();
  return false;
}

/** Timestamps as responses show them carry no zone designator: UTC. */
function sameInstant(given: string, stored: string): boolean {
  const utc = (text: string) => Date.parse(/(?:Z|[+-]\d\d:?\d\d)$/i.test(text) ? text : `${text}Z`);
  const instant = utc(given);
  return !Number.isNaN(instant) && instant === utc(stored);
}

/** The query parameters every reviewed list and search share. */
export interface ListQueryParams {
  status?: ReviewStatus;
  upload_before?: string;
  upload_after?: string;
  terms?: string[];
  sort_by?: string;
  page?: number;
  per_page?: number;
  cursor?: string;
}

/** A contract's sort (fields, default): the parser of `sort_by`, and each field's SQL columns (its own unless `columns` names others). */
export function contractSort(sort: CatalogueKind<ReviewedRow, unknown>['sort'], columns: Record<string, readonly string[]> = {}) {
  const sorter: (sortBy: string | undefined) => SortTerm[] = fixedFieldSort(sort.fields, sort.default);
  return { sorter, columns: Object.fromEntries(sort.fields.map((f) => [f, columns[f] ?? [f]])) as Record<string, readonly string[]> };
}

const sortings = new WeakMap<object, ReturnType<typeof contractSort>>();

/**
 * The order of fixed column expressions as key terms, always ending with the columns that identify
 * a row (ascending), so pages never overlap.
 */
export function columnKeys(
  terms: SortTerm[],
  columns: Record<string, readonly string[]>,
  tieBreakers: readonly string[] = ['id'],
): KeyTerm[] {
  const keys: KeyTerm[] = [];
  const used = new Set<string>();
  for (const term of terms) {
    for (const column of columns[term.field]!) {
      if (used.has(column)) continue;
      used.add(column);
      keys.push(columnKey(column, term.descending, tieBreakers.includes(column)));
    }
  }
  for (const column of tieBreakers) if (!used.has(column)) keys.push(columnKey(column, false, true));
  return keys;
}

/** Adds one clause per search term: each term must match one of the columns, case-insensitively. */
export function addTerms(where: Where, terms: readonly string[] | undefined, columns: readonly string[]): void {
  for (const term of terms ?? []) {
    if (term === '') continue;
    const pattern = likePattern(term);
    where.add(columns.map((c) => `${c} ilike ? escape '\\'`).join(' or '), ...columns.map(() => pattern));
  }
}

/** Adds the strict upload_datetime bounds. */
export function addUploadBounds(where: Where, query: { upload_before?: string; upload_after?: string }, column = 'upload_datetime'): void {
  if (query.upload_before) where.add(`${column} < ?`, parseDateBound(query.upload_before));
  if (query.upload_after) where.add(`${column} > ?`, parseDateBound(query.upload_after));
}

/**
 * Runs a paginated list in the order of `keys`, by page (one query for the page and one count with
 * the same WHERE) or after a cursor (services/query/cursor.ts; no count). `from` (a table, a subquery, or
 * a join) and `columns` are fixed SQL text, never user input; `list` names the list in its cursors.
 */
export async function paginate<Row, Item>(
  em: EntityManager,
  list: { from: string; columns?: string; name?: string },
  where: Where,
  keys: KeyTerm[],
  query: { page?: number; per_page?: number; cursor?: string },
  view: (row: Row) => Item,
): Promise<PageEnvelope<Item>> {
  const { from, columns = '*', name = from } = list;
  const order = orderSql(keys);
  const walk = ListWalk.start(query, keys, fingerprint(name, where.toSql(), where.params, order.sql));
  await walk.resolve(em, from);
  const filter = where.and(walk.after());
  const keyColumns = walk.keyColumns();
  const page = em.execute<(Row & object)[]>(
    `select ${columns}, ${keyColumns.sql} from ${from} ${filter.sql} ${order.sql} limit ? offset ?`,
    [...keyColumns.params, ...filter.params, ...order.params, walk.limit, walk.offset],
  );
  const count = walk.byCursor
    ? undefined
    : em.execute<{ total: number }[]>(`select count(*)::int as total from ${from} ${where.toSql()}`, where.params).then((r) => r[0]!.total);
  const [rows, total] = await Promise.all([page, count]);
  const { items, fields } = walk.finish(rows, total);
  return { items: items.map(view), ...fields };
}

/**
 * Lists items of a kind: `where` carries the resource's own filters; status (default approved),
 * upload bounds, search terms, sort and pagination are added here.
 */
export async function listItems<Row extends ReviewedRow, Item>(
  em: EntityManager,
  embeds: EmbedCache,
  kind: CatalogueKind<Row, Item>,
  where: Where,
  query: ListQueryParams,
  /** Run when the page is empty, e.g. to answer 404 for a parent that does not exist. */
  whenEmpty?: () => Promise<unknown>,
): Promise<JsonText> {
  let sorting = sortings.get(kind);
  if (!sorting) {
    sorting = contractSort(kind.sort, kind.sortColumns);
    sortings.set(kind, sorting);
  }
  const terms = sorting.sorter(query.sort_by);
  where.add('status = ?', query.status ?? 'approved');
  addUploadBounds(where, query);
  addTerms(where, query.terms, kind.searchColumns);
  // One statement: the ids and row versions of the page, with the total of the list (catalogue
  // tables are small: counting them along is cheaper than a second round trip). The items are the
  // same JSON text results embed, remembered per row version (services/catalogue/embeds.ts). After a cursor
  // nothing is counted (services/query/cursor.ts).
  const keys = columnKeys(terms, sorting.columns);
  const order = orderSql(keys);
  const filter = where.toSql();
  const walk = ListWalk.start(query, keys, fingerprint(kind.table, filter, where.params, order.sql));
  await walk.resolve(em, `${kind.table} t`);
  const after = where.and(walk.after());
  const columns = walk.keyColumns();
  const counted = walk.byCursor ? '' : ', count(*) over ()::int as total';
  const pageSql = `select t.id, t.xmin::text as version, ${columns.sql}${counted} from ${kind.table} t ${after.sql} ${order.sql} limit ? offset ?`;
  // A row deleted between the page and the read of its text: the page is read again, as it is now.
  for (let attempt = 1; attempt <= PAGE_READ_ATTEMPTS; attempt++) {
    // Without search terms or a cursor the text is one of a few per kind (filters and sort fields
    // are a fixed set): prepared, as most catalogue reads are these. Terms add a clause per term,
    // and a cursor's predicate depends on which of its keys are null: not prepared.
    const rows = await em.execute<{ id: string; version: string; total: number }[]>(
      query.terms?.length || walk.byCursor ? pageSql : prepared(pageSql),
      [...columns.params, ...after.params, walk.limit, walk.offset],
    );
    if (rows.length === 0 && whenEmpty) await whenEmpty();
    // Past the last page there is no row to carry the total.
    const total = walk.byCursor
      ? undefined
      : (rows[0]?.total ??
        (walk.offset === 0
          ? 0
          : (await em.execute<{ total: number }[]>(`select count(*)::int as total from ${kind.table} ${filter}`, where.params))[0]!.total));
    const page = walk.finish(rows, total);
    const texts = await embeds.texts(
      em,
      page.items.map((r) => ({ kind: kind.type, id: r.id, version: r.version })),
    );
    const items = page.items.map((r) => texts.get(`${kind.type}:${r.id}`));
    if (items.every((item) => item !== undefined)) return pageJson(items as string[], page.fields);
  }
  throw itemsVanishing();
}

/** Trims a required name; the contract already refused blank ones, this keeps the check honest. */
export function trimmed(value: string, field: string): string {
  const out = value.trim();
  if (!out)
    throw new AppError(422, 'INVALID_BODY', `${field} must not be blank.`, {
      errors: [{ in: 'body', path: `/${field}`, message: 'must not be blank' }],
    });
  return out;
}
