/**
 * Debian's PgBouncer (the `pgbouncer` package, installed by .ci/run) in front of one database of
 * the test cluster: transaction pooling on a free loopback port, configured as docs/deploy.md
 * ("PgBouncer") says, with its configuration and its log in a temporary directory. PgBouncer
 * refuses to run as root: as root it runs as the `postgres` user.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../../src/db/embedded.ts';
import { asPostgres } from './replication.ts';

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** The database's URL with PgBouncer's address: what DATABASE_URL names. */
  url: string;
  port: number;
  /** The database's name, as PgBouncer's statistics name it. */
  database: string;
  /** Runs a command of PgBouncer's admin console (`SHOW STATS`, …); returns its rows. */
  admin(command: string): Promise<Record<string, unknown>[]>;
  /** Stops PgBouncer (immediate shutdown, killed if it lingers), then removes its directory. */
  close(): Promise<void>;
}

export interface PgBouncerOptions {
  /** The statement timeout PgBouncer gives its server connections (`connect_query`), in ms. */
  statementTimeoutMs?: number;
  /** The startup parameters PgBouncer drops instead of refusing the connection (default: statement_timeout). */
  ignoreStartupParameters?: string;
}

const READY_WITHIN_MS = 30_000;

/** Starts PgBouncer in front of the database of `databaseUrl` (a URL with the user's password, or none under trust). */
export async function startPgBouncer(databaseUrl: string, options: PgBouncerOptions = {}): Promise<PgBouncer> {
  if (!existsSync(PGBOUNCER)) {
    throw new Error(
      `PgBouncer is not installed (no ${PGBOUNCER}): install Debian's pgbouncer package (apt-get install pgbouncer), as .ci/run does. This test does not skip.`,
    );
  }
  const target = new URL(databaseUrl);
  const database = decodeURIComponent(target.pathname.slice(1));
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'pgbouncer-'));
  const { uid, gid } = asPostgres();
  const quoted = (text: string) => `"${text.replace(/"/g, '""')}"`;
  const userlist = join(dir, 'userlist.txt');
  writeFileSync(userlist, `${quoted(user)} ${quoted(password)}\n`, { mode: 0o600 });
  const timeout = options.statementTimeoutMs ?? 15_000;
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(
    ini,
    [
      '[databases]',
      // The pool's statement timeout, which the server sends at connect and PgBouncer ignores.
      `${database} = host=${target.hostname} port=${target.port} dbname=${database} connect_query='SET statement_timeout = ${timeout}'`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      `auth_type = ${password ? 'scram-sha-256' : 'trust'}`,
      `auth_file = ${userlist}`,
      `admin_users = ${user}`,
      'pool_mode = transaction',
      `ignore_startup_parameters = ${options.ignoreStartupParameters ?? 'statement_timeout'}`,
      'max_client_conn = 200',
      'default_pool_size = 20',
      '',
    ].join('\n'),
  );
  if (uid !== undefined && gid !== undefined) {
    for (const path of [dir, ini, userlist]) chownSync(path, uid, gid);
  }
  // PgBouncer logs to stderr when it runs in the foreground; the file is opened here, so it needs no right to the directory.
  const logFile = join(dir, 'pgbouncer.log');
  const logFd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(PGBOUNCER, [ini], { uid, gid, cwd: '/', stdio: ['ignore', logFd, logFd] });
  } finally {
    closeSync(logFd);
  }
  let ended = false;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      ended = true;
      resolve();
    });
    child.once('error', () => {
      ended = true;
      resolve();
    });
  });
  const log = () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '');
  const close = async () => {
    if (!ended) {
      child.kill('SIGTERM'); // immediate shutdown
      const killed = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exit;
      clearTimeout(killed);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await listening(port, () => ended, log);
  } catch (err) {
    await close();
    throw err;
  }
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const adminUrl = new URL(url);
  adminUrl.pathname = '/pgbouncer';
  return {
    url: url.toString(),
    port,
    database,
    admin: async (command) => {
      const client = new pg.Client({ connectionString: adminUrl.toString() });
      await client.connect();
      try {
        return (await client.query(command)).rows;
      } finally {
        await client.end();
      }
    },
    close,
  };
}

/** Resolves once `port` accepts connections; throws with PgBouncer's log when it ends first or takes too long. */
async function listening(port: number, ended: () => boolean, log: () => string): Promise<void> {
  const deadline = Date.now() + READY_WITHIN_MS;
  for (;;) {
    if (ended()) throw new Error(`PgBouncer ended at start: ${log().trim()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline)
      throw new Error(`PgBouncer does not listen on port ${port} after ${READY_WITHIN_MS / 1000}s: ${log().trim()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
