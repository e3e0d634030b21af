/**
 * Benchmark JSON Schemas are checked and compiled in worker threads, never on the event loop: ajv's
 * compiler costs far more than a schema's size suggests (a 944 KB schema of 7,000 properties takes
 * 3.7 s), and a client chooses the schema. The event loop only measures the schema (bytes, nodes),
 * and loads a compiled validator from the code and V8 code cache a worker made (a few ms to
 * ~30 ms at the limits), so that result uploads keep validating in-process, in microseconds.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { LRUCache } from 'lru-cache';
import { AppError, errors, type ErrorDetail } from '../../core/errors.ts';
import { countNodes, loadValidator, validatorScript, type ResultValidator } from './json-schema.ts';
import type { SchemaAnswer, SchemaJob } from './schema-worker.ts';
import type { ServerConfig } from '../../config.ts';
import type { DisposalStack } from '../../core/disposal.ts';

export interface SchemaCompilerOptions {
  /** Largest json_schema accepted, in bytes of JSON text. */
  maxBytes: number;
  /** Most values (object members and array elements) a json_schema may hold. */
  maxNodes: number;
  /** Worker threads (default: one core left to the event loop, at most 2). */
  workers?: number;
  /** How long one schema may take to compile before its worker is terminated (default 10 s). */
  budgetMs?: number;
  /** Schema checks (POST/PUT /benchmarks) that may wait for a worker; beyond, 503 (default 32). */
  maxWaitingChecks?: number;
  /** Heap of a worker (default 256 MB): a schema that needs more is refused, the process is safe. */
  workerHeapMb?: number;
  /**
   * How long a worker without work lives (default 10 s): schemas are compiled rarely (a new
   * benchmark, the first upload to one after a start), and an idle worker holds 10–30 MB.
   */
  idleMs?: number;
}

/** A schema that does not compile: its author's problem, not the server's. */
export class SchemaNotCompiled extends Error {}

/** A schema that takes too long or too much memory to compile. */
export class SchemaTooComplex extends SchemaNotCompiled {}

interface Job {
  kind: SchemaJob['kind'];
  text: string;
  resolve(answer: SchemaAnswer): void;
  reject(err: unknown): void;
}

interface Slot {
  worker?: Worker;
  /** The worker has loaded its module. */
  ready?: boolean;
  job?: Job & { id: number; timer?: NodeJS.Timeout };
  /** Stops the worker when it has had no job for `idleMs`. */
  idle?: NodeJS.Timeout;
}

interface Cached {
  validator: ResultValidator;
  bytes: number;
}

const VALIDATOR_CACHE_ENTRIES = 1000;
/** Generated code kept for loaded validators (a validator at the limits has about 1 MB). */
const VALIDATOR_CACHE_BYTES = 64 * 1024 * 1024;
/** How long a schema that failed to compile is not tried again (each upload would pay its cost). */
const FAILURE_TTL_MS = 60_000;

/** Resolves workspace packages (`@benchmarks/sdk/…`) to their sources, as scripts/dev/source-condition.js. */
const SOURCE_CONDITION_HOOK = `export async function resolve(specifier, context, next) {
  const conditions = context.conditions.includes('@benchmarks/source') ? context.conditions : [...context.conditions, '@benchmarks/source'];
  return next(specifier, { ...context, conditions });
}`;

/** The worker's module: TypeScript when the server runs from its sources (tsx), JavaScript from dist. */
function startWorker(heapMb: number): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const url = new URL(`./schema-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  const resourceLimits = { maxOldGenerationSizeMb: heapMb };
  if (!fromSources) return new Worker(url, { resourceLimits });
  // On Node 20, the hooks registered by `--import` do not reach worker threads: register them there,
  // tsx's and the one that resolves workspace packages to their sources (scripts/dev/register.js).
  const tsx = import.meta.resolve('tsx/esm/api');
  const sourceCondition = `data:text/javascript,${encodeURIComponent(SOURCE_CONDITION_HOOK)}`;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => api.register()).then(() => import('node:module')).then((m) => m.register(${JSON.stringify(sourceCondition)})).then(() => import(${JSON.stringify(url.href)}))`;
  return new Worker(bootstrap, { eval: true, resourceLimits });
}

