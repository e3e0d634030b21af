/**
 * Comparisons of large groups of results, remembered for a few seconds (as the totals of large
 * lists are, services/results/total-cache.ts). A comparison reads every matching result of a benchmark:
 * tens of thousands of documents, mostly from disk once a data set outgrows PostgreSQL's cache
 * (docs/performance.md, scenario 8), while a README's chart, a dashboard or a person refining a
 * filter asks the same one again and again.
 *
 * - Only comparisons of at least `minMatched` results are kept: small ones are cheap and always fresh.
 * - Forgotten at every write anywhere: this process's write requests, and every other process's
 *   (and anyone's) through PostgreSQL's change notifications (db/change-listener.ts); after `ttlMs`
 *   at most when a notification was missed.
 * - A comparison that was running while a write finished is not kept (generation check).
 * - The key is every parameter but `format`: one computation serves JSON, CSV and SVG.
 * - Identical requests arriving while a comparison is computed await that computation (of any size,
 *   services/runtime/single-flight.ts); after a write, requests compute anew.
 */
import { LRUCache } from 'lru-cache';
import type { CompareAnswer, CompareParams } from './compare.ts';
import { SingleFlight } from '../runtime/single-flight.ts';

export interface CompareCacheOptions {
  ttlMs: number;
  minMatched: number;
  maxEntries: number;
}

type Computed = { answer: CompareAnswer; benchmarkName: string };

/**
 * Also the cache of GET /results:changes (services/compare/changes.ts), which reads as much: `Q` and `C`
 * are the operation's query and what it computes.
 */
export class CompareCache<Q extends { format?: string } = CompareParams, C extends { answer: { matched: number } } = Computed> {
  private readonly entries: LRUCache<string, C>;
  private generation = 0;
  /** Comparisons being computed, by key. */
  readonly computing = new SingleFlight<C>();
  readonly options: CompareCacheOptions;

  constructor(options: Partial<CompareCacheOptions> = {}) {
    this.options = { ttlMs: 30_000, minMatched: 1_000, maxEntries: 200, ...options };
    this.entries = new LRUCache({ max: Math.max(1, this.options.maxEntries), ttl: Math.max(1, this.options.ttlMs) });
  }

  /** The comparison for `query`, computed by `compute` when not remembered. */
  async answer(query: Q, compute: () => Promise<C>): Promise<C> {
    if (this.options.ttlMs <= 0) return compute();
    const { format: _format, ...rest } = query;
    const key = JSON.stringify(Object.entries(rest).sort(([a], [b]) => (a < b ? -1 : 1)));
    const hit = this.entries.get(key);
    if (hit) return hit;
    return this.computing.run(key, async () => {
      const generation = this.generation;
      const started = this.entries.perf.now();
      const computed = await compute();
      if (computed.answer.matched >= this.options.minMatched && generation === this.generation) {
        this.entries.set(key, computed, { start: started });
      }
      return computed;
    });
  }

  /** Forget every comparison: something may have changed. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.computing.forget();
  }

  get size(): number {
    return this.entries.size;
  }
}
