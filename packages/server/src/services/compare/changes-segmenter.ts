/**
 * Series of GET /results:changes parsed, segmented and sketched (changes-series.ts) in a worker
 * thread when they are long: a series of 25,000 points takes 10–40 ms of CPU (docs/performance.md,
 * "Changes over time"), which would hold every other request of the process; short ones (most) are
 * handled in place, where sending them would cost more than the work. One worker, started on the first long series and ended after
 * `idleMs` without work; it never keeps the process alive. Should it fail, the series is segmented
 * in place.
 *
 * Each series' change points are remembered by its content (a digest of its text and the options),
 * not forgotten on writes: after an upload, the next answer reads every series again but segments
 * only those whose points changed; the others are summarised from their remembered change points
 * (parsing and sketching, linear in their length).
 */
import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { ChangeOptions } from './changes-stats.ts';
import { type SeriesSummary, summariseSeries, type TimeAxis } from './changes-series.ts';
import type { SegmentAnswer, SegmentJob } from './changes-worker.ts';

/** The worker's module: TypeScript when the server runs from its sources (tsx), JavaScript from dist. */
function startWorker(): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const url = new URL(`./changes-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSources) return new Worker(url);
  // On Node 20, tsx's hooks registered by `--import` do not reach worker threads: register them there.
  const tsx = import.meta.resolve('tsx/esm/api');
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => api.register()).then(() => import(${JSON.stringify(url.href)}))`;
  return new Worker(bootstrap, { eval: true });
}

export class ChangesSegmenter {
  #worker: Worker | null = null;
  #next = 0;
  readonly #pending = new Map<number, { resolve: (s: SeriesSummary) => void; reject: (e: Error) => void }>();
  #idle: NodeJS.Timeout | null = null;
  /** Series handled in the worker (for tests and measurements). */
  segmentedInWorker = 0;
  /** Series segmented, in place or in the worker: those whose change points were not remembered (for tests and measurements). */
  segmentations = 0;
  /** Change points by series digest (`#key`). */
  readonly #cuts: LRUCache<string, number[]>;
  readonly options: { minPoints: number; idleMs: number; remembered: number };

  constructor(options: Partial<{ minPoints: number; idleMs: number; remembered: number }> = {}) {
    this.options = { minPoints: 2_000, idleMs: 10_000, remembered: 2_000, ...options };
    this.#cuts = new LRUCache({ max: Math.max(1, this.options.remembered) });
  }

  /** A series of `n` points (its text as the statement returns it) summarised: segments, change points, sketch. */
  async segment(text: string, n: number, options: ChangeOptions, axis: TimeAxis): Promise<SeriesSummary> {
    const key = this.#key(text, options);
    const cuts = this.#cuts.get(key);
    if (!cuts) this.segmentations++;
    let summary: SeriesSummary;
    if (n < this.options.minPoints) summary = summariseSeries(text, options, axis, cuts);
    else {
      try {
        summary = await this.#run({ text, options, axis, ...(cuts ? { cuts } : {}) });
        this.segmentedInWorker++;
      } catch {
        summary = summariseSeries(text, options, axis, cuts);
      }
    }
    if (!cuts) this.#cuts.set(key, summary.cuts);
    return summary;
  }

  /** What identifies a segmentation: the options it depends on and the series' points (values, ids, times) in order. */
  #key(text: string, options: ChangeOptions): string {
    const digest = createHash('sha256').update(text).digest('base64');
    return `${options.maxPvalue} ${options.minMagnitude} ${options.minSize} ${digest}`;
  }

  /** Forget every remembered segmentation (for tests and measurements: a cold answer). */
  forget(): void {
    this.#cuts.clear();
  }

  #run(job: Omit<SegmentJob, 'id'>): Promise<SeriesSummary> {
    const worker = this.#start();
    if (this.#idle) clearTimeout(this.#idle);
    const id = ++this.#next;
    return new Promise<SeriesSummary>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.ref();
      worker.postMessage({ id, ...job } satisfies SegmentJob);
    });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startWorker();
    worker.on('message', (answer: SegmentAnswer) => {
      const job = this.#pending.get(answer.id);
      this.#pending.delete(answer.id);
      if ('error' in answer) job?.reject(new Error(answer.error));
      else job?.resolve(answer.summary);
      if (this.#pending.size === 0) this.#rest(worker);
    });
    const fail = (err: Error) => {
      if (this.#worker === worker) this.#worker = null;
      for (const job of this.#pending.values()) job.reject(err);
      this.#pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the segmentation worker ended')));
    this.#worker = worker;
    return worker;
  }

  /** No job: the worker does not keep the process alive, and ends after idleMs. */
  #rest(worker: Worker): void {
    worker.unref();
    this.#idle = setTimeout(() => {
      if (this.#worker === worker && this.#pending.size === 0) void this.close();
    }, this.options.idleMs);
    this.#idle.unref();
  }

  /** Ends the worker (jobs in flight are segmented in place by their callers). */
  async close(): Promise<void> {
    if (this.#idle) clearTimeout(this.#idle);
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
  }
}
