/**
 * The SDK's errors: every failure of a call is a {@link BenchmarksError}. None carries the request
 * headers: the `Authorization` header and the token never appear in an error, its message, its JSON
 * form or its `util.inspect` output (as octokit's RequestError redacts).
 */

/**
 * One entry of a problem's `errors`: where (`body`, `query`, `path`, `header`, `json`), which, what.
 * @example
 * for (const e of err.errors) console.error(`${e.in} ${e.path}: ${e.message}`);
 */
export interface ProblemDetail {
  in: string;
  path: string;
  message: string;
}

/**
 * The method and URL of the request that failed. Never its headers.
 * @example
 * console.error(`${err.request.method} ${err.request.url} failed`);
 */
export interface RequestInfo {
  method: string;
  url: string;
}

/**
 * The base class of every error thrown by the SDK.
 * @example
 * try {
 *   await client.benchmarks.get(id);
 * } catch (err) {
 *   if (err instanceof BenchmarksError) console.error(err.message);
 * }
 */
export class BenchmarksError extends Error {
  /** The request that failed (method and URL, no headers). */
  readonly request: RequestInfo;
  /**
   * The request's id, to quote when asking the service's operators (their logs are keyed by it): the
   * server's `X-Request-Id` answer header (or the id in the problem's `instance`) when it answered;
   * otherwise the `x-request-id` the call sent in its `headers`, if it sent one; else `undefined`.
   */
  readonly requestId: string | undefined;

  constructor(message: string, request: RequestInfo, options?: BenchmarksErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.request = request;
    this.requestId = options?.requestId;
  }
}

/**
 * What an SDK error is built with besides its message and request: its cause and the request's id.
 * @example
 * new ConnectionError('Cannot reach the service', request, { cause: err, requestId: 'nightly-42' });
 */
export interface BenchmarksErrorOptions {
  cause?: unknown;
  requestId?: string | undefined;
}

/**
 * The problem+json fields an {@link ApiError} is built from: its own members, each optional (and
 * may be `undefined`) but `status` and `request`.
 * @example
 * new ApiError({ status: 418, code: 'TEAPOT', request: { method: 'GET', url } });
 */
export type ApiErrorInit = Pick<ApiError, 'status' | 'request'> &
  Optional<Pick<ApiError, 'type' | 'title' | 'detail' | 'code' | 'errors' | 'headers' | 'extensions' | 'requestId'>>;

type Optional<T> = { [K in keyof T]?: T[K] | undefined };

/**
 * The server answered with an error status. Carries the RFC 9457 problem fields of the body.
 * @example
 * try {
 *   await client.self.register();
 * } catch (err) {
 *   if (err instanceof ApiError) console.error(err.status, err.code, err.detail, err.errors);
 * }
 */
export class ApiError extends BenchmarksError {
  /** HTTP status, e.g. 422. */
  readonly status: number;
  /** Stable UPPER_SNAKE code, e.g. `ALREADY_REGISTERED`; `HTTP_<status>` when the body was no problem. */
  readonly code: string;
  /** Problem type URI, e.g. `urn:benchmarks:problem:already-registered`. */
  readonly type: string;
  /** Short summary of the status, e.g. `Conflict`. */
  readonly title: string;
  /** Human-readable explanation of this occurrence. */
  readonly detail: string;
  /** Each invalid input, when the server listed them (validation errors). */
  readonly errors: ProblemDetail[];
  /** Response headers, e.g. `www-authenticate`, `retry-after`, `allow`. */
  readonly headers: Record<string, string>;
  /** Extra members of the problem body. */
  readonly extensions: Record<string, unknown>;

  constructor(init: ApiErrorInit) {
    const title = init.title ?? `HTTP ${init.status}`;
    const code = init.code ?? `HTTP_${init.status}`;
    const detail = init.detail ?? title;
    super(`${init.status} ${title}: ${detail} [${code}] (${init.request.method} ${init.request.url})`, init.request, {
      requestId: init.requestId,
    });
    this.status = init.status;
    this.code = code;
    this.type = init.type ?? 'about:blank';
    this.title = title;
    this.detail = detail;
    this.errors = init.errors ?? [];
    this.headers = init.headers ?? {};
    this.extensions = init.extensions ?? {};
  }
}

