/**
 * Cursors (docs/querying.md, "Walking a list with a cursor"): the opaque `cursor` a page answers
 * as `next_cursor`, and the walk of one list page by page from it.
 *
 * A cursor is `<payload>.<check>`, both base64url. The payload is JSON: the format version, a
 * fingerprint of the query it belongs to (the list, its WHERE with its values and its order, as
 * the server compiled them), the sort keys of the last item of its page (each as keyTextSql reads
 * it), or, when those are long, the values that identify that item (its keys are then read again
 * from the database), the number of items before the next page, and the total the walk started
 * with. The check is a hash of the payload: a cursor that was cut, damaged or edited by hand is
 * refused (422 INVALID_CURSOR), and so is one used with another query. The check is no secret: a
 * hand-made cursor only names a position in a list its maker may read anyway, and every one of its
 * values is checked against its key's type before it is bound, so none can make a statement fail.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { MAX_CURSOR_LENGTH } from '@benchmarks/sdk/contract/common';
import { AppError } from '../../core/errors.ts';
import type { Fragment } from './json-filter.ts';
import { afterSql, cursorKeys, keyColumnsSql, keyValuesOf, type KeyTerm } from './keyset.ts';
import { DEFAULT_PER_PAGE, type PageFields, pageFields } from './pagination.ts';

const VERSION = 1;
/** Key texts longer than this (as JSON) are not carried: the cursor names the item instead. */
const MAX_INLINE_KEYS = 1024;
const CHECK_LENGTH = 16;
const MAX_COUNT = Number.MAX_SAFE_INTEGER - 1000;

interface Payload {
  v: number;
  /** Fingerprint of the query. */
  q: string;
  /** Items before the next page. */
  p: number;
  /** The total of the list when the walk began. */
  t: number;
  /** The sort keys of the last item, or… */
  k?: (string | null)[];
  /** …the values of its identifying keys. */
  r?: (string | null)[];
}

/** A fingerprint of what a list's rows and order depend on (SQL texts and their values). */
export function fingerprint(...parts: unknown[]): string {
  return createHash('sha256')
    .update(JSON.stringify([VERSION, ...parts]))
    .digest('base64url')
    .slice(0, 22);
}

const checkOf = (body: string) => createHash('sha256').update(`benchmarks-cursor\u0000${body}`).digest('base64url').slice(0, CHECK_LENGTH);

