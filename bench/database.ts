/**
 * The harness's own PostgreSQL: the embedded one (the server's `startEmbeddedPostgres`) with its data
 * under the harness data directory, given a few production-like settings, and the schema created by
 * the server's own migrations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../packages/server/src/db/embedded.ts';
import { connect, migrate } from '../packages/server/src/db/orm.ts';

/**
 * Settings applied with ALTER SYSTEM (the embedded cluster restarts once to take them): memory sized
 * for a 24 GiB machine that also runs the API, and WAL room for the bulk load. Everything else is the
 * PostgreSQL default. Documented in docs/performance.md.
 */
export const POSTGRES_SETTINGS: Record<string, string> = {
  shared_buffers: '1GB',
  effective_cache_size: '8GB',
  maintenance_work_mem: '1GB',
  max_wal_size: '8GB',
  checkpoint_timeout: '30min',
  random_page_cost: '1.1',
};

export interface BenchDatabase {
  /** postgresql://postgres:…@127.0.0.1:port/benchmarks */
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  version: string;
  /** The pid of the postmaster (the parent of every backend). */
  postmasterPid(): number;
  /** A client for the harness's own queries (application_name bench-harness). */
  client(): Promise<pg.Client>;
  /** Drops and recreates the benchmarks database, then applies the server's migrations. */
  recreate(): Promise<void>;
  stop(): Promise<void>;
}

function parts(url: string) {
  const u = new URL(url);
  return {
    host: u.hostname,
    port: Number(u.port),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
  };
}

async function clientFor(url: string, database?: string): Promise<pg.Client> {
  const p = parts(url);
  const client = new pg.Client({ ...p, database: database ?? p.database, application_name: 'bench-harness' });
  await client.connect();
  return client;
}

/** Starts (creating on first use) the embedded cluster under `dataDir`, tuned and migrated. */
export async function startBenchDatabase(dataDir: string, log: (message: string) => void): Promise<BenchDatabase> {
  let embedded: EmbeddedDatabase = await startEmbeddedPostgres(dataDir);
  let admin = await clientFor(embedded.url, 'postgres');
  let changed = false;
  for (const [name, value] of Object.entries(POSTGRES_SETTINGS)) {
    const current = (await admin.query<{ v: string }>('select current_setting($1) as v', [name])).rows[0]!.v;
    if (current !== value) {
      await admin.query(`alter system set ${name} = '${value}'`);
      changed = true;
    }
  }
  await admin.end();
  if (changed) {
    log('applying PostgreSQL settings (restart)');
    await embedded.stop();
    embedded = await startEmbeddedPostgres(dataDir);
    admin = await clientFor(embedded.url, 'postgres');
    await admin.end();
  }
  const p = parts(embedded.url);
  const probe = await clientFor(embedded.url);
  const version = (await probe.query<{ v: string }>('select version() as v')).rows[0]!.v;
  await probe.end();
  const db: BenchDatabase = {
    url: embedded.url,
    ...p,
    version,
    client: () => clientFor(embedded.url),
    postmasterPid: () => Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]),
    async recreate() {
      const c = await clientFor(embedded.url, 'postgres');
      try {
        await c.query(`drop database if exists ${p.database} with (force)`);
        await c.query(`create database ${p.database}`);
      } finally {
        await c.end();
      }
      await migrateSchema(embedded.url);
    },
    stop: () => embedded.stop(),
  };
  await migrateSchema(embedded.url);
  return db;
}

/** The schema exactly as the server creates it: its own migrations. */
async function migrateSchema(url: string): Promise<void> {
  const orm = await connect(url);
  try {
    await migrate(orm);
  } finally {
    await orm.close(true);
  }
}
