/**
 * Builders for the two small query languages of the API (SPEC.md "JSON filters" and "Sorting").
 * They only produce the wire syntax, and refuse what the server would refuse before anything is sent.
 */
import { Filters, type ResultSort } from './contract/results.ts';

/** The longest expression the contract accepts (`filters` items). */
const MAX_FILTER_LENGTH: number = Filters.items.maxLength ?? Number.POSITIVE_INFINITY;

/**
 * Filter operators of SPEC.md: equal, strictly greater, strictly lower, greater or equal, lower or equal.
 * @example
 * const op: FilterOperator = '>=';
 */
export type FilterOperator = '==' | '>' | '<' | '>=' | '<=';

/**
 * A filter value. Numbers compare numerically, booleans as booleans, anything else as text; note that
 * the server reads a string that looks like a number (`'4'`) or a boolean (`'true'`) as one.
 * @example
 * const values: FilterValue[] = [4, 2.5, true, 'AMD EPYC 7742'];
 */
export type FilterValue = number | boolean | string;

function checkPath(path: string, what: string): void {
  if (typeof path !== 'string' || path.length === 0) throw new TypeError(`${what} must be a non-empty dotted path`);
  if (path === 'json') {
    throw new TypeError(`${what} 'json' alone is the whole document: name a value inside it (a top-level key named json is json.json)`);
  }
  if (/\s/.test(path)) throw new TypeError(`${what} '${path}' must not contain whitespace`);
  if (path.split('.').some((segment) => segment === '')) {
    throw new TypeError(`${what} '${path}' has an empty segment (write a.b.c, not a..b or .a)`);
  }
}

function formatValue(value: FilterValue): string {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`A filter value must be a finite number, got ${value}`);
    return String(value);
  }
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'string') {
    if (value.trim() === '') throw new TypeError('A filter value must not be an empty string');
    return value;
  }
  throw new TypeError(`A filter value must be a number, a boolean or a string, got ${typeof value}`);
}

/**
 * One JSON filter: `<path> <operator> <value>` on a result's `json`. `String(filter)` is the wire form.
 * The path is written `machine.cpu.count` or, as in `sort_by`, `json.machine.cpu.count`: the same
 * filter (a leading `json.` is always the prefix; a top-level key named json is `json.json`).
 * @example
 * const f = where('machine.cpu.count').gte(4);
 * String(f); // 'machine.cpu.count >= 4'
 * client.results.list({ filters: [f] });
 */
export class Filter {
  /** The wire form, e.g. `machine.cpu.count >= 4`. */
  readonly expression: string;

  constructor(
    readonly path: string,
    readonly operator: FilterOperator,
    readonly value: FilterValue,
  ) {
    checkPath(path, 'A filter path');
    if (!['==', '>', '<', '>=', '<='].includes(operator)) {
      throw new TypeError(`Unknown filter operator '${operator}'; use one of == > < >= <=`);
    }
    this.expression = `${path} ${operator} ${formatValue(value)}`;
    if (this.expression.length > MAX_FILTER_LENGTH) {
      throw new TypeError(`A filter expression must be at most ${MAX_FILTER_LENGTH} characters, got ${this.expression.length}`);
    }
  }

  toString(): string {
    return this.expression;
  }

  toJSON(): string {
    return this.expression;
  }
}

/**
 * Starts a JSON filter on a dotted path inside a result's `json`, with or without the `json.` prefix
 * (`where('json.machine.cpu.count')` is `where('machine.cpu.count')`). Refuses (TypeError) an empty
 * path, `json` alone, an empty segment (`a..b`), whitespace in the path, a non-finite number and an
 * empty string value. With `benchmark_id`, a path the benchmark's schema does not describe is still
 * sent, and the page's `warnings` name it with the nearest described path.
 * @example
 * const filters = [where('machine.cpu.count').gte(4), where('json.machine.cpu.count').lte(64)];
 * for await (const r of client.results.list({ benchmark_id, filters })) console.log(r.id);
 */
