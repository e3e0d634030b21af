/**
 * `benchmarks-server start --workers N`: the primary opens and migrates the database once, runs the
 * demo's provider with `--demo`, then forks N workers (worker.ts) sharing one port through
 * node:cluster. A dead worker is forked again, after a pause that doubles while workers die young.
 * SIGTERM or SIGINT stops the workers (requests in flight finish), then the demo and the database;
 * exit code 0 when every worker stopped cleanly.
 */
import cluster, { type Worker } from 'node:cluster';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServerConfig } from './config.ts';
import { DisposalStack } from './core/disposal.ts';
import type { Logger } from './core/logger.ts';
import { ConfigurationError } from './core/errors.ts';
import { bootstrapDatabase } from './db/bootstrap.ts';
import type { EmbeddedEvent } from './db/embedded.ts';
import { loadDemo, type DemoModule, type DemoTrust, type RunningDemo } from './demo-module.ts';
import { fail, flushLogs, forceExit, type StopCause, type StopRequests } from './exit.ts';
import { abortable } from './core/abort.ts';
import { SHUTDOWN_GRACE_MS } from './server.ts';
import { isWorkerFailure, WORKER_DEMO_ENV, type DatabaseStateMessage } from './worker.ts';

/** A worker that served at least this long before it died is forked again at once. */
export const STABLE_MS = 10_000;
const FIRST_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;

/** How long to wait before forking again a worker that died after `quickDeaths` short lives in a row (0: it had served a while). */
export function restartDelay(quickDeaths: number): number {
  return quickDeaths <= 0 ? 0 : Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (quickDeaths - 1));
}

/** A promise and its two ends (Promise.withResolvers from Node 22 on). */
function deferred<T>(): { promise: Promise<T>; resolve(value: T): void; reject(err: unknown): void } {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** One place for a worker: the worker in it now, and how its predecessors fared. */
interface Slot {
  worker?: Worker;
  listeningSince?: number;
  quickDeaths: number;
  restart?: NodeJS.Timeout;
}

/** The workers of the primary, kept at `count`. */
class Workers {
  readonly #slots: Slot[];
  #stopping = false;
  #clean = true;
  #started = deferred<{ port: number }>();
  #listening = 0;
  #serving = false;
  #database: DatabaseStateMessage = { type: 'benchmarks-database-state', state: 'running' };

  constructor(
    count: number,
    private readonly logger: Logger,
    private readonly env: Record<string, string>,
  ) {
    this.#slots = Array.from({ length: count }, () => ({ quickDeaths: 0 }));
  }

  /** Forks every worker; resolves once each listens, fails with the first that cannot start. */
  start(): Promise<{ port: number }> {
    for (const slot of this.#slots) this.#fork(slot);
    return this.#started.promise;
  }

  /** Tells every worker, and those forked later, the state of the embedded PostgreSQL. */
  databaseState(message: DatabaseStateMessage): void {
    this.#database = message;
    for (const slot of this.#slots) if (slot.worker?.isConnected()) slot.worker.send(message);
  }

  #fork(slot: Slot): void {
    const worker = cluster.fork(this.env);
    slot.worker = worker;
    worker.once('online', () => {
      if (this.#database.state !== 'running' && worker.isConnected()) worker.send(this.#database);
    });
    slot.listeningSince = undefined;
    let failure: string | undefined;
    worker.on('message', (message) => {
      if (isWorkerFailure(message)) failure = message.message;
    });
    worker.once('listening', (address) => {
      slot.listeningSince = Date.now();
      this.logger.info('worker started', { worker: worker.id, pid: worker.process.pid });
      if (!this.#serving && ++this.#listening === this.#slots.length) {
        this.#serving = true;
        this.#started.resolve({ port: address.port });
      }
    });
    worker.once('exit', (code, signal) => this.#exited(slot, worker, { code, signal, failure }));
  }

  #exited(slot: Slot, worker: Worker, how: { code: number | null; signal: string | null; failure?: string }): void {
    if (slot.worker === worker) slot.worker = undefined;
    if (this.#stopping) {
      if (how.code !== 0) this.#clean = false;
      return;
    }
    if (!this.#serving) {
      const exit = how.signal ? `signal ${how.signal}` : `code ${how.code}`;
      this.#started.reject(
        new ConfigurationError(how.failure ?? `worker ${worker.id} ended (${exit}) before it served; see its lines above.`),
      );
      return;
    }
    const served = slot.listeningSince === undefined ? 0 : Date.now() - slot.listeningSince;
    slot.quickDeaths = served >= STABLE_MS ? 0 : slot.quickDeaths + 1;
    const delayMs = restartDelay(slot.quickDeaths);
    this.logger.error('worker ended: forking another', {
      worker: worker.id,
      pid: worker.process.pid,
      code: how.code,
      signal: how.signal,
      error: how.failure,
      delayMs,
    });
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (!this.#stopping) this.#fork(slot);
    }, delayMs);
  }

  /** Stops every worker (SIGTERM: each finishes its requests); true when every one exited with code 0. */
  async stop(): Promise<boolean> {
    this.#stopping = true;
    const live = this.#slots.flatMap((slot) => {
      clearTimeout(slot.restart);
      return slot.worker && !slot.worker.isDead() ? [slot.worker] : [];
    });
    // A worker past its own grace period (it cuts requests then) is killed.
    const force = setTimeout(() => {
      for (const worker of live) if (!worker.isDead()) worker.process.kill('SIGKILL');
    }, SHUTDOWN_GRACE_MS + 5_000);
    await Promise.all(
      live.map(
        (worker) =>
          new Promise<void>((resolve) => {
            worker.once('exit', () => resolve());
            if (worker.isDead()) resolve();
            else worker.process.kill('SIGTERM');
          }),
      ),
    );
    clearTimeout(force);
    return this.#clean;
  }

  /** Ends every worker at once (a second Ctrl-C). */
  kill(): void {
    this.#stopping = true;
    for (const slot of this.#slots) if (slot.worker && !slot.worker.isDead()) slot.worker.process.kill('SIGKILL');
  }
}

