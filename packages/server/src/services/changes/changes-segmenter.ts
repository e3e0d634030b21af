/**
 * The series of one GET /results:changes answer sorted, segmented and sketched (changes-series.ts)
 * in a worker thread when they hold `minPoints` (2,000) points or more in all, however short each
 * one: on the event loop they would run back to back and hold every other request of the process
 * for as long as they all take (a saw-tooth of 500 points takes about 7 ms, 40 of them 0.2–0.4 s).
 * Fewer points in all take at most about 20 ms in place, where sending them would cost more than
 * the work. One worker, started on the first such answer and ended after `idleMs` without work; it
 * never keeps the process alive. Should it fail, the answer's series are segmented in place, one
 * per turn of the event loop.
 *
 * Each series' change points are remembered by its content (a digest of its points in order, and the options),
 * not forgotten on writes: after an upload, the next answer reads every series again but segments
 * only those whose points changed; the others are summarised from their remembered change points
 * (sorting and sketching only).
 */
import { setImmediate } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import type { ChangeOptions } from './changes-stats.ts';
import { type SeriesSummary, sortPoints, summariseSorted, type TimeAxis } from './changes-series.ts';
import type { RememberedCuts, SegmentJob, WorkerMessage } from './changes-worker.ts';

/** The export condition of the workspace's packages that resolves them to their TypeScript sources. */
const SOURCE_CONDITION = '@benchmarks/source';

/**
 * The flags of this process that a worker may be given: those that load code or pick exports. V8's
 * and the process's own (`--max-old-space-size`, `--trace-gc`, …), which production's NODE_OPTIONS
 * and the bench pass on the command line, make `new Worker` throw when listed in `execArgv`.
 */
function workerFlags(execArgv: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const name = execArgv[i]!.split('=')[0]!;
    if (!['--import', '--require', '-r', '--conditions', '-C', '--enable-source-maps'].includes(name)) continue;
    kept.push(execArgv[i]!);
    if (!execArgv[i]!.includes('=') && name !== '--enable-source-maps') kept.push(execArgv[++i]!);
  }
  return kept;
}

/** How the worker starts from the sources (tsx): resolved once, as resolving waits for the loader's thread. */
let fromSourcesStart: { bootstrap: string; execArgv: string[] | undefined } | undefined;

