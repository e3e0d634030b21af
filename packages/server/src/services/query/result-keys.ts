/**
 * The order of result lists as key terms (services/query/keyset.ts): the ORDER BY of a page and the
 * keyset predicate of a cursor are both generated from these, so they agree exactly, JSON paths
 * included (numbers first, numerically; other values by their text in code point order; missing
 * or null last in both directions).
 */
import { valueAt, type Fragment } from './json-filter.ts';
import { prefixedJsonPath } from './json-path.ts';
import type { KeyTerm, KeyType } from './keyset.ts';
import type { SortTerm } from './sort.ts';

export type Join = 'b' | 's' | 'f';

export const BENCHMARK_NAME = `(b.container_image || ':' || b.container_tag)`;

interface FixedField {
  /** The expression over `r` and the joined catalogue rows. */
  sql: string;
  /** The same value read from a page row `p` (a result row, nothing joined). */
  read: string;
  type: KeyType;
  join?: Join;
}

/** Fixed sort fields → SQL expression (fixed text), its type and the join it needs. */
export const SORT_FIELDS: Record<string, FixedField> = {
  id: { sql: 'r.id', read: 'p.id', type: 'uuid' },
  upload_datetime: { sql: 'r.upload_datetime', read: 'p.upload_datetime', type: 'timestamptz' },
  execution_datetime: { sql: 'r.execution_datetime', read: 'p.execution_datetime', type: 'timestamptz' },
  benchmark_id: { sql: 'r.benchmark_id', read: 'p.benchmark_id', type: 'uuid' },
  flavor_id: { sql: 'r.flavor_id', read: 'p.flavor_id', type: 'uuid' },
  site_id: { sql: 'r.site_id', read: 'p.site_id', type: 'uuid' },
  benchmark_name: {
    sql: BENCHMARK_NAME,
    read: `(select ${BENCHMARK_NAME} from benchmark b where b.id = p.benchmark_id)`,
    type: 'text',
    join: 'b',
  },
  site_name: { sql: 's.name', read: '(select s.name from site s where s.id = p.site_id)', type: 'text', join: 's' },
  flavor_name: { sql: 'f.name', read: '(select f.name from flavor f where f.id = p.flavor_id)', type: 'text', join: 'f' },
};

const typeOf = (at: string) => `jsonb_typeof(${at})`;

/**
 * The three terms of a `json.<path>` sort over the jsonb `column` (read back from `p.json`):
 * 1. 0 for a number, 1 for another value, NULL when missing or null: NULLS LAST in both directions;
 * 2. the number (NULL otherwise), compared as jsonb numbers, numerically;
 * 3. the text of any other value (NULL otherwise), in the "C" collation (code point order).
 */
export function jsonSortKeys(path: string[], descending: boolean, column = 'r.json', readColumn = 'p.json'): KeyTerm[] {
  const terms = (col: string) => {
    const at = valueAt(col, path);
    const text: Fragment = { sql: `(${col} #>> ?::text[])`, params: [[...path]] };
    return [
      {
        sql: `case when ${typeOf(at.sql)} = 'number' then 0 when ${typeOf(at.sql)} <> 'null' then 1 end`,
        params: [...at.params, ...at.params],
      },
      { sql: `case when ${typeOf(at.sql)} = 'number' then ${at.sql} end`, params: [...at.params, ...at.params] },
      { sql: `(case when ${typeOf(at.sql)} <> 'number' then ${text.sql} end) collate "C"`, params: [...at.params, ...text.params] },
    ];
  };
  const [rank, number, text] = terms(column);
  const [readRank, readNumber, readText] = terms(readColumn);
  return [
    { ...rank!, type: 'int', descending, nulls: 'last', nullable: true, read: readRank },
    { ...number!, type: 'jsonb', descending, nullable: true, read: readNumber },
    { ...text!, type: 'text', descending, nullable: true, collateC: true, read: readText },
  ];
}

/**
 * The key terms of a result list's order and the joins they need: the sort terms (a field given
 * twice counts once), then id in the direction of the last term (so that `-execution_datetime`
 * walks an (execution_datetime, id) index backwards), unless id was one of them.
 */
export function resultSortKeys(terms: readonly SortTerm[]): { keys: KeyTerm[]; joins: Set<Join> } {
  const keys: KeyTerm[] = [];
  const joins = new Set<Join>();
  const used = new Set<string>();
  const fixed = (field: string, descending: boolean): KeyTerm => {
    const f = SORT_FIELDS[field]!;
    if (f.join) joins.add(f.join);
    return {
      sql: f.sql,
      params: [],
      type: f.type,
      descending,
      nullable: false,
      unique: field === 'id',
      read: { sql: f.read, params: [] },
    };
  };
  for (const term of terms) {
    if (used.has(term.field)) continue;
    used.add(term.field);
    if (Object.hasOwn(SORT_FIELDS, term.field)) keys.push(fixed(term.field, term.descending));
    else keys.push(...jsonSortKeys(prefixedJsonPath(term.field)!, term.descending));
  }
  if (!used.has('id')) keys.push(fixed('id', terms.at(-1)?.descending ?? false));
  return { keys, joins };
}
