/**
 * Types derived from the contract, per operationId. Nothing here restates a schema: params, query,
 * body and response all come from `contract/` through `ParamsOf`/`QueryOf`/`BodyOf`/`ResponseOf`.
 */
import type { TSchema } from '@sinclair/typebox';
import type { BodyOf, OperationId, Operations, ParamsOf, QueryOf, ResponseOf } from './contract/index.ts';
import type { Filter, SortTerm } from './builders.ts';

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * A contract type as callers write it: every optional property, at any depth, also accepts
 * `undefined`, so `{ per_page: options.perPage }` compiles under `exactOptionalPropertyTypes`. On the
 * wire it is the same as leaving the property out: the query encoder skips it, JSON.stringify drops it.
 * Records (index signatures) are left as they are.
 */
type Input<T> = T extends readonly unknown[]
  ? { [I in keyof T]: Input<T[I]> }
  : T extends object
    ? string extends keyof T
      ? T
      : // biome-ignore lint/complexity/noBannedTypes: `{} extends Pick<T, K>` is the type-level test for an optional key
        { [K in keyof T]: {} extends Pick<T, K> ? Input<T[K]> | undefined : Input<T[K]> }
    : T;

/**
 * Path parameters of an operation, e.g. `Params<'getBenchmark'>` is `{ id: string }`.
 * @example
 * const params: Params<'getBenchmark'> = { id };
 */
export type Params<K extends OperationId> = ParamsOf<Operations[K]>;

/**
 * Query parameters of an operation, as the contract declares them (an optional one may be `undefined`).
 * @example
 * const query: Query<'listBenchmarks'> = { container_image: 'ghcr.io/acme/hpl', per_page: 10 };
 */
export type Query<K extends OperationId> = Input<QueryOf<Operations[K]>>;

/**
 * Request body of an operation (`undefined` when it takes none); an optional member may be `undefined`.
 * @example
 * const body: Body<'createTag'> = { name: 'gpu' };
 */
export type Body<K extends OperationId> = Input<BodyOf<Operations[K]>>;

/**
 * Success response body of an operation (`void` for 204).
 * @example
 * const user: Reply<'getSelf'> = await client.self.get();
 */
export type Reply<K extends OperationId> = ResponseOf<Operations[K]>;

/**
 * The item type of a list operation's page.
 * @example
 * type Benchmark = Item<'listBenchmarks'>;
 */
export type Item<K extends OperationId> = Reply<K> extends { items: (infer T)[] } ? T : never;

/**
 * The query of a list operation as the SDK accepts it: `filters` may hold {@link Filter}s built with
 * `where()`, and `sort_by` may be a list of {@link SortTerm}s built with `asc()`/`desc()` over the
 * fields `F` (any string when not given).
 * @example
 * const q: ListQuery<'listResults', ResultSortField> = { filters: [where('a').gt(1)], sort_by: [asc('id')] };
 */
export type ListQuery<K extends OperationId, F extends string = string> = Simplify<
  Omit<Query<K>, 'filters' | 'sort_by'> &
    ('filters' extends keyof Query<K> ? { filters?: readonly (string | Filter)[] | undefined } : unknown) &
    ('sort_by' extends keyof Query<K> ? { sort_by?: string | readonly SortTerm<F>[] | undefined } : unknown)
>;

/**
 * The sortable field names a contract sort declaration lists (`BenchmarkSort`, `SiteSort`, ...).
 * @example
 * type BenchmarkField = FieldsOf<typeof BenchmarkSort>; // 'id' | 'name' | 'container_image' | ...
 */
export type FieldsOf<S extends { fields: readonly string[] }> = S['fields'][number];

/**
 * The options every SDK method takes as its last, optional argument (as stripe-node's
 * `options?: RequestOptions`). Creating calls take {@link IdempotencyOptions}, these and a key.
 * @example
 * const benchmark = await client.benchmarks.get(id, { signal: controller.signal, timeoutMs: 5_000, headers: { 'x-request-id': 'nightly-42' } });
 */
export interface RequestOptions {
  /** Aborts the call (and its retries); the call then rejects with the signal's reason. */
  signal?: AbortSignal | undefined;
  /**
   * This call's timeout per attempt, in milliseconds, instead of the client's `timeoutMs`; `0`
   * disables it. For a streamed answer (an export) it bounds each wait for more of the body.
   */
  timeoutMs?: number | undefined;
  /**
   * Headers sent with this call (and each of its retries), e.g. `x-request-id` to follow it in the
   * server's logs. The ones the client sets itself (`authorization`, `idempotency-key`,
   * `content-type`, `accept`, `user-agent`, `host`, `content-length`) are refused with a `TypeError`:
   * use `token`/`getToken`, `idempotencyKey` and `userAgent` instead.
   */
  headers?: Record<string, string> | undefined;
}

type Def<K extends OperationId> = Operations[K];
type ParamsPart<K extends OperationId> = Def<K> extends { params: TSchema } ? { params: Params<K> } : { params?: undefined };
type QueryPart<K extends OperationId> =
  Def<K> extends { query: TSchema }
    ? // biome-ignore lint/complexity/noBannedTypes: `{} extends Query<K>` tests whether every query field is optional
      {} extends Query<K>
      ? { query?: Query<K> | undefined }
      : { query: Query<K> }
    : { query?: undefined };
type BodyPart<K extends OperationId> = Def<K> extends { body: TSchema } ? { body: Body<K> } : { body?: undefined };
/** Operations that declare an `Idempotency-Key` header (the creating POSTs) take `idempotencyKey`. */
type KeyPart<K extends OperationId> = Def<K> extends { headers: TSchema } ? Pick<IdempotencyOptions, 'idempotencyKey'> : unknown;

/**
 * The options of creating calls (POST of results, batches, benchmarks, sites, flavors, tags and
 * claims): {@link RequestOptions} and the call's `Idempotency-Key`. The client sends a key with each
 * such call, the same for every retry of it, so that the server applies the call once: by default a
 * new random UUID per call.
 * @example
 * const key = `nightly-${runId}`; // the same key if this script runs again
 * await client.results.createMany(items, { idempotencyKey: key });
 */
export interface IdempotencyOptions extends RequestOptions {
  /**
   * The key to send instead of a random one: 1 to 255 printable ASCII characters. Within 24 h the
   * server answers a call with a key it has seen (same caller) with the first call's answer and
   * stores nothing; another request under the same key is refused (422 `IDEMPOTENCY_KEY_REUSED`).
   */
  idempotencyKey?: string | undefined;
}

/**
 * The arguments of `client.call(operationId, args)`: `params`, `query` and `body`, each required
 * exactly when the operation declares it (a query only when it has a required field), with the
 * {@link RequestOptions} (and `idempotencyKey` for creating operations).
 * @example
 * const args: CallArgs<'getBenchmark'> = { params: { id } };
 */
export type CallArgs<K extends OperationId> = Simplify<ParamsPart<K> & QueryPart<K> & BodyPart<K> & KeyPart<K> & RequestOptions>;

/**
 * `[args]` when some argument is required, `[args?]` otherwise.
 * @example
 * function call<K extends OperationId>(id: K, ...args: CallArgsTuple<K>) {}
 */
// biome-ignore lint/complexity/noBannedTypes: `{} extends CallArgs<K>` tests whether every argument is optional
export type CallArgsTuple<K extends OperationId> = {} extends CallArgs<K> ? [args?: CallArgs<K>] : [args: CallArgs<K>];