/** The worker's module: TypeScript when the server runs from its sources (tsx), JavaScript from dist. */
function startWorker(): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const url = new URL(`./changes-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  if (!fromSources) return new Worker(url);
  if (!fromSourcesStart) {
    // On Node 20, tsx's hooks registered by `--import` do not reach worker threads: register them there.
    const tsx = import.meta.resolve('tsx/esm/api');
    // Nor does the workspace's export condition (scripts/dev/register.js) that resolves its packages
    // to their sources: without it the worker would need their compiled dist (absent, or older than
    // the sources), fail to start, and every long series be handled in place after a failed start.
    const fromSourcesCondition = import.meta.resolve('@benchmarks/sdk/changes-chart').endsWith('.ts');
    fromSourcesStart = {
      bootstrap: `import(${JSON.stringify(tsx)}).then((api) => api.register()).then(() => import(${JSON.stringify(url.href)}))`,
      execArgv: fromSourcesCondition ? [...workerFlags(process.execArgv), `--conditions=${SOURCE_CONDITION}`] : undefined,
    };
  }
  return new Worker(fromSourcesStart.bootstrap, { eval: true, execArgv: fromSourcesStart.execArgv });
}

export class ChangesSegmenter {
  #worker: Worker | null = null;
  #next = 0;
  readonly #pending = new Map<
    number,
    {
      resolve: (s: SeriesSummary) => void;
      reject: (e: Error) => void;
      options: ChangeOptions;
      /** The worker the job was sent to: only its end fails the job. */
      worker: Worker;
      key?: string;
      remembered?: boolean;
    }
  >();
  #idle: NodeJS.Timeout | null = null;
  /** Series handled in the worker (for tests and measurements). */
  segmentedInWorker = 0;
  /** Series segmented, in place or in the worker: those whose change points were not remembered (for tests and measurements). */
  segmentations = 0;
  /** Change points by what identifies a segmentation (`#key`). */
  readonly #cuts: LRUCache<string, number[]>;
  readonly options: { minPoints: number; idleMs: number; remembered: number };

  constructor(options: Partial<{ minPoints: number; idleMs: number; remembered: number }> = {}) {
    this.options = { minPoints: 2_000, idleMs: 10_000, remembered: 2_000, ...options };
    this.#cuts = new LRUCache({ max: Math.max(1, this.options.remembered) });
  }

  /** The series of one answer (their bytes as the statement returns them), each summarised: segments, change points, sketch. */
  async segment(series: readonly { points: Uint8Array; n: number }[], options: ChangeOptions, axis: TimeAxis): Promise<SeriesSummary[]> {
    const total = series.reduce((sum, s) => sum + s.n, 0);
    if (total < this.options.minPoints) return series.map((s) => this.#inPlace(s.points, options, axis));
    try {
      // Every series sent at once: the worker sorts the next while the digest of one goes to and fro.
      return await Promise.all(
        series.map(async (s) => {
          const summary = await this.#run(s.points, options, axis);
          this.segmentedInWorker++;
          return summary;
        }),
      );
    } catch {
      // The worker failed: other requests run between two series.
      const summaries: SeriesSummary[] = [];
      for (const s of series) {
        await setImmediate();
        summaries.push(this.#inPlace(s.points, options, axis));
      }
      return summaries;
    }
  }

  #inPlace(points: Uint8Array, options: ChangeOptions, axis: TimeAxis): SeriesSummary {
    const sorted = sortPoints(points);
    const key = this.#key(sorted.digest, options);
    const cuts = this.#cuts.get(key);
    const summary = summariseSorted(sorted, options, axis, cuts);
    if (!cuts) this.#remember(key, summary.cuts);
    return summary;
  }

  /** What identifies a segmentation: the options it depends on and the series' points in order (their digest). */
  #key(digest: string, options: ChangeOptions): string {
    return `${options.maxPvalue} ${options.minMagnitude} ${options.minSize} ${digest}`;
  }

  #remember(key: string, cuts: number[]): void {
    this.segmentations++;
    this.#cuts.set(key, cuts);
  }

  /** Forget every remembered segmentation (for tests and measurements: a cold answer). */
  forget(): void {
    this.#cuts.clear();
  }

  #run(points: Uint8Array, options: ChangeOptions, axis: TimeAxis): Promise<SeriesSummary> {
    const worker = this.#start();
    if (this.#idle) clearTimeout(this.#idle);
    const id = ++this.#next;
    return new Promise<SeriesSummary>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, options, worker });
      worker.ref();
      // A copy of its own (the bytes may share a buffer with others, and a Buffer's slice is a view
      // of it), moved to the worker, not cloned.
      const own = new Uint8Array(points);
      worker.postMessage({ id, points: own, options, axis } satisfies SegmentJob, [own.buffer]);
    });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = startWorker();
    worker.on('message', (message: WorkerMessage) => {
      const job = this.#pending.get(message.id);
      if (!job) return;
      if ('digest' in message) {
        // The series sorted in the worker: the change points remembered for it, if any.
        job.key = this.#key(message.digest, job.options);
        const cuts = this.#cuts.get(job.key) ?? null;
        job.remembered = cuts !== null;
        worker.postMessage({ id: message.id, cuts } satisfies RememberedCuts);
        return;
      }
      this.#pending.delete(message.id);
      if ('error' in message) job.reject(new Error(message.error));
      else {
        if (!job.remembered && job.key) this.#remember(job.key, message.summary.cuts);
        job.resolve(message.summary);
      }
      if (this.#pending.size === 0) this.#rest(worker);
    });
    // A worker that ends fails its own jobs, not those already sent to the next one (a job can start a
    // new worker while an idle one is still ending).
    const fail = (err: Error) => {
      if (this.#worker === worker) this.#worker = null;
      for (const [id, job] of this.#pending) {
        if (job.worker !== worker) continue;
        this.#pending.delete(id);
        job.reject(err);
      }
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

  /** Ends the worker (the answers of jobs in flight are segmented in place). */
  async close(): Promise<void> {
    if (this.#idle) clearTimeout(this.#idle);
    const worker = this.#worker;
    this.#worker = null;
    await worker?.terminate();
  }
}
