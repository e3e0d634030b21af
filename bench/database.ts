/**
 * The harness's own PostgreSQL: the embedded one (the server's `startEmbeddedPostgres`) with its data
 * under the harness data directory, given a few production-like settings, and the schema created by
 * the server's own migrations.
 */
import { randomUUID } from 'node:crypto';
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

/** What `seedSyntheticResults` writes: SQL expressions of `g`, the row number (1 to `results`). */
export interface SyntheticResults {
  results: number;
  /** The JSON Schema of each benchmark, in order (`{}` for none); the benchmarks are approved, uploaded a second apart, oldest first. */
  schemas: Record<string, unknown>[];
  /** Container image name of benchmark i (default `ghcr.io/bench/b<i>`). */
  image?: (i: number) => string;
  /** The benchmark of row g: an expression of `g` and `ids` (the benchmark ids, a uuid[] indexed from 1). */
  benchmark: string;
  /** The document of row g (a jsonb expression). */
  json: string;
  /** The execution time of row g (a timestamptz expression). */
  executed: string;
  /** The site's name (default `site`). */
  siteName?: string;
  /** How many flavors (default 1), named flavor-00, flavor-01, … at the one site. */
  flavors?: number;
  /** The flavor of row g: an expression of `g` and `fids` (the flavor ids, a uuid[] indexed from 1); default the first. */
  flavor?: string;
}

export interface SyntheticSeed {
  /** The benchmark ids, in the order of `schemas`. */
  benchmarks: string[];
  site: string;
  /** The first flavor, and all of them in order. */
  flavor: string;
  flavors: string[];
  owner: { iss: string; sub: string };
}

/**
 * Synthetic results for the scripts that measure one feature at scale (bench/deep-pages.ts): a user, one approved site and flavor, the given benchmarks, and
 * `results` results made by one `insert … select from generate_series` (the server's triggers
 * included), then `vacuum analyze result`. Everything but `g` is a bound parameter.
 */
export async function seedSyntheticResults(c: pg.Client, spec: SyntheticResults): Promise<SyntheticSeed> {
  const owner = { iss: 'https://bench.example', sub: 'bench' };
  await c.query(
    "insert into app_user (iss, sub, email, registration_datetime, terms_version) values ($1, $2, 'bench@example.org', now(), '2024-01')",
    [owner.iss, owner.sub],
  );
  const site = randomUUID();
  await c.query(
    "insert into site (id, name, address, status, upload_datetime, uploader_iss, uploader_sub) values ($1, $2, 'here', 'approved', now(), $3, $4)",
    [site, spec.siteName ?? 'site', owner.iss, owner.sub],
  );
  const flavors = Array.from({ length: Math.max(1, spec.flavors ?? 1) }, () => randomUUID());
  for (const [i, id] of flavors.entries()) {
    await c.query(
      "insert into flavor (id, site_id, name, status, upload_datetime, uploader_iss, uploader_sub) values ($1, $2, $3, 'approved', now(), $4, $5)",
      [id, site, flavors.length === 1 ? 'flavor' : `flavor-${String(i).padStart(2, '0')}`, owner.iss, owner.sub],
    );
  }
  const flavor = flavors[0]!;
  const benchmarks: string[] = [];
  for (const [i, schema] of spec.schemas.entries()) {
    const id = randomUUID();
    benchmarks.push(id);
    await c.query(
      "insert into benchmark (id, container_image, container_tag, json_schema, status, upload_datetime, uploader_iss, uploader_sub) values ($1, $2, '1.0', $3, 'approved', now() + make_interval(secs => $4), $5, $6)",
      [id, spec.image?.(i) ?? `ghcr.io/bench/b${i}`, schema, i, owner.iss, owner.sub],
    );
  }
  await c.query(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ${spec.benchmark}, $2, ${spec.flavor ?? 'fids[1]'}, ${spec.json}, ${spec.executed}, now(), $4, $5, false, false
     from generate_series(1, $6::int) g, (select $1::uuid[] as ids, $3::uuid[] as fids) b`,
    [benchmarks, site, flavors, owner.iss, owner.sub, spec.results],
  );
  await c.query('vacuum analyze result');
  return { benchmarks, site, flavor, flavors, owner };
}
