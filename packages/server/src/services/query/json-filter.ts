/**
 * The JSON filter and sort language of results (CONTRACT.md "Results"): `path op value` filters and
 * `json.<dotted.path>` sort keys, compiled to SQL fragments in which every path segment and every
 * value is a bound parameter. Nothing here can raise a SQL error on a value of an unexpected type:
 * comparisons are made between jsonb values (which never fail) behind a jsonb_typeof check.
 */
import { AppError, type ErrorDetail } from '../../core/errors.ts';
import { parseJsonPath } from './json-path.ts';

export type FilterOp = '==' | '>' | '<' | '>=' | '<=';
export type FilterValue = { kind: 'number'; json: string } | { kind: 'boolean'; json: 'true' | 'false' } | { kind: 'text'; text: string };

export interface JsonFilter {
  path: string[];
  op: FilterOp;
  value: FilterValue;
}

/** A SQL fragment with `?` placeholders and their values, in order. */
export interface Fragment {
  sql: string;
  params: unknown[];
}

/** jsonb numeric handles far more, but a bound keeps a value from costing anything to parse. */
const MAX_EXPONENT = 1000;
const OPS: readonly FilterOp[] = ['==', '>', '<', '>=', '<='];
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE]([+-]?\d+))?$/;
/** A segment that `#>` may read as an array index. */
const INDEX_SEGMENT = /^-?\d+$/;

export const FILTER_EXAMPLE = 'filters=machine.cpu.count%20%3E%3D%204 (that is: machine.cpu.count >= 4)';

function typedValue(raw: string): FilterValue | string {
  const number = JSON_NUMBER.exec(raw);
  if (number) {
    if (number[1] !== undefined && Math.abs(Number(number[1])) > MAX_EXPONENT) return `the exponent of ${raw} is out of range`;
    return { kind: 'number', json: raw };
  }
  if (/^(true|false)$/i.test(raw)) return { kind: 'boolean', json: raw.toLowerCase() as 'true' | 'false' };
  return { kind: 'text', text: raw };
}

/**
 * Parses `path op value`: split at the first two spaces, so the value may contain spaces.
 * Returns the filter or the reason it is malformed.
 */
export function parseFilter(expression: string): JsonFilter | string {
  if (expression.includes('\u0000')) return 'the NUL character (%00) is not allowed';
  const first = expression.indexOf(' ');
  const second = first < 0 ? -1 : expression.indexOf(' ', first + 1);
  if (second < 0) return 'expected three parts separated by spaces (%20): <dotted.path> <operator> <value>';
  // A filter's path is always a JSON path: `json.` is optional (services/query/json-path.ts).
  const path = parseJsonPath(expression.slice(0, first), { bare: true });
  if (!path.ok) return path.reason;
  const op = expression.slice(first + 1, second);
  if (!(OPS as readonly string[]).includes(op)) return `unknown operator '${op}'; use one of ${OPS.join(' ')}`;
  const raw = expression.slice(second + 1);
  if (raw === '') return 'the value is missing';
  const value = typedValue(raw);
  return typeof value === 'string' ? value : { path: path.segments, op: op as FilterOp, value };
}

/** Parses every filter; 422 INVALID_FILTER listing each malformed one, with an example. */
export function parseFilters(expressions: readonly string[] | undefined): JsonFilter[] {
  const out: JsonFilter[] = [];
  const problems: ErrorDetail[] = [];
  for (const [i, expression] of (expressions ?? []).entries()) {
    const parsed = parseFilter(expression);
    if (typeof parsed === 'string') problems.push({ in: 'query', path: 'filters', message: `filter ${i + 1} '${expression}': ${parsed}` });
    else out.push(parsed);
  }
  if (problems.length) {
    throw new AppError(
      422,
      'INVALID_FILTER',
      `${problems.map((p) => p.message).join('; ')}. A filter is <path> <operator> <value>, the path written json.<dotted.path> or <dotted.path>, e.g. ${FILTER_EXAMPLE}.`,
      { errors: problems },
    );
  }
  return out;
}

/**
 * `(column #> ?::text[])`: the jsonb value at the path, null when absent. The path is one array
 * value, so the text is the same whatever its depth; PostgreSQL plans unnamed statements with their
 * values, so the expression still matches a metric index on `json #> '{...}'::text[]`.
 */
export function valueAt(column: string, path: string[]): Fragment {
  return { sql: `(${column} #> ?::text[])`, params: [[...path]] };
}

function textAt(column: string, path: string[]): Fragment {
  return { sql: `(${column} #>> ?::text[])`, params: [[...path]] };
}

/** The filter value as JSON text. */
function jsonOf(value: FilterValue): string {
  return value.kind === 'text' ? JSON.stringify(value.text) : value.json;
}

/** `{"a":{"b":<value>}}`: what a result containing the value at the path contains (GIN-indexable). */
function containment(path: string[], value: FilterValue): string {
  return path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, jsonOf(value));
}

/**
 * SQL for one filter on the jsonb `column`. Values compare with their own type only: a number
 * with numbers (numerically), a boolean with booleans, text with strings (by code point); a
 * result with no value, or a value of another type, at the path does not match.
 */
export function filterSql(filter: JsonFilter, column: string): Fragment {
  const at = valueAt(column, filter.path);
  const { value } = filter;
  if (filter.op === '==') {
    const exact = { sql: `${at.sql} = ?::jsonb`, params: [...at.params, jsonOf(value)] };
    // Containment is implied by the exact match unless a segment may index an array; it lets the
    // planner use the GIN (jsonb_path_ops) index on result.json.
    if (filter.path.some((s) => INDEX_SEGMENT.test(s))) return exact;
    return { sql: `${column} @> ?::jsonb and ${exact.sql}`, params: [containment(filter.path, value), ...exact.params] };
  }
  if (value.kind === 'text') {
    const text = textAt(column, filter.path);
    return {
      sql: `jsonb_typeof(${at.sql}) = 'string' and ${text.sql} collate "C" ${filter.op} ? collate "C"`,
      params: [...at.params, ...text.params, value.text],
    };
  }
  return {
    sql: `jsonb_typeof(${at.sql}) = '${value.kind}' and ${at.sql} ${filter.op} ?::jsonb`,
    params: [...at.params, ...at.params, value.json],
  };
}
