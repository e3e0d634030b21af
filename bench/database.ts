/**
 * The harness's own PostgreSQL: the server's embedded cluster (`openDatabase` of `@benchmarks/server`)
 * under the harness data directory, given a few production-like settings, the schema created by the
 * server's migrations, and PostgreSQL's own statement log (jsonlog), turned on only while requests
 * are captured: what the server sends for a request is read back from it (`StatementLog`).
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { buildConfig, connectDatabase, createLogger, migrate, openDatabase, type DatabaseHandle } from '@benchmarks/server';

/** Applied with ALTER SYSTEM (the cluster restarts once to take them); the rest are the defaults. */
export const POSTGRES_SETTINGS: Record<string, string> = {
  shared_buffers: '1GB',
  effective_cache_size: '8GB',
  maintenance_work_mem: '1GB',
  max_wal_size: '8GB',
  checkpoint_timeout: '30min',
  random_page_cost: '1.1',
};
/** The statement log: JSON lines in <cluster>/log/bench.json, written only while `log_statement` is on. */
const LOG_SETTINGS: Record<string, string> = {
  logging_collector: 'on',
  log_destination: 'jsonlog',
  log_filename: 'bench',
  log_rotation_size: '0',
};

export interface BenchDatabase {
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  version: string;
  postmasterPid(): number;
  /** A client for the harness's own queries (application_name bench-harness). */
  client(): Promise<pg.Client>;
  /** Drops and recreates the database, then applies the server's migrations. */
  recreate(): Promise<void>;
  stop(): Promise<void>;
}

async function clientFor(url: string, database?: string): Promise<pg.Client> {
  const u = new URL(url);
  if (database) u.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: u.toString(), application_name: 'bench-harness' });
  await client.connect();
  return client;
}

async function migrateSchema(url: string): Promise<void> {
  const orm = await connectDatabase(url);
  try {
    await migrate(orm);
  } finally {
    await orm.close(true);
  }
}

/** Starts (creating on first use) the embedded cluster under `dataDir`, tuned and migrated. */
export async function startBenchDatabase(dataDir: string, log: (message: string) => void): Promise<BenchDatabase> {
  const open = () => openDatabase(buildConfig({ dataDir }), createLogger('warn'));
  let handle: DatabaseHandle = await open();
  const admin = await clientFor(handle.url, 'postgres');
  let changed = false;
  for (const [name, value] of Object.entries({ ...POSTGRES_SETTINGS, ...LOG_SETTINGS })) {
    const current = (await admin.query<{ v: string }>('select current_setting($1) as v', [name])).rows[0]!.v;
    if (current !== value) {
      await admin.query(`alter system set ${name} = '${value}'`);
      changed = true;
    }
  }
  await admin.end();
  if (changed) {
    log('applying PostgreSQL settings (restart)');
    await handle.embedded!.stop();
    handle = await open();
  }
  const u = new URL(handle.url);
  const probe = await clientFor(handle.url);
  const version = (await probe.query<{ v: string }>('select version() as v')).rows[0]!.v;
  await probe.end();
  await migrateSchema(handle.url);
  return {
    url: handle.url,
    host: u.hostname,
    port: Number(u.port),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: u.pathname.slice(1),
    version,
    client: () => clientFor(handle.url),
    postmasterPid: () => Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]),
    async recreate() {
      const c = await clientFor(handle.url, 'postgres');
      try {
        await c.query(`drop database if exists ${u.pathname.slice(1)} with (force)`);
        await c.query(`create database ${u.pathname.slice(1)}`);
      } finally {
        await c.end();
      }
      await migrateSchema(handle.url);
    },
    stop: () => handle.embedded!.stop(),
  };
}

/** A statement's parameters written in as literals (`Parameters: $1 = '…', $2 = NULL`). */
function withParameters(text: string, detail: string | undefined): string {
  const values = new Map<string, string>();
  for (const m of (detail ?? '').matchAll(/\$(\d+) = (NULL|'(?:[^']|'')*')/g))
    values.set(m[1]!, m[2]!.toLowerCase() === 'null' ? 'null' : m[2]!);
  const sql = text.trim().replace(/;\s*$/, '');
  return values.size ? sql.replace(/\$(\d+)\b/g, (all, n: string) => values.get(n) ?? all) : sql;
}

/**
 * The connections of the server that do a request's work: its pool, and the export's own (the others
 * named `benchmarks-server <purpose>` are background work: metric values, the change listener…).
 */
const REQUEST_CONNECTIONS = new Set(['benchmarks-server', 'benchmarks-server export']);

/** The statements the server's request connections sent between two marks, from PostgreSQL's log, bound values written in. */
export class StatementLog {
  private offset = 0;
  private marks = 0;
  private readonly dir: string;
  constructor(
    dataDir: string,
    private readonly client: pg.Client,
  ) {
    this.dir = join(dataDir, 'postgres', 'log');
    const file = this.file();
    this.offset = file ? statSync(file).size : 0;
  }

  private file(): string | null {
    const name = existsSync(this.dir) ? readdirSync(this.dir).find((f) => f.endsWith('.json')) : undefined;
    return name ? join(this.dir, name) : null;
  }

  private async set(value: 'all' | 'none'): Promise<void> {
    await this.client.query(`alter system set log_statement = '${value}'`);
    await this.client.query('select pg_reload_conf()');
    await new Promise((r) => setTimeout(r, 300)); // every backend reads the new value at its next command
  }

  /** Turns the log on; `take` then answers the statements since the last take. */
  async start(): Promise<void> {
    await this.set('all');
    await this.take();
  }

  stop(): Promise<void> {
    return this.set('none');
  }

  async take(): Promise<string[]> {
    const mark = `bench-mark-${process.pid}-${++this.marks}`;
    await this.client.query(`select '${mark}'`);
    for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
      const file = this.file();
      if (!file) continue;
      const buffer = Buffer.alloc(Math.max(0, statSync(file).size - this.offset));
      const fd = openSync(file, 'r');
      readSync(fd, buffer, 0, buffer.length, this.offset);
      closeSync(fd);
      const out: string[] = [];
      for (let at = 0, nl = buffer.indexOf(10); nl >= 0; at = nl + 1, nl = buffer.indexOf(10, at)) {
        const e = JSON.parse(buffer.toString('utf8', at, nl)) as { application_name?: string; message?: string; detail?: string };
        if (e.application_name === 'bench-harness' && e.message?.includes(mark)) {
          this.offset += nl + 1;
          return out;
        }
        const m = /^(?:statement|execute [^:]+): ([\s\S]*)$/.exec(e.message ?? '');
        if (m && REQUEST_CONNECTIONS.has(e.application_name ?? '')) out.push(withParameters(m[1]!, e.detail));
      }
    }
    throw new Error(`the statement log (${this.dir}) did not show the mark ${mark}`);
  }
}