/**
 * The request was refused as invalid: 400 (malformed JSON), 413 (too large), 415 (not JSON),
 * 422 (validation; see `errors` for each problem).
 * @example
 * await client.benchmarks.create(input).catch((err) => {
 *   if (err instanceof ValidationError) for (const e of err.errors) console.error(e.in, e.path, e.message);
 *   throw err;
 * });
 */
export class ValidationError extends ApiError {}

/**
 * 401: no token, or a token the server does not accept (expired, untrusted issuer).
 * @example
 * const me = await client.self.get().catch(async (err) => {
 *   if (err instanceof AuthenticationError) await refreshLogin();
 *   throw err;
 * });
 */
export class AuthenticationError extends ApiError {}

/**
 * 403: the caller is known but not allowed (not registered, not an administrator, not the uploader).
 * @example
 * await client.tags.create({ name: 'gpu' }).catch(async (err) => {
 *   if (err instanceof PermissionError && err.code === 'NOT_REGISTERED') await client.self.register();
 *   throw err;
 * });
 */
export class PermissionError extends ApiError {}

/**
 * 404 (unknown id or path) or 405 (the path exists, the method does not).
 * @example
 * const benchmark = await client.benchmarks.get(id).catch((err) => { if (err instanceof NotFoundError) return null; throw err; });
 */
export class NotFoundError extends ApiError {}

/**
 * 409: a duplicate (already registered, same name) or a wrong state (approving an approved item).
 * @example
 * await client.self.register().catch((err) => {
 *   if (!(err instanceof ConflictError && err.code === 'ALREADY_REGISTERED')) throw err;
 * });
 */
export class ConflictError extends ApiError {}

/**
 * 429: too many requests. `retryAfter` is the wait the server asked for, in seconds, when it said.
 * GET, PUT and DELETE calls are retried automatically first (see `retries`).
 * @example
 * const page = await client.results.list().catch(async (err) => {
 *   if (err instanceof RateLimitError) await new Promise((r) => setTimeout(r, (err.retryAfter ?? 1) * 1000));
 *   throw err;
 * });
 */
export class RateLimitError extends ApiError {
  /** Seconds to wait before trying again, from the `Retry-After` header; undefined when absent. */
  readonly retryAfter: number | undefined;

  constructor(init: ApiErrorInit & { retryAfter?: number | undefined }) {
    super(init);
    this.retryAfter = init.retryAfter;
  }
}

/**
 * 5xx: the server failed or is unavailable (503 while its database is down). Safe requests are
 * retried on 502, 503 and 504 before this is thrown.
 * @example
 * await client.ready().catch((err) => {
 *   if (err instanceof ServerError) console.error('service unavailable, try later');
 *   throw err;
 * });
 */
export class ServerError extends ApiError {}

/**
 * No response: the connection was refused or reset, DNS failed, TLS failed. `cause` holds the
 * underlying error (its message never contains the token).
 * @example
 * await client.health().catch((err) => {
 *   if (err instanceof ConnectionError) console.error(`cannot reach ${err.request.url}`);
 *   throw err;
 * });
 */
export class ConnectionError extends BenchmarksError {}

/**
 * A streamed answer (an export) broke off: the server answered 200 and began the body, then the
 * connection was lost or the body ended without its final newline. What arrived is incomplete and
 * must not be taken for the whole; the call is not retried (the caller already holds part of it).
 * `receivedBytes` counts the bytes that did arrive.
 * @example
 * try {
 *   for await (const r of client.results.export({ benchmark_id })) write(r);
 * } catch (err) {
 *   if (err instanceof IncompleteResponseError) console.error(`export cut short after ${err.receivedBytes} bytes`);
 *   throw err;
 * }
 */
