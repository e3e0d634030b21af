/**
 * Totals of large result lists, remembered for a few seconds. Counting is the dearest part of a
 * list page at scale (an index walk over every match, e.g. 100,000 entries for one benchmark at a
 * million results), and paging through a list asks the same count again and again.
 *
 * - Only totals of at least `minTotal` are kept: small counts are cheap and always exact.
 * - Every write request served by this process clears the cache before its answer is sent, so a
 *   client sees its own changes at once. Writes made through another server process sharing the
 *   database show in large totals after at most `ttlMs` (plus the time of one count).
 * - A total asked for in the second half of its life is answered at once and counted again in the
 *   background (refresh ahead), so a list that is in use never makes a request wait for its count.
 * - A count that was running while a write finished is not kept (generation check).
 * - Identical lists arriving while their total is counted await that count (of any size,
 *   services/runtime/single-flight.ts); after a write, they count anew.
 * (docs/querying.md, "Totals")
 */
import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../runtime/single-flight.ts';

export interface TotalCacheOptions {
  ttlMs: number;
  minTotal: number;
  maxEntries: number;
  /** The clock, in ms, above 0 (default performance.now; tests pass their own). */
  now?: () => number;
}

export const TOTAL_CACHE_DEFAULTS: TotalCacheOptions = { ttlMs: 30_000, minTotal: 1_000, maxEntries: 1_000 };

export class TotalCache {
  /** Each total, with the time from which it is counted again in the background. */
  private readonly entries: LRUCache<string, { total: number; refresh: number }>;
  private readonly refreshing = new Set<string>();
  private generation = 0;
  /** Totals being counted on a miss, by key. */
  readonly counting = new SingleFlight<number>();
  readonly options: TotalCacheOptions;
  readonly #now: () => number;

  constructor(options: Partial<TotalCacheOptions> = {}) {
    this.options = { ...TOTAL_CACHE_DEFAULTS, ...options };
    this.#now = options.now ?? (() => performance.now());
    this.entries = new LRUCache({
      max: Math.max(1, this.options.maxEntries),
      ttl: Math.max(1, this.options.ttlMs),
      perf: { now: this.#now },
      ttlResolution: 0,
    });
  }

  /** The total for this statement and its values, computed by `count` when not remembered. */
  async total(sql: string, params: readonly unknown[], count: () => Promise<number>): Promise<number> {
    if (this.options.ttlMs <= 0) return count();
    const key = `${sql}\u0000${JSON.stringify(params)}`;
    const now = this.#now();
    const hit = this.entries.get(key);
    if (hit) {
      if (hit.refresh <= now && !this.refreshing.has(key)) {
        this.refreshing.add(key);
        void this.count(key, count)
          .catch(() => {}) // the entry expires as it would have; the next request counts
          .finally(() => this.refreshing.delete(key));
      }
      return hit.total;
    }
    return this.counting.run(key, () => this.count(key, count));
  }

  private async count(key: string, count: () => Promise<number>): Promise<number> {
    const generation = this.generation;
    const started = this.#now();
    const total = await count();
    if (total >= this.options.minTotal && generation === this.generation) {
      this.entries.set(key, { total, refresh: started + this.options.ttlMs / 2 }, { start: started });
    }
    return total;
  }

  /** Forget every total: something may have changed. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.counting.forget();
  }

  get size(): number {
    return this.entries.size;
  }
}
