/**
 * A worker of `start --workers N` (cluster.ts): the server of a single process, on the database the
 * primary prepared (DATABASE_URL), trusting the primary's demo provider; `worker` on its log lines,
 * `X-Worker` on its answers. SIGTERM from the primary stops it after its requests in flight; SIGINT
 * is the primary's (Ctrl-C reaches every process of the group).
 */
import cluster from 'node:cluster';
import type { ServerConfig } from './config.ts';
import type { Logger } from './core/logger.ts';
import { withFields } from './core/log-fields.ts';
import { trustDemo, type DemoTrust } from './demo-module.ts';
import { describeFailure, fail, flushLogs, takeOverSignals } from './exit.ts';
import { startServer } from './server.ts';
import type { DatabaseStatus } from './db/embedded.ts';

/** The environment variable in which the primary tells its workers what to trust of the demo it runs. */
export const WORKER_DEMO_ENV = 'BENCHMARKS_WORKER_DEMO';

/** What a worker that cannot start tells the primary (which prints it once and stops). */
export interface WorkerFailure {
  type: 'benchmarks-worker-failed';
  message: string;
}

export function isWorkerFailure(message: unknown): message is WorkerFailure {
  return (message as WorkerFailure | null)?.type === 'benchmarks-worker-failed';
}

/** What the primary tells its workers of the embedded PostgreSQL it runs, for their `/ready`. */
export interface DatabaseStateMessage extends DatabaseStatus {
  type: 'benchmarks-database-state';
}

function isDatabaseState(message: unknown): message is DatabaseStateMessage {
  return (message as DatabaseStateMessage | null)?.type === 'benchmarks-database-state';
}

let failed = false;

/** Hands the failure to the primary and exits 1 (on its own, without a primary, as any start fails). */
function failWorker(err: unknown): void {
  if (failed) return;
  failed = true;
  flushLogs();
  if (!process.send) fail(err);
  const failure: WorkerFailure = { type: 'benchmarks-worker-failed', message: describeFailure(err) };
  process.send(failure, undefined, {}, () => process.exit(1));
}

/** Serves as worker `cluster.worker.id` until SIGTERM; a failure to start is reported to the primary. */
export async function runWorker(config: ServerConfig, baseLogger: Logger): Promise<void> {
  const id = cluster.worker?.id ?? 0;
  const logger = withFields(baseLogger, { worker: id });
  const given = process.env[WORKER_DEMO_ENV];
  const demo = given ? (JSON.parse(given) as DemoTrust) : undefined;
  if (demo) trustDemo(config, demo);
  let database: DatabaseStatus = { state: 'running' };
  process.on('message', (message) => {
    if (isDatabaseState(message)) database = message;
  });
  const starting = startServer(
    { ...config, migrate: false },
    { logger, extraIssuers: demo ? [demo.issuer] : [], worker: id, databaseState: () => database },
  );
  let stopping = false;
  takeOverSignals((signal) => {
    if (signal !== 'SIGTERM' || stopping) return;
    stopping = true;
    logger.info('stopping: finishing requests in flight', { signal });
    starting
      .then((server) => server.close())
      .then(() => {
        logger.info('stopped');
        flushLogs();
        process.exit(0);
      }, failWorker);
  });
  await starting.catch(failWorker);
}
