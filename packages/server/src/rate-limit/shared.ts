/**
 * Rate limits shared by every server process of a deployment (`--workers`, many machines) through
 * PostgreSQL, without a statement per request.
 *
 * Each process keeps token buckets (limiter.ts) and every `syncMs` reports, in one statement for all
 * its clients, the tokens it took to a shared bucket per client (`rate_bucket`, unlogged). The
 * statement refills it by the time passed on PostgreSQL's clock (one clock for all), takes the
 * reported tokens as of the last report (a burst is never cut by the cap on refills), and returns
 * what each client has left, which the process adopts less what it took since. A client not learned
 * within `syncMs` waits for one such statement first: a process only misses the others' charges of
 * the last `syncMs`, which bounds the excess (docs/deploy.md, "Scaling out"); tokens taken beyond
 * the budget are owed (down to −max) and paid back by waiting. A steady client costs one statement
 * per `syncMs` per process.
 *
 * When the database cannot be reached, each process keeps limiting on its own and reports later.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from '../core/logger.ts';
import { RateLimiter, type RateDecision, type RateLimit } from './limiter.ts';

/** Runs one statement of the store (`?` placeholders; arrays as `?::type[]`). */
export type StoreQuery = <T>(sql: string, params: unknown[]) => Promise<T[]>;

/** How often a process reports its charges (and learns the others'). */
export const RATE_SYNC_MS = 250;

const SYNC_SQL =
  'with clock as (select extract(epoch from clock_timestamp()) * 1000 as ms) ' +
  'insert into rate_bucket as b (limiter, client, tokens, updated_ms) ' +
  'select ?, u.client, ?::float8 - u.taken, clock.ms from unnest(?::text[], ?::float8[]) as u(client, taken), clock ' +
  'on conflict (limiter, client) do update set ' +
  'tokens = greatest(-?::float8, least(?::float8, b.tokens + (excluded.updated_ms - b.updated_ms) * ?::float8 - (?::float8 - excluded.tokens))), ' +
  'updated_ms = excluded.updated_ms ' +
  'returning client, tokens';

/** Shared buckets untouched for a whole window are full again: they hold nothing. */
const SWEEP_SQL = 'delete from rate_bucket where limiter = ? and updated_ms < extract(epoch from clock_timestamp()) * 1000 - ?::float8';
const SWEEP_EVERY_MS = 60_000;
/** How long requests stop waiting for the store after it failed. */
const STORE_RETRY_MS = 5_000;
/** Clients whose last learning time is kept (the least recently learned are forgotten first). */
const MAX_LEARNED = 100_000;

export class SharedRateLimiter extends RateLimiter {
  /** Tokens taken here since the last report, per client. */
  #pending = new Map<string, number>();
  #timer: NodeJS.Timeout | null = null;
  #syncing: Promise<void> | null = null;
  #lastSweep = Date.now();
  #lastWarning = 0;
  /** After a failed report, requests do not wait for the store until then: they are decided here. */
  #storeDownUntil = 0;
  #closed = false;

  constructor(
    limit: RateLimit,
    /** Which limit this is (`writes`, `reads`): one shared bucket per limiter and client. */
    readonly name: string,
    private readonly query: StoreQuery,
    private readonly logger: Logger,
    private readonly syncMs = RATE_SYNC_MS,
  ) {
    super(limit);
    // Bounded by size rather than `max`, which would allocate room for all of them at start.
    this.#learned = new LRUCache({ maxSize: MAX_LEARNED, sizeCalculation: () => 1, ttl: Math.max(1, syncMs) });
  }

  /** The clients whose shared bucket this process learned within the last `syncMs`. */
  readonly #learned: LRUCache<string, true>;

  override charge(client: string): RateDecision | Promise<RateDecision> {
    if (this.#closed || Date.now() < this.#storeDownUntil || this.#learned.has(client)) return this.take(client);
    return this.#learn(client).then(
      () => this.take(client),
      () => this.take(client),
    );
  }

  /** Reports (and so reads) `client`'s shared bucket, after any report already on its way. */
  async #learn(client: string): Promise<void> {
    await this.#syncing;
    if (this.#learned.has(client)) return; // learned meanwhile
    if (!this.#pending.has(client)) this.#pending.set(client, 0);
    await this.sync();
  }

  protected override taken(client: string, delta: number): void {
    this.#pending.set(client, (this.#pending.get(client) ?? 0) + delta);
    this.#schedule();
  }

  #schedule(): void {
    if (!this.#timer && !this.#closed) {
      this.#timer = setTimeout(() => {
        this.#timer = null;
        void this.sync();
      }, this.syncMs);
      this.#timer.unref();
    }
  }

  /** Reports the charges taken here and adopts what the shared buckets have left (also called by tests). */
  sync(): Promise<void> {
    this.#syncing ??= this.#report().finally(() => {
      this.#syncing = null;
    });
    return this.#syncing;
  }

  async #report(): Promise<void> {
    if (this.#pending.size === 0) return;
    const batch = this.#pending;
    this.#pending = new Map();
    const { max, windowMs } = this.limit;
    try {
      const rows = await this.query<{ client: string; tokens: number }>(SYNC_SQL, [
        this.name,
        max,
        [...batch.keys()],
        [...batch.values()],
        max,
        max,
        max / windowMs,
        max,
      ]);
      // What is left everywhere, less what was taken here while the statement ran.
      for (const row of rows) {
        this.adopt(row.client, Number(row.tokens) - (this.#pending.get(row.client) ?? 0));
        this.#learned.set(row.client, true);
      }
      if (Date.now() - this.#lastSweep > SWEEP_EVERY_MS) {
        this.#lastSweep = Date.now();
        await this.query(SWEEP_SQL, [this.name, windowMs]);
      }
    } catch (err) {
      // Reported with the next batch; meanwhile this process limits on its own.
      this.#storeDownUntil = Date.now() + STORE_RETRY_MS;
      for (const [client, n] of batch) this.#pending.set(client, (this.#pending.get(client) ?? 0) + n);
      if (Date.now() - this.#lastWarning > 60_000) {
        this.#lastWarning = Date.now();
        this.logger.warn('rate limits: the shared buckets could not be updated; limiting per process meanwhile', {
          limiter: this.name,
          error: (err as Error).message,
        });
      }
      this.#schedule();
    }
  }

  /** Stops reporting (at shutdown), after a last report. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    await this.sync().catch(() => {});
  }
}