export class SchemaCompiler {
  readonly #options: Required<SchemaCompilerOptions>;
  readonly #slots: Slot[];
  /** Compiles for uploads go first; checks of new schemas wait behind them. */
  readonly #uploads: Job[] = [];
  readonly #checks: Job[] = [];
  #nextId = 1;
  #closed = false;
  readonly #validators = new LRUCache<string, Cached>({
    max: VALIDATOR_CACHE_ENTRIES,
    maxSize: VALIDATOR_CACHE_BYTES,
    sizeCalculation: (entry) => Math.max(1, entry.bytes),
  });
  readonly #compiling = new Map<string, Promise<ResultValidator>>();
  readonly #failures = new LRUCache<string, { error: unknown }>({ max: VALIDATOR_CACHE_ENTRIES, ttl: FAILURE_TTL_MS });
  readonly #keys = new WeakMap<object, string>();

  constructor(options: SchemaCompilerOptions) {
    this.#options = {
      workers: Math.max(1, Math.min(2, availableParallelism() - 1)),
      budgetMs: 10_000,
      maxWaitingChecks: 32,
      workerHeapMb: 256,
      idleMs: 10_000,
      ...options,
    };
    this.#slots = Array.from({ length: this.#options.workers }, () => ({}));
  }

  /** Worker threads running now (they start with the first job, and stop on close()). */
  get threads(): number {
    return this.#slots.filter((slot) => slot.worker).length;
  }

  /** Jobs a worker thread is working on now (its time budget running). */
  get compiling(): number {
    return this.#slots.filter((slot) => slot.job?.timer).length;
  }

  /**
   * Checks a json_schema (POST and PUT /benchmarks): its size here, the rest in a worker.
   * Returns its problems, or null when it is valid; throws 422 JSON_SCHEMA_TOO_LARGE or
   * JSON_SCHEMA_TOO_COMPLEX, or 503 SCHEMA_COMPILER_BUSY when too many checks wait.
   */
  async check(schema: unknown): Promise<ErrorDetail[] | null> {
    const text = JSON.stringify(schema);
    this.#checkSize(schema, text);
    if (this.#checks.length >= this.#options.maxWaitingChecks) {
      throw errors.unavailable('SCHEMA_COMPILER_BUSY', 'Too many JSON Schemas are waiting to be checked; try again in a few seconds.');
    }
    try {
      const answer = await this.#run('check', text);
      if (!('problems' in answer)) throw new Error('the schema worker answered a check without problems');
      return answer.problems;
    } catch (err) {
      if (!(err instanceof SchemaTooComplex)) throw err;
      throw new AppError(422, 'JSON_SCHEMA_TOO_COMPLEX', `json_schema is too complex: ${err.message}.`, {
        errors: [{ in: 'body', path: '/json_schema', message: err.message }],
      });
    }
  }

  #checkSize(schema: unknown, text: string): void {
    const { maxBytes, maxNodes } = this.#options;
    const bytes = Buffer.byteLength(text);
    const problem =
      bytes > maxBytes
        ? `must be at most ${maxBytes} bytes of JSON (MAX_SCHEMA_BYTES), not ${bytes}`
        : countNodes(schema, maxNodes) > maxNodes
          ? `must hold at most ${maxNodes} values, counting every object member and array element (MAX_SCHEMA_NODES)`
          : null;
    if (problem) {
      throw new AppError(422, 'JSON_SCHEMA_TOO_LARGE', `json_schema is too large: it ${problem}.`, {
        errors: [{ in: 'body', path: '/json_schema', message: problem }],
      });
    }
  }

  /**
   * The validator of results for a schema: compiled by a worker the first time, then cached.
   * Throws SchemaNotCompiled when the schema does not compile (or not within the budget).
   */
  validator(schema: unknown): Promise<ResultValidator> {
    const key = this.#keyOf(schema);
    const cached = this.#validators.get(key);
    if (cached) return Promise.resolve(cached.validator);
    const failed = this.#failures.get(key);
    if (failed) return Promise.reject(failed.error);
    let compiling = this.#compiling.get(key);
    if (!compiling) {
      compiling = this.#compile(key, JSON.stringify(schema)).finally(() => this.#compiling.delete(key));
      this.#compiling.set(key, compiling);
    }
    return compiling;
  }

  /** A digest of the schema, computed once per schema object (upload targets keep theirs). */
  #keyOf(schema: unknown): string {
    const memo = schema !== null && typeof schema === 'object' ? this.#keys.get(schema) : undefined;
    if (memo) return memo;
    const key = createHash('sha256').update(JSON.stringify(schema)).digest('base64url');
    if (schema !== null && typeof schema === 'object') this.#keys.set(schema, key);
    return key;
  }

  async #compile(key: string, text: string): Promise<ResultValidator> {
    let answer: SchemaAnswer;
    try {
      answer = await this.#run('code', text);
      if ('error' in answer) throw new SchemaNotCompiled(answer.error);
    } catch (err) {
      if (!(err instanceof SchemaNotCompiled)) throw err;
      this.#failures.set(key, { error: err });
      throw err;
    }
    if (!('source' in answer)) throw new Error('the schema worker answered a code job without code');
    const validator = loadValidator(validatorScript(answer.source, answer.cache));
    this.#validators.set(key, { validator, bytes: answer.source.length });
    return validator;
  }

  #run(kind: Job['kind'], text: string): Promise<SchemaAnswer> {
    if (this.#closed) return Promise.reject(errors.unavailable('SCHEMA_COMPILER_BUSY', 'The server is stopping.'));
    return new Promise((resolve, reject) => {
      (kind === 'code' ? this.#uploads : this.#checks).push({ kind, text, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job) continue;
      const job = this.#uploads.shift() ?? this.#checks.shift();
      if (!job) {
        this.#idleFrom(slot);
        continue;
      }
      clearTimeout(slot.idle);
      slot.idle = undefined;
      let worker: Worker;
      try {
        worker = slot.worker ??= this.#spawn(slot);
      } catch (err) {
        job.reject(err);
        continue;
      }
      const id = this.#nextId++;
      slot.job = { ...job, id };
      worker.postMessage({ id, kind: job.kind, text: job.text } satisfies SchemaJob);
      if (slot.ready) this.#startClock(slot);
    }
  }

  /** A worker without a job is terminated after `idleMs`, unless it gets one meanwhile. */
  #idleFrom(slot: Slot): void {
    if (!slot.worker || slot.idle) return;
    const worker = slot.worker;
    slot.idle = setTimeout(() => {
      slot.idle = undefined;
      if (slot.worker === worker && !slot.job) void this.#release(slot, null)?.terminate();
    }, this.#options.idleMs);
    slot.idle.unref();
  }

  /** The time budget of the job in a slot, counted once its worker has started. */
  #startClock(slot: Slot): void {
    const { budgetMs } = this.#options;
    if (slot.job && !slot.job.timer) {
      slot.job.timer = setTimeout(
        () => this.#fail(slot, new SchemaTooComplex(`it takes longer than ${budgetMs / 1000} s to compile`)),
        budgetMs,
      );
    }
  }

  #spawn(slot: Slot): Worker {
    const worker = startWorker(this.#options.workerHeapMb);
    // An idle worker never keeps the process alive; close() terminates it.
    worker.unref();
    slot.ready = false;
    worker.on('message', (answer: SchemaAnswer) => {
      if (slot.worker !== worker) return;
      if ('ready' in answer) {
        slot.ready = true;
        this.#startClock(slot);
        return;
      }
      const job = slot.job;
      if (!job || job.id !== answer.id) return;
      clearTimeout(job.timer);
      slot.job = undefined;
      job.resolve(answer);
      this.#dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (slot.worker !== worker) return;
      this.#fail(
        slot,
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? new SchemaTooComplex(`it needs more than ${this.#options.workerHeapMb} MB to compile`)
          : err,
      );
    });
    worker.on('exit', (code) => {
      if (slot.worker !== worker) return;
      this.#fail(slot, new Error(`the schema worker stopped (exit code ${code})`));
    });
    return worker;
  }

  /** Empties a slot: its job (if any) fails with `err`; returns the worker, for the caller to terminate. */
  #release(slot: Slot, err: unknown): Worker | undefined {
    const { worker, job } = slot;
    clearTimeout(slot.idle);
    slot.idle = undefined;
    slot.worker = undefined;
    slot.job = undefined;
    if (job) {
      clearTimeout(job.timer);
      job.reject(err);
    }
    return worker;
  }

  /** The job in a slot failed: its worker is terminated (the next job starts a new one). */
  #fail(slot: Slot, err: unknown): void {
    void this.#release(slot, err)?.terminate();
    this.#dispatch();
  }

  /** Refuses waiting jobs and terminates every worker (the server closes it once requests are done). */
  async close(): Promise<void> {
    this.#closed = true;
    const stopping = errors.unavailable('SCHEMA_COMPILER_BUSY', 'The server is stopping.');
    for (const job of this.#uploads.splice(0).concat(this.#checks.splice(0))) job.reject(stopping);
    await Promise.all(this.#slots.map((slot) => this.#release(slot, stopping)?.terminate()));
  }
}

/** The schemas domain: a compiler whose worker threads end with the app. */
export function startSchemas(stack: DisposalStack, config: ServerConfig, budgetMs?: number): SchemaCompiler {
  const compiler = new SchemaCompiler({
    maxBytes: config.maxSchemaBytes,
    maxNodes: config.maxSchemaNodes,
    ...(budgetMs === undefined ? {} : { budgetMs }),
  });
  return stack.use('schema workers', compiler, (s) => s.close());
}
