/**
 * The order of a list as data (docs/querying.md, "Walking a list with a cursor"): one `KeyTerm` per
 * ORDER BY expression, from which the ORDER BY itself, the text of each key of a row (what a
 * cursor carries) and the predicate "sorts after this row" are all generated, so that the three
 * cannot disagree. The predicate follows PostgreSQL's order exactly: the direction of each term,
 * where its NULLs go (last ascending, first descending, unless the term says otherwise), and the
 * collation the term sorts by. Every value is a bound parameter with the key's type.
 */
import type { Fragment } from './json-filter.ts';

/** The SQL type of a key: how its value is written in a cursor and bound back. */
export type KeyType = 'uuid' | 'timestamptz' | 'text' | 'int' | 'jsonb';

export interface KeyTerm {
  /** The expression, fixed SQL text with `?` placeholders for `params`. */
  sql: string;
  params: unknown[];
  type: KeyType;
  descending: boolean;
  /** NULLS FIRST or LAST as the ORDER BY says it; absent: PostgreSQL's default. */
  nulls?: 'first' | 'last';
  /** Whether the expression may be NULL. */
  nullable: boolean;
  /** The expression sorts by the "C" collation (it carries `collate "C"`): so must the bound value. */
  collateC?: boolean;
  /** One of the columns that together identify a row (the list's tie-breakers). */
  unique?: boolean;
  /**
   * The same value read from the page's selected row `p` when `sql` cannot be (results select
   * their page in a subquery and add the embedded rows' columns outside it). Default: `sql`.
   */
  read?: Fragment;
}

/**
 * A sort key on a column (fixed text, `c.upload_datetime` or `name`), typed by its name: `id` and
 * `…_id` are uuids, `…_datetime` timestamps, anything else text. Columns that identify a row are
 * `unique`; the others are taken as possibly NULL (description, url, email).
 */
export function columnKey(column: string, descending: boolean, unique = false): KeyTerm {
  const name = column.slice(column.lastIndexOf('.') + 1);
  const type = name === 'id' || name.endsWith('_id') ? 'uuid' : name.endsWith('_datetime') ? 'timestamptz' : 'text';
  return { sql: column, params: [], type, descending, nullable: !unique, unique };
}

const FALSE: Fragment = { sql: 'false', params: [] };

const CAST: Record<KeyType, string> = { uuid: 'uuid', timestamptz: 'timestamptz', text: 'text', int: 'int', jsonb: 'jsonb' };

/** Where NULLs of this term sort. */
function nullsFirst(key: KeyTerm): boolean {
  return key.nulls ? key.nulls === 'first' : key.descending;
}

/** ORDER BY of the terms (all of them: terms after the identifying ones change nothing but keep the text). */
export function orderSql(keys: readonly KeyTerm[]): Fragment {
  return {
    sql: `order by ${keys.map((k) => `${k.sql} ${k.descending ? 'desc' : 'asc'}${k.nulls ? ` nulls ${k.nulls}` : ''}`).join(', ')}`,
    params: keys.flatMap((k) => k.params),
  };
}

/**
 * The terms a cursor needs: up to the one that completes the row's identity (the order of rows
 * equal on those is decided; later terms never separate two rows).
 */
export function cursorKeys(keys: readonly KeyTerm[]): KeyTerm[] {
  const last = keys.findLastIndex((k) => k.unique);
  if (last < 0) throw new Error('keyset: an order must end with the columns that identify a row');
  return keys.slice(0, last + 1);
}

/**
 * The text of a key of a row, as a cursor carries it: exact (a timestamp to the microsecond in UTC,
 * a jsonb number as PostgreSQL prints it), so that binding it back compares equal.
 */
export function keyTextSql(key: KeyTerm, expression: Fragment = { sql: key.sql, params: key.params }): Fragment {
  if (key.type === 'timestamptz') {
    return { sql: `to_char((${expression.sql}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`, params: expression.params };
  }
  return { sql: `(${expression.sql})::text`, params: expression.params };
}

/** `select`-list items `… as _k0, … as _k1` reading each key of the selected rows (from `read` when set). */
export function keyColumnsSql(keys: readonly KeyTerm[], useRead = false): Fragment {
  const parts = keys.map((k, i) => {
    const text = keyTextSql(k, useRead && k.read ? k.read : undefined);
    return { sql: `${text.sql} as _k${i}`, params: text.params };
  });
  return { sql: parts.map((p) => p.sql).join(', '), params: parts.flatMap((p) => p.params) };
}

