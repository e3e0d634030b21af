import type { Static, TObject, TSchema } from '@sinclair/typebox';

/**
 * Who may call an operation.
 * - `none`: anyone; a token, if sent, is ignored.
 * - `optional`: anyone; a token, if sent, must be valid (401 otherwise) and names the caller, whose
 *   answer may hold more (registration not needed).
 * - `token`: a valid access token; registration is not needed.
 * - `user`: a valid token of a registered user.
 * - `admin`: a registered user holding one of the configured admin entitlements.
 */
export type AuthLevel = 'none' | 'optional' | 'token' | 'user' | 'admin';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Documented error statuses; every one is an `application/problem+json` body. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 422 | 429 | 503;

/** The OpenAPI document's tags and their descriptions: each operation carries one. */
export const TAGS = {
  service: 'Liveness, readiness, this document, and how to obtain an access token.',
  users: "The caller's registration and account; administrators' views of every user.",
  benchmarks: 'Containerised benchmarks and the JSON Schema of their results.',
  sites: 'Sites where benchmarks run.',
  flavors: "A site's machine flavors and their prices.",
  tags: 'Labels that results carry.',
  results: 'Uploading, reading, comparing and exporting results, their changes over time, and claims on them.',
  reports: "Administrators' review queues: items waiting for review and claims.",
  alerts: 'Watched series, their change records and their triage.',
  webhooks: "The caller's webhook endpoints, which receive the alerts of its watches, and their deliveries.",
} as const;

/**
 * One operation of the API, declared once as data. The server's routing and validation, the
 * OpenAPI document and the SDK's types are all derived from it.
 */
export interface OperationDef {
  operationId: string;
  method: HttpMethod;
  /** Path relative to `/api/v1`, with `{name}` parameters, e.g. `/benchmarks/{id}:approve`. */
  path: string;
  tag: keyof typeof TAGS;
  summary: string;
  description?: string;
  auth: AuthLevel;
  params?: TObject;
  query?: TObject;
  /**
   * Request headers the operation reads, by their canonical name (`Idempotency-Key`); every one
   * optional. Other headers are not checked.
   */
  headers?: TObject;
  body?: TSchema;
  /** The body may be left out (it is then `undefined`). */
  bodyOptional?: boolean;
  /**
   * Success status and its body schema; `null` for an empty body (204). `alternatives`: other media
   * types the operation can answer instead (chosen by a query parameter or `Accept`), documented
   * beside the main one. `headers`: response headers the answer may carry, by canonical name.
   */
  response: {
    status: 200 | 201 | 204;
    schema: TSchema | null;
    contentType?: string;
    alternatives?: Record<string, TSchema>;
    headers?: Record<string, TSchema>;
  };
  errors?: readonly ErrorStatus[];
}

/** Declares an operation, keeping its literal types for the SDK. */
export function defineOperation<const T extends OperationDef>(def: T): T {
  return def;
}

type StaticOr<T, Fallback> = T extends TSchema ? Static<T> : Fallback;

export type ParamsOf<O extends OperationDef> = StaticOr<O['params'], Record<string, never>>;
export type QueryOf<O extends OperationDef> = StaticOr<O['query'], Record<string, never>>;
export type BodyOf<O extends OperationDef> = StaticOr<O['body'], undefined>;
// biome-ignore lint/suspicious/noConfusingVoidType: `void` (not `undefined`) so that server handlers of 204 operations may return nothing (Promise<void>); part of the published types
export type ResponseOf<O extends OperationDef> = O['response']['schema'] extends TSchema ? Static<O['response']['schema']> : void;
