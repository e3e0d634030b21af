/**
 * `@benchmarks/sdk`: the typed client of the benchmark results service. Every type comes from the
 * contract (`@benchmarks/sdk/contract`), which the server implements. What users need is exported
 * here; the rest is reached by its own path: `@benchmarks/sdk/contract` (the operations as data),
 * `@benchmarks/sdk/chart` and `@benchmarks/sdk/changes-chart` (the SVG renderers),
 * `@benchmarks/sdk/csv`, `@benchmarks/sdk/json-schema`, `@benchmarks/sdk/url` and `@benchmarks/sdk/webhooks`
 * (`verifyWebhook`, for receivers; Node only).
 * @example
 * import { createClient, where, asc } from '@benchmarks/sdk';
 * const client = createClient({ baseUrl: 'http://localhost:8080', token: process.env.BENCHMARKS_TOKEN });
 * for await (const r of client.results.list({ filters: [where('cpu.count').gte(4)], sort_by: [asc('execution_datetime')] })) {
 *   console.log(r.id);
 * }
 */
export { createClient, type Client } from './client.ts';
export type { ClientOptions } from './core.ts';
export { where, asc, desc, sortBy, type Filter, type SortTerm, type ResultSortField } from './builders.ts';
export type { PageRequest, Page } from './pagination.ts';
export type { Warning } from './warnings.ts';
export {
  BenchmarksError,
  ApiError,
  ValidationError,
  AuthenticationError,
  PermissionError,
  NotFoundError,
  ConflictError,
  RateLimitError,
  ServerError,
  ConnectionError,
  IncompleteResponseError,
  TimeoutError,
  type ProblemDetail,
  type RequestInfo,
} from './errors.ts';
export type { FetchLike, FetchResponse } from './fetch.ts';
export type { Params, Query, Body, Reply, Item, ListQuery, CallArgs, RequestOptions, IdempotencyOptions } from './types.ts';
export type { UploadItem, UploadSource, UploadOptions, UploadProgress, UploadOutcome, UploadReport } from './upload.ts';
export type { CompareQuery, ChangesQuery, ExportQuery, ExportCsvQuery, ExportedResult } from './namespaces/results.ts';
export type { StreamedResponse } from './stream.ts';
export type { OperationId } from './contract/index.ts';
export { SDK_VERSION } from './version.ts';
