/**
 * When and how long to wait before repeating a request. Only requests that are safe to repeat are
 * retried: GET, HEAD, PUT and DELETE, and POSTs that carry an `Idempotency-Key` (the server applies
 * those once per key; other POSTs may have been applied before the answer was lost), plus any
 * request after a 429, which the server answers before doing any work.
 */

/**
 * Statuses worth another try: rate limited, bad gateway, unavailable, gateway timeout.
 * @example
 * RETRY_STATUSES.has(503); // true
 */
export const RETRY_STATUSES: ReadonlySet<number> = new Set([429, 502, 503, 504]);

/**
 * Methods whose repetition has the same effect as one call (RFC 9110 idempotent methods we use).
 * @example
 * IDEMPOTENT_METHODS.has('POST'); // false: retried only after a 429
 */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/**
 * Whether a request that carries an `Idempotency-Key` is worth another try after this answer: what
 * {@link RETRY_STATUSES} says, any other 5xx (the server stored nothing, or a retry gets what it
 * stored), and 409 `IDEMPOTENCY_KEY_IN_USE` (the first attempt is still running; the retry gets its
 * answer). Lost connections and timeouts are retried too (see `Core`).
 * @example
 * retriesKeyed(500, 'INTERNAL_ERROR'); // true
 * retriesKeyed(409, 'DUPLICATE'); // false
 */
export function retriesKeyed(status: number, code: unknown): boolean {
  return RETRY_STATUSES.has(status) || status >= 500 || (status === 409 && code === 'IDEMPOTENCY_KEY_IN_USE');
}

/**
 * A new random `Idempotency-Key`: a UUID (version 4), from `crypto.randomUUID` where there is one, else
 * from `crypto.getRandomValues` (browser pages served over plain http have only the latter).
 * @example
 * const key = newIdempotencyKey(); // '3b241101-e2bb-4255-8caf-4136c566a962'
 */
export function newIdempotencyKey(): string {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Backoff windows: the first and the largest. */
const BACKOFF_BASE_MS = 250;
const BACKOFF_CAP_MS = 8_000;
/** The longest `Retry-After` the client waits; a longer one is shortened to this. */
const RETRY_AFTER_CAP_MS = 60_000;

/**
 * The wait before retry number `attempt + 1` (`attempt` from 0): the server's `Retry-After` when it
 * gave one (at most a minute), else exponential backoff with full jitter (AWS architecture blog), a
 * random wait in `[0, min(cap, base * 2^attempt))`.
 * @example
 * retryDelayMs(0, 3); // 3000
 * retryDelayMs(2); // somewhere in [0, 1000)
 */
export function retryDelayMs(attempt: number, retryAfterSeconds?: number): number {
  if (retryAfterSeconds !== undefined) return Math.min(retryAfterSeconds * 1000, RETRY_AFTER_CAP_MS);
  return Math.floor(Math.random() * Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** attempt));
}

/**
 * Waits `ms`, or rejects with the signal's reason when it aborts first.
 * @example
 * await sleep(100, AbortSignal.timeout(1000));
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0 && !signal?.aborted) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
