/**
 * The one request path every namespace method goes through: URL from the contract's path, query
 * encoding, JSON in and out, problem+json to typed errors, timeouts and retries.
 */
import { operations, type OperationDef, type OperationId } from './contract/index.ts';
import { sortBy, type SortTerm } from './builders.ts';
import { errorFromResponse, parseRetryAfter, TimeoutError, type RequestInfo } from './errors.ts';
import { defaultTransport, type FetchLike, type FetchResponse, type Transport } from './fetch.ts';
import { PageRequest, type NextPage, type Page } from './pagination.ts';
import { connectionError, headersOf, parseBody, parseSuccess } from './response.ts';
import { bodyStream, Deadline, type StreamedResponse } from './stream.ts';
import { IDEMPOTENT_METHODS, newIdempotencyKey, RETRY_STATUSES, retriesKeyed, retryDelayMs, sleep } from './retry.ts';
import type { CallArgsTuple, Item, ListQuery, Params, Reply, RequestOptions } from './types.ts';
import { apiBaseUrl, encodeQuery, expandPath, type QueryValue } from './url.ts';
import { SDK_VERSION } from './version.ts';
import { parseWarningHeader } from './warnings.ts';

/**
 * Options of {@link createClient}. Each optional member also accepts `undefined` (meaning: the
 * default), so `token: process.env.BENCHMARKS_TOKEN` compiles under `exactOptionalPropertyTypes`.
 * @example
 * const options: ClientOptions = { baseUrl: 'http://localhost:8080', getToken: async () => session.accessToken };
 */
export interface ClientOptions {
  /** The service root (`http://host:8080`) or its API base URL (`http://host:8080/api/v1`). */
  baseUrl: string;
  /** A fixed access token, sent as `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Called before each request (and each retry) for a fresh token; may be async. Wins over `token`. */
  getToken?: (() => string | null | undefined | Promise<string | null | undefined>) | undefined;
  /** Replaces the transport (default: undici with keep-alive in Node, the global fetch elsewhere). */
  fetch?: FetchLike | undefined;
  /** Prepended to the SDK's own `User-Agent` (Node only; browsers set their own). */
  userAgent?: string | undefined;
  /** Per attempt; default 30 000 ms; `0` disables it. A call's own `timeoutMs` replaces it for that call. */
  timeoutMs?: number | undefined;
  /**
   * Retries of safe requests (GET, HEAD, PUT, DELETE) on 429/502/503/504 and lost connections, of
   * creating POSTs (which carry an `Idempotency-Key`) on any 5xx, 409 `IDEMPOTENCY_KEY_IN_USE`, lost
   * connections and timeouts, and of any request on 429 (refused before any work was done); default 2.
   */
  retries?: number | undefined;
  /**
   * Called with each warning of a successful answer's `Warning` header (for instance a JSON path the
   * benchmark's schema does not describe), whatever the answer's format: JSON, CSV, SVG or an export.
   * JSON answers also carry them as `warnings` (`page.warnings`, `comparison.warnings`).
   */
  onWarning?: ((warning: { message: string; request: RequestInfo }) => void) | undefined;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const IDEMPOTENCY_HEADER = 'Idempotency-Key';
/** What the server accepts as a key (the contract's pattern). */
const VALID_KEY = /^[\x20-\x7E]{1,255}$/;
const DEFAULT_RETRIES = 2;
/** The request id header: the server keeps a caller's own (a plain token) and answers with it. */
const REQUEST_ID_HEADER = 'x-request-id';
/** Headers the client sets itself: a call's `headers` may not replace them. */
const RESERVED_HEADERS = new Set(['authorization', 'idempotency-key', 'content-type', 'content-length', 'accept', 'user-agent', 'host']);
/** RFC 9110 field names (tokens), and values without control characters other than tab. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
const HEADER_VALUE = /^[^\x00-\x08\x0a-\x1f\x7f]*$/;
const registry = operations as Record<string, OperationDef>;
const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

type LooseArgs = RequestOptions & {
  params?: Record<string, unknown> | undefined;
  query?: Record<string, unknown> | undefined;
  body?: unknown;
  idempotencyKey?: string | undefined;
};
/** The arguments of a list operation: its path parameters and its query, builders allowed, and the {@link RequestOptions}. */
type ListArgs<K extends OperationId> = RequestOptions & {
  params?: Params<K> | undefined;
  query?: ListQuery<K> | undefined;
};
type Outcome =
  | { response: FetchResponse; text: string }
  | { response: FetchResponse; body: ReadableStream<Uint8Array> }
  | { error: unknown };
/** Opens the body of a streamed 2xx answer, under the attempt's deadline. */
type OpenBody = (response: FetchResponse, deadline: Deadline | undefined) => ReadableStream<Uint8Array>;

/**
 * The request core shared by every namespace. Created by {@link createClient}; reachable as
 * `client.core` for operations called by id.
 * @example
 * const page = await client.core.request('listBenchmarks', { query: { per_page: 5 } });
 */
export class Core {
  /** The API base URL every operation path is appended to, e.g. `http://host:8080/api/v1`. */
  readonly baseUrl: string;
  readonly #transport: Transport;
  readonly #token: ClientOptions['getToken'];
  readonly #timeoutMs: number;
  readonly #retries: number;
  readonly #userAgent: string | undefined;
  readonly #onWarning: ClientOptions['onWarning'];

