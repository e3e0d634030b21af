/**
 * Types derived from the contract, per operationId. Nothing here restates a schema: params, query,
 * body and response all come from `contract/` through `ParamsOf`/`QueryOf`/`BodyOf`/`ResponseOf`.
 */
import type { TSchema } from '@sinclair/typebox';
import type { BodyOf, Operations, ParamsOf, QueryOf, ResponseOf } from './contract/index.ts';
import type { Filter, SortTerm } from './builders.ts';
import type { QueryValue } from './url.ts';

type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Def<K extends string> = K extends keyof Operations ? Operations[K] : never;
type Known<K extends string> = K extends keyof Operations ? true : false;

/**
 * Path parameters of an operation, e.g. `Params<'getBenchmark'>` is `{ id: string }`.
 * @example
 * const params: Params<'getSelf'> = {};
 */
export type Params<K extends string> = Known<K> extends true ? ParamsOf<Def<K>> : Record<string, string>;

/**
 * Query parameters of an operation, as the contract declares them.
 * @example
 * const query: Query<'getHealth'> = {};
 */
export type Query<K extends string> =
  Known<K> extends true ? QueryOf<Def<K>> : Record<string, QueryValue | readonly QueryValue[]>;

/**
 * Request body of an operation (`undefined` when it takes none).
 * @example
 * type NewBenchmark = Body<'createBenchmark'>;
 */
export type Body<K extends string> = Known<K> extends true ? BodyOf<Def<K>> : unknown;

/**
 * Success response body of an operation (`void` for 204).
 * @example
 * const user: Reply<'getSelf'> = await client.self.get();
 */
export type Reply<K extends string> = Known<K> extends true ? ResponseOf<Def<K>> : any;

/**
 * The item type of a list operation's page.
 * @example
 * type Benchmark = Item<'listBenchmarks'>;
 */
export type Item<K extends string> = Reply<K> extends { items: (infer T)[] } ? T : unknown;

/**
 * The query of a list operation as the SDK accepts it: `filters` may hold {@link Filter}s built with
 * `where()`, and `sort_by` may be a list of {@link SortTerm}s built with `asc()`/`desc()` over the
 * fields `F` (any string for resources whose fields are not typed).
 * @example
 * const q: ListQuery<'listResults', ResultSortField> = { filters: [where('a').gt(1)], sort_by: [asc('id')] };
 */
export type ListQuery<K extends string, F extends string = string> = Simplify<
  Omit<Query<K>, 'filters' | 'sort_by'> &
    ('filters' extends keyof Query<K> ? { filters?: readonly (string | Filter)[] } : unknown) &
    ('sort_by' extends keyof Query<K> ? { sort_by?: string | readonly SortTerm<F>[] } : unknown)
>;

/** Per-call options. */
export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
}

type ParamsPart<K extends string> =
  Known<K> extends true
    ? Def<K> extends { params: TSchema }
      ? { params: Params<K> }
      : { params?: undefined }
    : { params?: Record<string, string> };

type QueryPart<K extends string> =
  Known<K> extends true
    ? Def<K> extends { query: TSchema }
      ? {} extends Query<K>
        ? { query?: Query<K> }
        : { query: Query<K> }
      : { query?: undefined }
    : { query?: Query<K> };

type BodyPart<K extends string> =
  Known<K> extends true
    ? Def<K> extends { body: TSchema }
      ? { body: Body<K> }
      : { body?: undefined }
    : { body?: unknown };

/**
 * The arguments of `client.call(operationId, args)`: `params`, `query` and `body`, each required
 * exactly when the operation declares it (a query only when it has a required field).
 * @example
 * const args: CallArgs<'getSelf'> = {};
 */
export type CallArgs<K extends string> = Simplify<ParamsPart<K> & QueryPart<K> & BodyPart<K> & CallOptions>;

/** `[args]` when some argument is required, `[args?]` otherwise. */
export type CallArgsTuple<K extends string> = {} extends CallArgs<K> ? [args?: CallArgs<K>] : [args: CallArgs<K>];

/**
 * The sortable field names a contract sort declaration lists (`BenchmarkSort`, `SiteSort`, ...).
 * @example
 * type BenchmarkField = FieldsOf<typeof BenchmarkSort>; // 'id' | 'name' | 'container_image' | ...
 */
export type FieldsOf<S extends { fields: readonly string[] }> = S['fields'][number];