export function encodeCursor(payload: Payload): string {
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${body}.${checkOf(body)}`;
}

const invalid = (detail: string, message: string) =>
  new AppError(422, 'INVALID_CURSOR', detail, { errors: [{ in: 'query', path: 'cursor', message }] });

const DAMAGED =
  'The cursor is not one this service gave (it is cut, damaged or altered): pass next_cursor exactly as a page answered it, or start again without cursor.';

const damaged = (why: string) => invalid(DAMAGED, why);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** A jsonb number as PostgreSQL prints it (no exponent). */
const NUMBER = /^-?\d+(?:\.\d+)?$/;
/** Half of a surrogate pair alone: no stored text holds one (the SQL seam refuses them). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a key text is a value of the key's type (so that binding it cannot fail). */
function validValue(key: KeyTerm, value: unknown): boolean {
  if (value === null) return key.nullable;
  if (typeof value !== 'string' || value.includes('\u0000') || LONE_SURROGATE.test(value)) return false;
  switch (key.type) {
    case 'uuid':
      return UUID.test(value);
    case 'timestamptz': {
      if (!TIMESTAMP.test(value)) return false;
      // The same calendar date and time back: no 31 April or hour 24.
      const ms = Date.parse(`${value.slice(0, 23)}Z`);
      return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 19) === value.slice(0, 19);
    }
    case 'int':
      return value === '0' || value === '1';
    case 'jsonb':
      return NUMBER.test(value);
    case 'text':
      return true;
  }
}

function decodePayload(text: string): Payload {
  if (text.length > MAX_CURSOR_LENGTH) throw damaged(`is longer than any cursor of this service (at most ${MAX_CURSOR_LENGTH} characters)`);
  const dot = text.indexOf('.');
  if (dot < 0 || text.indexOf('.', dot + 1) >= 0) throw damaged('must be <payload>.<check> as the service wrote it');
  const body = text.slice(0, dot);
  if (!/^[A-Za-z0-9_-]+$/.test(body) || text.slice(dot + 1) !== checkOf(body)) throw damaged('its check does not match its content');
  let payload: Payload;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw damaged('its content is not readable');
  }
  if (
    typeof payload !== 'object' ||
    payload === null ||
    payload.v !== VERSION ||
    typeof payload.q !== 'string' ||
    Array.isArray(payload.k) === Array.isArray(payload.r)
  ) {
    throw damaged('its content is not a cursor of this version');
  }
  // A cursor's position is below its total (it is written only when a page follows), and the total
  // grows by at most a page per page: both stay safe integers on the way.
  const { p, t } = payload;
  if (!Number.isSafeInteger(p) || p < 0 || !Number.isSafeInteger(t) || p >= t || t > MAX_COUNT) {
    throw damaged(`its position and total must be whole numbers, the position below the total, the total at most ${MAX_COUNT}`);
  }
  return payload;
}

/** The query parameters of a walk. */
export interface WalkQuery {
  page?: number;
  per_page?: number;
  cursor?: string;
}

/**
 * One page of one list: by page number (`page`, an offset) or after a cursor (a keyset predicate).
 * `ListWalk.start` checks the query's cursor against the list; `resolve` reads the keys a cursor
 * names instead of carrying; `after` is the predicate to add to the list's WHERE; the statement
 * selects `limit` rows from `offset` with `keyColumns` among its outputs; `finish` makes the page's
 * envelope fields, next_cursor included.
 */
export class ListWalk {
  readonly perPage: number;
  /** The page number asked for (1 with a cursor: see `finish`). */
  readonly page: number;
  /** The cursor keys: the list's order up to the columns that identify a row. */
  readonly keys: KeyTerm[];
  #values: (string | null)[] | null;
  #ref: (string | null)[] | null;
  readonly #payload: Payload | null;
  readonly #fingerprint: string;

  private constructor(query: WalkQuery, keys: KeyTerm[], fingerprintOf: string, payload: Payload | null) {
    this.perPage = query.per_page ?? DEFAULT_PER_PAGE;
    this.page = query.page ?? 1;
    this.keys = keys;
    this.#fingerprint = fingerprintOf;
    this.#payload = payload;
    this.#values = payload?.k ?? null;
    this.#ref = payload?.r ?? null;
  }

  /**
   * The walk a query asks for, in the list whose order is `order` and whose query has the
   * fingerprint `fingerprintOf`. 422 INVALID_QUERY when both cursor and page are given,
   * 422 INVALID_CURSOR when the cursor is not one of this list's.
   */
  static start(query: WalkQuery, order: readonly KeyTerm[], fingerprintOf: string): ListWalk {
    const keys = cursorKeys(order);
    if (query.cursor === undefined) return new ListWalk(query, keys, fingerprintOf, null);
    if (query.page !== undefined) {
      throw new AppError(
        422,
        'INVALID_QUERY',
        'Give either cursor or page, not both: a cursor already says where its page starts. Drop page to continue the walk, or drop cursor to jump to a page.',
        { errors: [{ in: 'query', path: 'cursor', message: 'must not be given with page' }] },
      );
    }
    const payload = decodePayload(query.cursor);
    if (payload.q !== fingerprintOf) {
      throw invalid(
        'The cursor belongs to another query: it continues only the list it came from, with the same filters, terms and sort_by (per_page may change). ' +
          'Send it with that query, or start this one without cursor.',
        'was made for another query',
      );
    }
    const uniques = keys.filter((k) => k.unique);
    const values = payload.k ?? payload.r!;
    const expected = payload.k ? keys : uniques;
    if (values.length !== expected.length || !expected.every((key, i) => validValue(key, values[i]))) {
      throw damaged('its keys do not fit the order of this list');
    }
    return new ListWalk(query, keys, fingerprintOf, payload);
  }

  /** The total the walk began with (after a cursor; undefined without one). */
  get startTotal(): number | undefined {
    return this.#payload?.t;
  }

  /** Whether the page is the one after a cursor. */
  get byCursor(): boolean {
    return this.#payload !== null;
  }

  /** The cursor's keys (after `resolve`), null without a cursor. */
  get values(): readonly (string | null)[] | null {
    return this.#payload ? this.#values : null;
  }

  /** Rows to select: one more than a page after a cursor, to know whether another page follows. */
  get limit(): number {
    return this.byCursor ? this.perPage + 1 : this.perPage;
  }

  get offset(): number {
    return this.byCursor ? 0 : (this.page - 1) * this.perPage;
  }

  /**
   * For a cursor that names its item instead of carrying its keys: reads them from `from` (fixed
   * SQL in which the keys' expressions are valid, without the list's filters). 422 INVALID_CURSOR
   * when the item no longer exists.
   */
  async resolve(em: EntityManager, from: string): Promise<void> {
    if (!this.#ref) return;
    const uniques = this.keys.filter((k) => k.unique);
    const columns = keyColumnsSql(this.keys);
    const match = uniques.map((k) => `${k.sql} = ?::${k.type}`).join(' and ');
    const rows = await em.execute<Record<string, unknown>[]>(`select ${columns.sql} from ${from} where ${match} limit 1`, [
      ...columns.params,
      ...uniques.flatMap((k, i) => [...k.params, this.#ref![i]]),
    ]);
    if (!rows[0]) {
      throw invalid(
        'The item this cursor continues after no longer exists: start the walk again without cursor (or go on by page).',
        'its item was deleted',
      );
    }
    this.#values = keyValuesOf(rows[0], this.keys.length);
    this.#ref = null;
  }

  /** Rows after the cursor's item (null without a cursor). */
  after(): Fragment | null {
    if (!this.#payload) return null;
    if (!this.#values) throw new Error('ListWalk: resolve() the cursor first');
    return afterSql(this.keys, this.#values);
  }

  /** Output columns `_k0, …` reading the cursor keys of each selected row (`read` expressions when `useRead`). */
  keyColumns(useRead = false): Fragment {
    return keyColumnsSql(this.keys, useRead);
  }

  /**
   * The page's items (at most per_page of the rows selected) and its envelope fields. By page
   * number, `total` is the list's count. After a cursor, the total is the one the walk began with
   * (not counted again), raised to what the walk has seen when items arrived meanwhile; `page` is
   * the number of the page in the walk; has_next is exact (one more row was asked for).
   */
  finish<Row extends object>(rows: Row[], total?: number): { items: Row[]; fields: PageFields } {
    const keyCount = this.keys.length;
    const cursorAfter = (last: Row, position: number, of: number): string => {
      const values = keyValuesOf(last as Record<string, unknown>, keyCount);
      const payload: Payload = { v: VERSION, q: this.#fingerprint, p: position, t: of };
      if (JSON.stringify(values).length <= MAX_INLINE_KEYS) payload.k = values;
      else payload.r = values.filter((_, i) => this.keys[i]!.unique);
      return encodeCursor(payload);
    };
    if (!this.#payload) {
      if (total === undefined) throw new Error('ListWalk: a page by number needs its total');
      const fields = pageFields(total, this.page, this.perPage);
      const full = rows.length === this.perPage && rows.length > 0;
      fields.next_cursor = fields.has_next && full ? cursorAfter(rows.at(-1)!, this.offset + rows.length, total) : null;
      return { items: rows, fields };
    }
    const items = rows.slice(0, this.perPage);
    const more = rows.length > this.perPage;
    const before = this.#payload.p;
    const seen = Math.max(this.#payload.t, before + items.length + (more ? 1 : 0));
    const page = Math.floor(before / this.perPage) + 1;
    const pages = Math.ceil(seen / this.perPage);
    return {
      items,
      fields: {
        has_next: more,
        has_prev: page > 1,
        next_num: more ? page + 1 : null,
        prev_num: page > 1 ? page - 1 : null,
        page,
        pages,
        per_page: this.perPage,
        total: seen,
        next_cursor: more ? cursorAfter(items.at(-1)!, before + items.length, seen) : null,
      },
    };
  }
}