  constructor(options: ClientOptions) {
    if (!options || typeof options.baseUrl !== 'string') throw new TypeError('createClient needs { baseUrl }');
    this.baseUrl = apiBaseUrl(options.baseUrl);
    this.#transport = options.fetch ? { fetch: options.fetch, close: async () => {} } : defaultTransport();
    const fixed = options.token;
    this.#token = options.getToken ?? (() => fixed);
    this.#timeoutMs = checkTimeout(options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    this.#retries = options.retries ?? DEFAULT_RETRIES;
    this.#onWarning = options.onWarning;
    if (!Number.isInteger(this.#retries) || this.#retries < 0) throw new TypeError('retries must be a non-negative integer');
    const sdk = `benchmarks-sdk/${SDK_VERSION}`;
    this.#userAgent = isNode ? (options.userAgent ? `${options.userAgent} ${sdk}` : sdk) : options.userAgent;
  }

  /**
   * Calls one operation of the contract by its operationId and returns its typed response body
   * (`undefined` for 204). Throws an {@link ApiError} subclass, a {@link ConnectionError} or a
   * {@link TimeoutError}.
   * @example
   * const user = await client.core.request('getSelf');
   */
  request<K extends OperationId>(operationId: K, ...args: CallArgsTuple<K>): Promise<Reply<K>>;
  // The implementation is untyped: checking Reply<K> for an unresolved K sends TypeScript through
  // every schema of the contract. The overload above is what callers see.
  request(operationId: string, args?: LooseArgs): Promise<unknown> {
    return this.#run(operationId, args);
  }

  /**
   * `request` without the types, for operation ids only known at run time (e.g. read from the
   * OpenAPI document). Prefer `client.call`, which checks the arguments.
   * @example
   * await client.core.invoke(operationIdFromConfig, { params: { id } })
   */
  invoke<T = unknown>(operationId: string, args?: object): Promise<T> {
    return this.#run(operationId, args as LooseArgs | undefined) as Promise<T>;
  }

  /**
   * Calls an operation whose answer is streamed (`exportResults`): resolves once a 2xx answer's
   * headers arrive, to its body as a stream of bytes. Auth, retries and errors are those of `request`,
   * retries only until the body starts; `timeoutMs` then applies to each wait for more of the body.
   * A body that breaks off errors with an `IncompleteResponseError`. Cancel the body to stop.
   * @example
   * const { body } = await client.core.stream('exportResults', { query: { format: 'csv' } });
   * for await (const chunk of body) process.stdout.write(chunk);
   */
  stream<K extends OperationId>(operationId: K, ...args: CallArgsTuple<K>): Promise<StreamedResponse>;
  // Untyped implementation, as for request().
  stream(operationId: string, args?: LooseArgs): Promise<StreamedResponse> {
    return this.#run(operationId, args, true) as Promise<StreamedResponse>;
  }

  async #run(operationId: string, args: LooseArgs = {}, streamed = false): Promise<unknown> {
    const { params, query, body, signal } = args;
    const def = registry[operationId];
    if (!def) throw new TypeError(`Unknown operation '${operationId}': this SDK's contract does not declare it`);
    const timeoutMs = checkTimeout(args.timeoutMs ?? this.#timeoutMs);
    const extra = callHeaders(args.headers);
    const url = this.baseUrl + expandPath(def.path, params) + encodeQuery(wireQuery(query));
    const info: RequestInfo = { method: def.method, url };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    // Creating operations declare an Idempotency-Key: one per call, the same for each of its retries,
    // so the server applies the call once however often it is sent. Other POSTs are repeated only
    // after a 429: the server refuses it before doing any work.
    const keyed = def.headers?.properties?.[IDEMPOTENCY_HEADER] !== undefined;
    if (!keyed && args.idempotencyKey !== undefined)
      throw new TypeError(`idempotencyKey: ${operationId} takes no Idempotency-Key (only creating calls do)`);
    const key = keyed ? (args.idempotencyKey ?? newIdempotencyKey()) : undefined;
    if (key !== undefined && !VALID_KEY.test(key)) throw new TypeError('idempotencyKey must be 1 to 255 printable ASCII characters');
    const safe = IDEMPOTENT_METHODS.has(def.method);
    // The id the caller sent, if any: what a failure without an answer can still be traced by.
    const sentId = extra[REQUEST_ID_HEADER];

    for (let attempt = 0; ; attempt++) {
      const token = def.auth === 'none' ? undefined : ((await this.#token?.()) ?? undefined);
      const redact = (text: string) => (token ? text.split(token).join('[REDACTED]') : text);
      const headers = { ...extra, ...this.#headers(token, payload !== undefined) };
      if (key !== undefined) headers['idempotency-key'] = key;
      if (streamed) headers.accept = acceptOf(def);
      const open: OpenBody | undefined = streamed
        ? (response, deadline) =>
            bodyStream(response, { request: info, deadline, signal, redact, requestId: response.headers.get(REQUEST_ID_HEADER) ?? sentId })
        : undefined;
      const outcome = await this.#send(info, headers, payload, signal, timeoutMs, open);

      if ('error' in outcome) {
        if (signal?.aborted) throw signal.reason;
        const timedOut = outcome.error instanceof TimeoutError;
        // A keyed request is retried after a timeout too: the retry gets the first attempt's answer.
        if (((safe && !timedOut) || key !== undefined) && attempt < this.#retries) {
          await sleep(retryDelayMs(attempt), signal);
          continue;
        }
        if (timedOut) throw new TimeoutError(info, timeoutMs, { requestId: sentId });
        throw connectionError(info, outcome.error, redact, sentId);
      }

      if ('body' in outcome) {
        this.#warnings(outcome.response, info);
        return { body: outcome.body, headers: headersOf(outcome.response), request: info } satisfies StreamedResponse;
      }
      const { response, text } = outcome;
      const status = response.status;
      const requestId = response.headers.get(REQUEST_ID_HEADER) ?? sentId;
      if (status >= 200 && status < 300) {
        this.#warnings(response, info);
        return parseSuccess(status, response, text, info, redact, requestId);
      }
      const retry =
        (RETRY_STATUSES.has(status) && (safe || status === 429)) ||
        (key !== undefined &&
          retriesKeyed(status, status === 409 ? (parseBody(response, text) as { code?: unknown } | undefined)?.code : undefined));
      if (retry && attempt < this.#retries) {
        await sleep(retryDelayMs(attempt, parseRetryAfter(response.headers.get('retry-after'))), signal);
        continue;
      }
      throw errorFromResponse({ status, body: parseBody(response, text), headers: headersOf(response), request: info, redact, requestId });
    }
  }

  /**
   * Calls a list operation: a {@link PageRequest} for the first page that also iterates every item.
   * `filters` and `sort_by` may hold builder values.
   * @example
   * for await (const b of client.core.list('listBenchmarks', { query: { per_page: 10 } })) console.log(b.name);
   */
  list<K extends OperationId>(operationId: K, args?: ListArgs<K>): PageRequest<Item<K>>;
  // Untyped implementation, as for request().
  list(operationId: string, args?: LooseArgs): PageRequest<unknown> {
    return this.invokeList(operationId, args);
  }

  /**
   * `list` without the types, as `invoke` is `request` without them.
   * @example
   * for await (const item of client.core.invokeList(operationIdFromConfig)) console.log(item);
   */
  invokeList<T = unknown>(operationId: string, args: LooseArgs = {}): PageRequest<T> {
    const { query } = args;
    // A cursor carries the position: the next pages send it instead of the page asked for first.
    const queryOf = (next: NextPage | undefined) => {
      if (next === undefined) return query;
      const { page: _page, cursor: _cursor, ...rest } = (query ?? {}) as Record<string, unknown>;
      return { ...rest, ...next };
    };
    return new PageRequest((next) => this.#run(operationId, { ...args, query: queryOf(next) }) as Promise<Page<T>>);
  }

  /**
   * Releases the keep-alive connections of the default Node transport.
   * @example
   * await client.core.close()
   */
  async close(): Promise<void> {
    await this.#transport.close();
  }

  /** Hands each warning of a successful answer's `Warning` header to `onWarning`. */
  #warnings(response: FetchResponse, request: RequestInfo): void {
    if (!this.#onWarning) return;
    for (const message of parseWarningHeader(response.headers.get('warning'))) this.#onWarning({ message, request });
  }

  #headers(token: string | undefined, hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    if (hasBody) headers['content-type'] = 'application/json';
    if (this.#userAgent) headers['user-agent'] = this.#userAgent;
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  /**
   * One attempt: the answer's text, or with `open` the body of a 2xx answer as it arrives (its
   * deadline then watching each read). The deadline covers the whole attempt otherwise.
   */
  async #send(
    info: RequestInfo,
    headers: Record<string, string>,
    body: string | undefined,
    signal: AbortSignal | undefined,
    timeoutMs: number,
    open?: OpenBody,
  ): Promise<Outcome> {
    const deadline = timeoutMs > 0 ? new Deadline(timeoutMs) : undefined;
    const signals = [deadline?.signal, signal].filter((s): s is AbortSignal => s !== undefined);
    const combined = signals.length > 1 ? anySignal(signals) : signals[0];
    deadline?.arm();
    try {
      // Absent rather than undefined: a custom FetchLike may hand `init` straight to `fetch`, whose
      // RequestInit refuses undefined members under exactOptionalPropertyTypes.
      const init: Parameters<FetchLike>[1] = { method: info.method, headers };
      if (body !== undefined) init.body = body;
      if (combined) init.signal = combined;
      const response = await this.#transport.fetch(info.url, init);
      if (open && response.status >= 200 && response.status < 300) {
        deadline?.disarm();
        return { response, body: open(response, deadline) };
      }
      return { response, text: await response.text() };
    } catch (error) {
      if (deadline?.expired && !signal?.aborted) return { error: new TimeoutError(info, timeoutMs) };
      return { error };
    } finally {
      deadline?.disarm();
    }
  }
}

/** Longest timer `setTimeout` keeps (a longer one fires at once). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** A timeout in milliseconds, checked: `0` (none) up to about 24.8 days. */
function checkTimeout(ms: number): number {
  if (typeof ms !== 'number' || !(ms >= 0 && ms <= MAX_TIMEOUT_MS))
    throw new TypeError(`timeoutMs must be a number from 0 (no timeout) to ${MAX_TIMEOUT_MS}`);
  return ms;
}

/**
 * A call's own headers, names in lower case, checked before anything is sent: a malformed one would
 * fail in the transport with a less precise message, a reserved one would undo what the client sets.
 */
function callHeaders(given: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (given === undefined) return out;
  if (given === null || typeof given !== 'object') throw new TypeError('headers must be an object of header names to values');
  for (const [name, value] of Object.entries(given)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name)) throw new TypeError(`headers: '${name}' is not a valid header name`);
    if (RESERVED_HEADERS.has(lower)) throw new TypeError(`headers: '${lower}' is set by the client; it cannot be given per call`);
    if (typeof value !== 'string' || !HEADER_VALUE.test(value))
      throw new TypeError(`headers: the value of '${lower}' must be a string without line breaks or control characters`);
    out[lower] = value;
  }
  return out;
}

/** `AbortSignal.any`, or its equivalent where a browser lacks it (before 2024). */
function anySignal(signals: AbortSignal[]): AbortSignal {
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(signals);
  const controller = new AbortController();
  for (const s of signals) {
    if (s.aborted) controller.abort(s.reason);
    else s.addEventListener('abort', () => controller.abort(s.reason), { once: true });
  }
  return controller.signal;
}

/** What a streamed call accepts: the operation's media types, then problem+json for its errors. */
function acceptOf(def: OperationDef): string {
  const types = [def.response.contentType ?? 'application/json', ...Object.keys(def.response.alternatives ?? {})];
  return [...types, 'application/problem+json'].join(', ');
}

/** `sort_by` given as builder terms becomes its wire string; filters become their expressions. */
function wireQuery(query: Record<string, unknown> | undefined): Record<string, QueryValue | QueryValue[]> | undefined {
  if (!query) return undefined;
  const out: Record<string, QueryValue | QueryValue[]> = { ...(query as Record<string, QueryValue>) };
  if (Array.isArray(query.sort_by)) {
    if (query.sort_by.length === 0) delete out.sort_by;
    else out.sort_by = sortBy(...(query.sort_by as (SortTerm | string)[]));
  }
  if (Array.isArray(query.filters)) out.filters = query.filters.map(String);
  return out;
}
