/** `max` writes per `windowMs`, per client. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/** `120/60s`, `600/10m`, `5/1h`, `10/500ms`; `0` (or `off`) disables: null. */
export function parseRateLimit(text: string): RateLimit | null {
  const value = text.trim().toLowerCase();
  if (value === '0' || value === 'off') return null;
  const match = /^(\d+)\s*\/\s*(\d+)?\s*(ms|s|m|h)$/.exec(value);
  const max = match ? Number(match[1]) : NaN;
  const amount = match ? Number(match[2] ?? '1') : NaN;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match?.[3] as 'ms'] ?? NaN;
  const windowMs = amount * unit;
  if (!Number.isSafeInteger(max) || max < 1 || !Number.isSafeInteger(windowMs) || windowMs < 1 || windowMs > 86_400_000) {
    throw new Error(
      `RATE_LIMIT must be '<requests>/<window>' such as 120/60s or 600/10m (window at most 24h), or 0 to disable, not '${text}'.`,
    );
  }
  return { max, windowMs };
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until one more request is allowed (0 when allowed now). */
  retryAfterSec: number;
  /** Seconds until the bucket is full again. */
  resetSec: number;
}

/**
 * A token bucket per client: `max` requests in a burst, refilled at `max / window`. A full bucket
 * is dropped by the sweep; beyond `maxClients` the least recently seen client is forgotten (which can only favour it).
 */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #ratePerMs: number;
  readonly #maxClients: number;
  readonly #now: () => number;
  #lastSweep = 0;

  constructor(
    readonly limit: RateLimit,
    options: { maxClients?: number; now?: () => number } = {},
  ) {
    this.#ratePerMs = limit.max / limit.windowMs;
    this.#maxClients = options.maxClients ?? 100_000;
    this.#now = options.now ?? Date.now;
  }

  /** Clients currently tracked (for tests and metrics). */
  get size(): number {
    return this.#buckets.size;
  }

  /** Takes one token for `client`; a shared limiter learns what other processes took first (rate-limit/shared.ts). */
  charge(client: string): RateDecision | Promise<RateDecision> {
    return this.take(client);
  }

  /** Takes one token for `client` from what this process knows. */
  take(client: string): RateDecision {
    const now = this.#now();
    this.#sweep(now);
    const { max } = this.limit;
    const stored = this.#buckets.get(client);
    let tokens = stored ? Math.min(max, stored.tokens + (now - stored.updatedAt) * this.#ratePerMs) : max;
    const allowed = tokens >= 1;
    if (allowed) {
      tokens -= 1;
      this.taken(client, 1);
    }
    // Re-inserted so that the Map's order is least recently seen first.
    this.#buckets.delete(client);
    this.#buckets.set(client, { tokens, updatedAt: now });
    while (this.#buckets.size > this.#maxClients) this.#buckets.delete(this.#buckets.keys().next().value!);
    return {
      allowed,
      limit: max,
      remaining: Math.floor(tokens),
      retryAfterSec: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.#ratePerMs / 1000)),
      resetSec: Math.ceil((max - tokens) / this.#ratePerMs / 1000),
    };
  }

  /** Gives back a token taken from `client` (a charge that turned out not to be due). */
  refund(client: string): void {
    const stored = this.#buckets.get(client);
    if (stored) {
      stored.tokens = Math.min(this.limit.max, stored.tokens + 1);
      this.taken(client, -1);
    }
  }

  /** Each token taken (1) or given back (−1): a shared limiter reports them to the other processes. */
  protected taken(_client: string, _delta: number): void {}

  /** Sets what `client` has left, as known elsewhere (another process's charges included), as of now. */
  protected adopt(client: string, tokens: number): void {
    this.#buckets.set(client, { tokens: Math.min(this.limit.max, tokens), updatedAt: this.#now() });
  }

  /** At most once a window: forgets clients whose bucket has refilled completely. */
  #sweep(now: number): void {
    if (now - this.#lastSweep < this.limit.windowMs) return;
    this.#lastSweep = now;
    for (const [client, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.updatedAt) * this.#ratePerMs >= this.limit.max) this.#buckets.delete(client);
    }
  }
}