export interface PrimaryOptions {
  logger: Logger;
  databaseLogger: Logger;
  /** The demo to run with `--demo` (default: the @benchmarks/demo package). */
  demo?: DemoModule;
  /** The command's stop requests: until every worker serves, one aborts the start (released, then exit 0). */
  stops: StopRequests;
}

/**
 * Runs the primary of `--workers`; returns once every worker serves. What it opens goes on one
 * disposal stack, released in reverse when the start fails and at a stop.
 */
export async function runPrimary(config: ServerConfig, options: PrimaryOptions): Promise<void> {
  const { logger, stops } = options;
  const { signal } = stops;
  const stack = new DisposalStack(logger);
  let stopping = false;
  // The embedded PostgreSQL's restarts, told to the workers (given up: their /ready says why).
  let databaseEvent = (_: EmbeddedEvent) => {};
  let workers: Workers;
  let orm: MikroORM;
  let demo: RunningDemo | undefined;
  let clean = true;
  const failedStart = async (err: unknown) => {
    stopping = true;
    await stack.dispose().catch((e) => logger.error('the failed start did not release everything', { error: (e as Error).message }));
    throw err;
  };
  try {
    if (config.demo) {
      const running = await (await loadDemo(options.demo)).startDemo(config, logger, signal);
      demo = stack.use('demo', running, (d) => d.close());
    }
    signal.throwIfAborted();
    const prepared = await bootstrapDatabase(config, logger, stack, {
      signal,
      databaseLogger: options.databaseLogger,
      pool: { poolSize: 2 },
      onDatabaseEvent: (event) => databaseEvent(event),
    });
    orm = prepared.orm;
    if (prepared.applied.length) logger.info('migrations applied', { applied: prepared.applied });
    workers = stack.use('workers', new Workers(config.workers, logger, workerEnv(prepared.db.url, demo)), async (w) => {
      clean = await w.stop();
    });
  } catch (err) {
    return failedStart(err);
  }
  // A stop during the demo's seeding lets the seeding finish (one short transaction), and skips its banner.
  const stopped = new AbortController();
  let readying: Promise<void> = Promise.resolve();
  const stop = (cause: StopCause) => {
    if (stopping) {
      workers.kill();
      forceExit();
    }
    stopping = true;
    stopped.abort();
    logger.info('stopping: the workers finish their requests in flight', cause);
    void (async () => {
      await readying.catch(() => {});
      await stack.dispose();
      logger.info(clean ? 'stopped' : 'stopped: not every worker stopped cleanly', { clean });
      flushLogs();
      process.exit(clean ? 0 : 1);
    })().catch(fail);
  };
  databaseEvent = (event) => {
    if (event.type === 'ended') workers.databaseState({ type: 'benchmarks-database-state', state: 'restarting' });
    if (event.type === 'restarted') workers.databaseState({ type: 'benchmarks-database-state', state: 'running' });
    if (event.type === 'failed') workers.databaseState({ type: 'benchmarks-database-state', state: 'failed', reason: event.reason });
  };
  let port: number;
  try {
    ({ port } = await abortable(workers.start(), signal));
    stops.serving(stop);
  } catch (err) {
    return failedStart(err);
  }
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  logServing(logger, url, { workers: config.workers });
  if (demo) {
    readying = demo.ready({ url, context: { orm } }, stopped.signal);
    await readying.catch((err) => {
      if (!stopped.signal.aborted) throw err;
    });
  }
}

/** The line that ends a start, with where to go. */
export function logServing(logger: Logger, url: string, fields: Record<string, unknown> = {}): void {
  logger.info(`serving on ${url}`, { url, swaggerUi: `${url}/`, explorer: `${url}/explore`, api: `${url}/api/v1`, ...fields });
}

/** What the workers find in their environment: the database this process opened, the demo it runs. */
function workerEnv(databaseUrl: string, demo: RunningDemo | undefined): Record<string, string> {
  const env: Record<string, string> = { DATABASE_URL: databaseUrl };
  if (demo) {
    const trust: DemoTrust = { issuer: demo.issuer, adminEntitlement: demo.adminEntitlement, cliClientId: demo.cliClientId };
    env[WORKER_DEMO_ENV] = JSON.stringify(trust);
  }
  return env;
}