export function where(path: string) {
  checkPath(path, 'A filter path');
  return {
    /**
     * `path == value`
     * @example
     * where('machine.vendor').eq('AMD EPYC')
     */
    eq: (value: FilterValue) => new Filter(path, '==', value),
    /**
     * `path > value`
     * @example
     * where('score').gt(1)
     */
    gt: (value: FilterValue) => new Filter(path, '>', value),
    /**
     * `path < value`
     * @example
     * where('score').lt(1)
     */
    lt: (value: FilterValue) => new Filter(path, '<', value),
    /**
     * `path >= value`
     * @example
     * where('machine.cpu.count').gte(4)
     */
    gte: (value: FilterValue) => new Filter(path, '>=', value),
    /**
     * `path <= value`
     * @example
     * where('machine.cpu.count').lte(64)
     */
    lte: (value: FilterValue) => new Filter(path, '<=', value),
  };
}

/**
 * Fields results can be sorted by, as the contract declares them (`ResultSort`): `id`,
 * `upload_datetime`, `execution_datetime`, `benchmark_id`, `flavor_id`, `site_id`, `benchmark_name`,
 * `site_name`, `flavor_name`, or a dotted path inside `json`.
 * @example
 * const field: ResultSortField = 'json.result.score';
 */
export type ResultSortField = Exclude<(typeof ResultSort)['fields'][number], `json.${string}`> | `json.${string}`;

/**
 * One sort term. `String(term)` is the wire form, `+field` or `-field`.
 * @example
 * String(desc('json.result.score')); // '-json.result.score'
 */
export class SortTerm<F extends string = string> {
  constructor(
    readonly field: F,
    readonly direction: 'asc' | 'desc',
  ) {
    if (typeof field !== 'string' || field.length === 0) throw new TypeError('A sort field must be a non-empty string');
    if (/[\s,]/.test(field)) throw new TypeError(`A sort field must not contain whitespace or commas, got '${field}'`);
    if (/^[+-]/.test(field)) throw new TypeError(`Give the sort field without + or -, got '${field}'; use asc() or desc()`);
    if (field.split('.').some((segment) => segment === '')) throw new TypeError(`Sort field '${field}' has an empty segment`);
  }

  toString(): string {
    return `${this.direction === 'asc' ? '+' : '-'}${this.field}`;
  }

  toJSON(): string {
    return this.toString();
  }
}

/**
 * Ascending order on a field. Field names of results are typed ({@link ResultSortField}).
 * @example
 * client.results.list({ sort_by: [asc('execution_datetime')] });
 */
export function asc<const F extends string>(field: F): SortTerm<F> {
  return new SortTerm(field, 'asc');
}

/**
 * Descending order on a field.
 * @example
 * client.results.list({ sort_by: [desc('json.result.score'), asc('id')] });
 */
export function desc<const F extends string>(field: F): SortTerm<F> {
  return new SortTerm(field, 'desc');
}

/**
 * The `sort_by` wire value of some terms: `+execution_datetime,-json.result.score`. A bare string term
 * must already carry its `+` or `-`. The client sends the `+` as `%2B`.
 * @example
 * sortBy(asc('execution_datetime'), desc('json.result.score')); // '+execution_datetime,-json.result.score'
 */
export function sortBy(...terms: (SortTerm | string)[]): string {
  if (terms.length === 0) throw new TypeError('sortBy needs at least one term');
  return terms
    .map((term) => {
      if (term instanceof SortTerm) return term.toString();
      if (typeof term === 'string' && /^[+-]./.test(term)) return String(new SortTerm(term.slice(1), term[0] === '+' ? 'asc' : 'desc'));
      throw new TypeError(`A sort term must be asc(field), desc(field) or '+field' / '-field', got '${String(term)}'`);
    })
    .join(',');
}
