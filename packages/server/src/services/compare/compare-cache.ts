/**
 * Comparisons of large groups of results, remembered for a few seconds (as the totals of large
 * lists are, services/results/total-cache.ts). A comparison reads every matching result of a benchmark:
 * tens of thousands of documents, mostly from disk once a data set outgrows PostgreSQL's cache
 * (docs/performance.md, scenario 8), while a README's chart, a dashboard or a person refining a
 * filter asks the same one again and again.
 *
 * Two things are remembered, under the same rules:
 * - **Answers**, keyed by every parameter but `format`: one computation serves JSON, CSV and SVG.
 * - **Parts**: what is expensive to compute and shared by answers that differ in parameters that
 *   only shape the answer (`part`, keyed by what the caller names: for a comparison, every
 *   parameter but the format, the confidence, `better`, `rank_by` and `currency`, compare.ts
 *   `readKey`). The statement does not depend on them, nor does the baseline's work (its values
 *   sorted and logged, every group's ratio and p-value); an answer at another confidence costs the
 *   ratios' intervals alone (two selections per group, O(n log m)), a new direction or ranking not
 *   even that. So a dashboard stepping through confidences, or a client looping over them, costs
 *   one statement, not one each.
 *
 * - Only those of at least `minMatched` results are kept: small ones are cheap and always fresh.
 * - Bounded by an estimate of their memory (`maxBytes` for the answers, as much again for the
 *   parts: an answer of 10,000 groups takes megabytes), and by `maxEntries` each; the least
 *   recently used go first, and one larger than the bound is not kept. By default `maxBytes` is a
 *   thirty-second of V8's heap limit, at most 64 MB: the comparisons' and the changes' caches together
 *   then keep at most an eighth of it, 40 MB of a production heap (--max-old-space-size=128, docs/deploy.md).
 * - Forgotten at every write anywhere: this process's write requests, and every other process's
 *   (and anyone's) through PostgreSQL's change notifications (db/change-listener.ts); after `ttlMs`
 *   at most when a notification was missed.
 * - One that was running while a write finished is not kept (generation check).
 * - Identical requests arriving while one is computed await that computation (of any size,
 *   services/runtime/single-flight.ts), answers and parts alike; after a write, requests compute anew.
 */
import { getHeapStatistics } from 'node:v8';
import { LRUCache } from 'lru-cache';
import type { CompareAnswer, CompareParams } from './compare.ts';
import { SingleFlight } from '../runtime/single-flight.ts';

export interface CompareCacheOptions {
  ttlMs: number;
  minMatched: number;
  maxEntries: number;
  /** What the answers may take, in estimated bytes; the parts, as much again. */
  maxBytes: number;
}

/** What the cache keeps of a comparison's answer. */
interface Answered {
  answer: { matched: number; groups?: readonly unknown[] };
  /** The chart's sketch of a changes answer: 32 bytes a pixel column of every series. */
  sketch?: { groups: readonly ArrayBufferView[] };
}

/** An expensive part of a computation: its number of matched results and an estimate of its size. */
interface Part {
  matched: number;
  bytes: number;
}

type Computed = { answer: CompareAnswer; benchmarkName: string };

/** An answer's size: about 2 KB a group as JS objects (a comparison's group holds some 30 numbers and names), and its sketch. */
const answerBytes = (computed: Answered) =>
  2048 * (1 + (computed.answer.groups?.length ?? 0)) + (computed.sketch?.groups.reduce((sum, g) => sum + g.byteLength, 0) ?? 0);

const DEFAULT_MAX_BYTES = Math.min(64 * 1024 * 1024, Math.floor(getHeapStatistics().heap_size_limit / 32));

/** The key of a query: its parameters sorted by name (their values as given). */
const keyOf = (query: object) => JSON.stringify(Object.entries(query).sort(([a], [b]) => (a < b ? -1 : 1)));

/**
 * Also the cache of GET /results:changes (services/changes/changes.ts), which reads as much: `Q` and `C`
 * are the operation's query and what it computes.
 */
export class CompareCache<Q extends { format?: string } = CompareParams, C extends Answered = Computed> {
  private readonly entries: LRUCache<string, C>;
  private readonly parts: LRUCache<string, Part>;
  private generation = 0;
  /** Answers being computed, by key. */
  readonly computing = new SingleFlight<C>();
  /** Parts being computed, by key. */
  readonly sharing = new SingleFlight<Part>();
  readonly options: CompareCacheOptions;

  constructor(options: Partial<CompareCacheOptions> = {}) {
    this.options = { ttlMs: 30_000, minMatched: 1_000, maxEntries: 200, maxBytes: DEFAULT_MAX_BYTES, ...options };
    const bounds = {
      max: Math.max(1, this.options.maxEntries),
      ttl: Math.max(1, this.options.ttlMs),
      maxSize: Math.max(1, this.options.maxBytes),
    };
    this.entries = new LRUCache<string, C>({ ...bounds, sizeCalculation: (c) => Math.max(1, Math.ceil(answerBytes(c))) });
    this.parts = new LRUCache<string, Part>({ ...bounds, sizeCalculation: (p) => Math.max(1, Math.ceil(p.bytes)) });
  }

  /** The answer for `query`, computed by `compute` when not remembered. */
  async answer(query: Q, compute: () => Promise<C>): Promise<C> {
    if (this.options.ttlMs <= 0) return compute();
    const { format: _format, ...rest } = query;
    return this.#remembered(this.entries, this.computing, keyOf(rest), compute, (c) => c.answer.matched);
  }

  /** The part named by `key` (every parameter it depends on), computed by `compute` when not remembered. */
  async part<P extends Part>(key: Record<string, unknown>, compute: () => Promise<P>): Promise<P> {
    if (this.options.ttlMs <= 0) return compute();
    return (await this.#remembered(this.parts, this.sharing, keyOf(key), compute, (p) => p.matched)) as P;
  }

  async #remembered<V extends object>(
    store: LRUCache<string, V>,
    flights: SingleFlight<V>,
    key: string,
    compute: () => Promise<V>,
    matched: (value: V) => number,
  ): Promise<V> {
    const hit = store.get(key);
    if (hit) return hit;
    return flights.run(key, async () => {
      const generation = this.generation;
      const started = store.perf.now();
      const computed = await compute();
      if (matched(computed) >= this.options.minMatched && generation === this.generation) store.set(key, computed, { start: started });
      return computed;
    });
  }

  /** Forget every comparison: something may have changed. */
  invalidate(): void {
    this.generation++;
    this.entries.clear();
    this.parts.clear();
    this.computing.forget();
    this.sharing.forget();
  }

  /** Answers remembered. */
  get size(): number {
    return this.entries.size;
  }

  /** Parts remembered. */
  get partCount(): number {
    return this.parts.size;
  }
}