/** The key texts of a row selected with keyColumnsSql. */
export function keyValuesOf(row: Record<string, unknown>, count: number): (string | null)[] {
  return Array.from({ length: count }, (_, i) => (row[`_k${i}`] ?? null) as string | null);
}

const bound = (key: KeyTerm) => `?::${CAST[key.type]}${key.collateC ? ' collate "C"' : ''}`;

function compare(key: KeyTerm, op: '<' | '>' | '=' | '<=' | '>=', value: string): Fragment {
  return { sql: `${key.sql} ${op} ${bound(key)}`, params: [...key.params, value] };
}

function or(a: Fragment, b: Fragment): Fragment {
  if (a === FALSE) return b;
  if (b === FALSE) return a;
  return { sql: `(${a.sql} or ${b.sql})`, params: [...a.params, ...b.params] };
}

function and(a: Fragment, b: Fragment): Fragment {
  if (a === FALSE || b === FALSE) return FALSE;
  return { sql: `(${a.sql} and ${b.sql})`, params: [...a.params, ...b.params] };
}

/** Rows whose single key sorts strictly after `value`. */
function afterOne(key: KeyTerm, value: string | null): Fragment {
  if (value === null) return nullsFirst(key) ? { sql: `${key.sql} is not null`, params: key.params } : FALSE;
  const strict = compare(key, key.descending ? '<' : '>', value);
  return key.nullable && !nullsFirst(key) ? or(strict, { sql: `${key.sql} is null`, params: key.params }) : strict;
}

function equalOne(key: KeyTerm, value: string | null): Fragment {
  return value === null ? { sql: `${key.sql} is null`, params: key.params } : compare(key, '=', value);
}

/** A row comparison `(a, b) op (?, ?)` over keys that are never NULL and share a direction. */
function rowCompare(keys: readonly KeyTerm[], values: readonly string[], op: '<' | '>' | '=' | '<=' | '>='): Fragment {
  if (keys.length === 1) return compare(keys[0]!, op, values[0]!);
  return {
    sql: `(${keys.map((k) => k.sql).join(', ')}) ${op} (${keys.map(bound).join(', ')})`,
    params: [...keys.flatMap((k) => k.params), ...values],
  };
}

interface Run {
  keys: KeyTerm[];
  values: (string | null)[];
  /** Never NULL, same direction: compared as one row value, which an index on those columns serves. */
  plain: boolean;
}

/** Consecutive keys that can be compared as one row value; any other key on its own. */
function runs(keys: readonly KeyTerm[], values: readonly (string | null)[]): Run[] {
  const out: Run[] = [];
  keys.forEach((key, i) => {
    const value = values[i]!;
    const plain = !key.nullable && value !== null;
    const last = out.at(-1);
    if (plain && last?.plain && last.keys[0]!.descending === key.descending) {
      last.keys.push(key);
      last.values.push(value);
    } else {
      out.push({ keys: [key], values: [value], plain });
    }
  });
  return out;
}

function afterRun(run: Run): Fragment {
  if (run.plain) return rowCompare(run.keys, run.values as string[], run.keys[0]!.descending ? '<' : '>');
  return afterOne(run.keys[0]!, run.values[0]!);
}

function equalRun(run: Run): Fragment {
  if (run.plain) return rowCompare(run.keys, run.values as string[], '=');
  return equalOne(run.keys[0]!, run.values[0]!);
}

/**
 * Rows that sort strictly after the row whose keys are `values` (texts as keyTextSql reads them;
 * null for NULL), in the order of `keys` (cursorKeys). Lexicographic: after on the first run, or
 * equal on it and after on the rest. When the first run is of plain columns, it is also stated on
 * its own as a bound (`(a, b) >= (?, ?)`), which lets an index on those columns start the scan at
 * the cursor instead of filtering every row before it.
 */
export function afterSql(keys: readonly KeyTerm[], values: readonly (string | null)[]): Fragment {
  if (values.length !== keys.length) throw new Error(`keyset: ${values.length} values for ${keys.length} keys`);
  const all = runs(keys, values);
  let predicate = afterRun(all.at(-1)!);
  for (let i = all.length - 2; i >= 0; i--) predicate = or(afterRun(all[i]!), and(equalRun(all[i]!), predicate));
  const first = all[0]!;
  if (all.length > 1 && first.plain) {
    const start = rowCompare(first.keys, first.values as string[], first.keys[0]!.descending ? '<=' : '>=');
    predicate = and(start, predicate);
  }
  return predicate;
}