export class IncompleteResponseError extends ConnectionError {
  /** How many bytes of the body arrived before it broke off. */
  readonly receivedBytes: number;

  constructor(request: RequestInfo, receivedBytes: number, reason: string, options?: BenchmarksErrorOptions) {
    super(`The answer of ${request.method} ${request.url} broke off after ${receivedBytes} bytes: ${reason}`, request, options);
    this.receivedBytes = receivedBytes;
  }
}

/**
 * No response within `timeoutMs` (see `createClient`). Not retried: a slow server is not made faster
 * by asking again.
 * @example
 * const client = createClient({ baseUrl, timeoutMs: 5_000 });
 * await client.health().catch((err) => {
 *   if (err instanceof TimeoutError) console.error(`gave up after ${err.timeoutMs} ms`);
 *   throw err;
 * });
 */
export class TimeoutError extends BenchmarksError {
  /** The timeout that expired, in milliseconds. */
  readonly timeoutMs: number;

  constructor(request: RequestInfo, timeoutMs: number, options?: BenchmarksErrorOptions) {
    super(`No response within ${timeoutMs} ms (${request.method} ${request.url})`, request, options);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Parses `Retry-After`: delta-seconds or an HTTP date. Returns seconds (>= 0) or undefined.
 * @example
 * parseRetryAfter('120'); // 120
 * parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT'); // 0 (in the past)
 */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value == null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, Math.ceil((date - now) / 1000));
}

const STANDARD = new Set(['type', 'title', 'status', 'detail', 'code', 'errors']);
/** A problem's `instance` names its request: `urn:benchmarks:request:<id>`. */
const INSTANCE = /^urn:benchmarks:request:([A-Za-z0-9._-]{1,64})$/;
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * The one factory that turns an error response into the right {@link ApiError} subclass.
 * `redact` removes secrets (the token) from server-provided text, should any server echo it.
 * @example
 * const err = errorFromResponse({ status: 404, body: { code: 'NOT_FOUND', detail: 'x' }, headers: {}, request: { method: 'GET', url } });
 * err instanceof NotFoundError; // true
 */
export function errorFromResponse(response: {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  request: RequestInfo;
  redact?: ((text: string) => string) | undefined;
  /** The request's id when known otherwise (the id the call sent); the answer's own wins. */
  requestId?: string | undefined;
}): ApiError {
  const { status, headers, request } = response;
  const redact = response.redact ?? ((s: string) => s);
  const { body } = response;
  const p: Record<string, unknown> = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const text = typeof body === 'string' && body.trim() ? body.trim().slice(0, 500) : undefined;
  const extensions = Object.fromEntries(Object.entries(p).filter(([k]) => !STANDARD.has(k)));
  const errors = Array.isArray(p.errors)
    ? (p.errors as ProblemDetail[]).map((e) => ({ in: String(e.in), path: String(e.path), message: redact(String(e.message)) }))
    : undefined;
  const detail = str(p.detail) ?? text;
  const requestId = headers['x-request-id'] ?? INSTANCE.exec(str(p.instance) ?? '')?.[1] ?? response.requestId;
  const init: ApiErrorInit = {
    status,
    type: str(p.type),
    title: str(p.title),
    detail: detail === undefined ? undefined : redact(detail),
    code: str(p.code),
    errors,
    headers,
    extensions,
    request,
    requestId,
  };
  if (status === 400 || status === 413 || status === 415 || status === 422) return new ValidationError(init);
  if (status === 401) return new AuthenticationError(init);
  if (status === 403) return new PermissionError(init);
  if (status === 404 || status === 405) return new NotFoundError(init);
  if (status === 409) return new ConflictError(init);
  if (status === 429) return new RateLimitError({ ...init, retryAfter: parseRetryAfter(headers['retry-after']) });
  if (status >= 500) return new ServerError(init);
  return new ApiError(init);
}
