/**
 * `@benchmarks/sdk`: the typed client of the benchmark results service. Every type comes from the
 * contract (`@benchmarks/sdk/contract`), which the server implements.
 * @example
 * import { createClient, where, asc } from '@benchmarks/sdk';
 * const client = createClient({ baseUrl: 'http://localhost:8080', token: process.env.BENCHMARKS_TOKEN });
 * for await (const r of client.results.list({ filters: [where('cpu.count').gte(4)], sort_by: [asc('execution_datetime')] })) {
 *   console.log(r.id);
 * }
 */
export { createClient, type Client } from './client.ts';
export { Core, type ClientOptions } from './core.ts';
export {
  where,
  asc,
  desc,
  sortBy,
  Filter,
  SortTerm,
  type FilterPath,
  type FilterOperator,
  type FilterValue,
  type ResultSortField,
} from './builders.ts';
export { PageRequest, type Page } from './pagination.ts';
export { parseWarningHeader, type Warning } from './warnings.ts';
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
  errorFromResponse,
  parseRetryAfter,
  type ProblemDetail,
  type RequestInfo,
  type ApiErrorInit,
} from './errors.ts';
export type { FetchLike, FetchResponse } from './fetch.ts';
export type {
  Params,
  Query,
  Body,
  Reply,
  Item,
  ListQuery,
  FieldsOf,
  CallArgs,
  CallArgsTuple,
  CallOptions,
  IdempotencyOptions,
} from './types.ts';
export { newIdempotencyKey } from './retry.ts';
export type { UploadItem, UploadOutcome, UploadOptions, UploadProgress, BatchUploadOutcome, BatchUploadOptions } from './upload.ts';
export { MAX_BATCH_ITEMS } from './contract/results.ts';
export type { BenchmarksNamespace } from './namespaces/benchmarks.ts';
export type { SitesNamespace } from './namespaces/sites.ts';
export type { FlavorsNamespace } from './namespaces/flavors.ts';
export type { TagsNamespace } from './namespaces/tags.ts';
export type { ResultsNamespace, CompareQuery, ChangesQuery, ExportQuery, ExportCsvQuery, ExportedResult } from './namespaces/results.ts';
export type { StreamedResponse } from './stream.ts';
export { renderCompareSvg } from './chart.ts';
export { renderChangesSvg } from './changes-chart.ts';
export type { ClaimsNamespace, SubmissionsNamespace } from './namespaces/reports.ts';
export type { UsersNamespace } from './namespaces/users.ts';
export type { SelfNamespace } from './namespaces/self.ts';
export { apiBaseUrl, encodeQuery, expandPath, type QueryValue } from './url.ts';
export { SDK_VERSION } from './version.ts';
export { operations, API_BASE_PATH, type Operations, type OperationId } from './contract/index.ts';
