/**
 * A real PostgreSQL primary and a streaming standby made from it with `pg_basebackup -R`, for the
 * read replica tests. The embedded PostgreSQL ships no pg_basebackup, so both run on Debian's
 * PostgreSQL 15 (`postgresql-15`, installed by .ci/run). As root, they run as the `postgres` user.
 */
import { execFile } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../../src/db/embedded.ts';

const run = promisify(execFile);
export const PG15_BIN = '/usr/lib/postgresql/15/bin';

/** As root: the ids of the `postgres` user and group, for running PostgreSQL's tools (and PgBouncer) as that user. */
export function asPostgres(): { uid?: number; gid?: number } {
  if (userInfo().uid !== 0) return {};
  return { uid: idOf('/etc/passwd', 'postgres'), gid: idOf('/etc/group', 'postgres') };
}

/** The numeric id of a user or group (the third field of its line). */
function idOf(file: string, name: string): number {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  if (!line) throw new Error(`no '${name}' in ${file}: install postgresql-15 (it creates the postgres user)`);
  return Number(line.split(':')[2]);
}

async function bin(name: string, args: string[]): Promise<string> {
  const { stdout } = await run(join(PG15_BIN, name), args, { ...asPostgres(), cwd: '/', timeout: 120_000 });
  return stdout;
}

export interface Cluster {
  dir: string;
  port: number;
  url: string;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** Runs a statement as the superuser on this server's `benchmarks` database. */
  sql<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
}

function cluster(dir: string, port: number): Cluster {
  const url = `postgresql://postgres@127.0.0.1:${port}/benchmarks`;
  return {
    dir,
    port,
    url,
    stop: async (mode = 'fast') => {
      await bin('pg_ctl', ['-D', dir, '-m', mode, '-w', 'stop']).catch(() => {});
    },
    start: async () => {
      await bin('pg_ctl', ['-D', dir, '-l', join(dir, 'log.txt'), '-w', '-t', '60', 'start']);
    },
    sql: async (text, params = []) => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(text, params)).rows;
      } finally {
        await client.end();
      }
    },
  };
}

export interface Replication {
  primary: Cluster;
  standby: Cluster;
  close(): Promise<void>;
}

/** Starts a primary with a `benchmarks` database, and a standby streaming from it. */
export async function startReplication(): Promise<Replication> {
  const root = mkdtempSync(join(tmpdir(), 'replication-'));
  chmodSync(root, 0o777); // the postgres user creates its directories here
  const primary = cluster(join(root, 'primary'), await freePort());
  const standby = cluster(join(root, 'standby'), await freePort());
  await bin('initdb', ['-D', primary.dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  appendFileSync(
    join(primary.dir, 'postgresql.conf'),
    `\nport = ${primary.port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = ''\nfsync = off\nwal_level = replica\nmax_wal_senders = 4\n`,
  );
  await primary.start();
  const admin = new pg.Client({ connectionString: `postgresql://postgres@127.0.0.1:${primary.port}/postgres` });
  await admin.connect();
  await admin.query('create database benchmarks');
  await admin.end();
  await bin('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    standby.dir,
    '-R',
    '-X',
    'stream',
    '-c',
    'fast',
  ]);
  appendFileSync(join(standby.dir, 'postgresql.conf'), `\nport = ${standby.port}\nhot_standby = on\n`);
  await standby.start();
  return {
    primary,
    standby,
    close: async () => {
      await standby.stop('immediate');
      await primary.stop('immediate');
      rmSync(root, { recursive: true, force: true });
    },
  };
}
