import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.ts';
import { connect, migrate } from '../../src/db/orm.ts';

/**
 * A real PostgreSQL for tests: TEST_DATABASE_URL (the test runner starts one embedded cluster and
 * passes it), or, when a test file runs alone, an embedded cluster of its own in a temporary directory.
 *
 * Databases with the service's schema are copies of one migrated template (`createMigratedTestDatabase`):
 * the runner migrates it once per run and names it in TEST_TEMPLATE_DATABASE; a process without it
 * migrates a template of its own on first use. Tests of the migrations themselves take an empty
 * database (`createTestDatabase`) and migrate it.
 */
let own: { db: EmbeddedDatabase; dir: string } | undefined;
let adminUrl: Promise<string> | undefined;
let ownTemplate: Promise<string> | undefined;
/** Test servers using the cluster; the cluster this process started stops when the last one closes. */
let users = 0;

/**
 * Settings of a cluster that only tests use: no fsync (the data of a test outlives no crash of the
 * machine). A PostgreSQL process that crashes or is killed loses nothing by it: what it wrote is in
 * the operating system's cache.
 */
async function tuneForTests(url: string): Promise<void> {
  await withAdmin(url, async (client) => {
    await client.query('alter system set fsync = off');
    await client.query('alter system set full_page_writes = off');
    await client.query('select pg_reload_conf()');
  });
}

async function startCluster(): Promise<{ db: EmbeddedDatabase; dir: string; url: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'benchmarks-pg-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
  const db = await startEmbeddedPostgres(dir);
  const url = db.url.replace(/\/benchmarks$/, '/postgres');
  await tuneForTests(url);
  return { db, dir, url };
}

export async function startTemporaryCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  const { db, dir, url } = await startCluster();
  return {
    url,
    stop: async () => {
      await db.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function clusterUrl(): Promise<string> {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL;
  const { db, dir, url } = await startCluster();
  own = { db, dir };
  return url;
}

async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function databaseName(label: string): string {
  const base = label
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 30);
  return `t_${base}_${randomBytes(4).toString('hex')}`;
}

/** The URL of database `name` on the cluster of `url`. */
function urlOf(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Creates a database on the cluster of `clusterAdminUrl` and applies every migration to it, then
 * makes it a template nobody connects to (CREATE DATABASE … TEMPLATE needs it without sessions).
 * Returns its name.
 */
export async function createTemplateDatabase(clusterAdminUrl: string): Promise<string> {
  const name = databaseName('template');
  await withAdmin(clusterAdminUrl, (c) => c.query(`create database ${c.escapeIdentifier(name)}`));
  const orm = await connect(urlOf(clusterAdminUrl, name));
  try {
    await migrate(orm);
  } finally {
    await orm.close(true);
  }
  await withAdmin(clusterAdminUrl, (c) =>
    c.query(`alter database ${c.escapeIdentifier(name)} with is_template true allow_connections false`),
  );
  return name;
}

async function create(label: string, template?: string): Promise<string> {
  users++;
  adminUrl ??= clusterUrl();
  const admin = await adminUrl;
  const name = databaseName(label);
  let from = '';
  if (template === 'migrated') {
    ownTemplate ??= process.env.TEST_TEMPLATE_DATABASE
      ? Promise.resolve(process.env.TEST_TEMPLATE_DATABASE)
      : createTemplateDatabase(admin);
    from = await ownTemplate;
  }
  await withAdmin(admin, (c) =>
    c.query(`create database ${c.escapeIdentifier(name)}${from ? ` template ${c.escapeIdentifier(from)}` : ''}`),
  );
  return urlOf(admin, name);
}

/** A fresh, empty database on the test cluster (no migration applied); returns its URL. */
export async function createTestDatabase(label = 'test'): Promise<string> {
  return create(label);
}

/**
 * A fresh database on the test cluster with every migration applied, as a server leaves it after its
 * first start: a copy of the migrated template. Returns its URL.
 */
export async function createMigratedTestDatabase(label = 'test'): Promise<string> {
  return create(label, 'migrated');
}

/** Stops the cluster this process started itself once no test server uses it. */
export async function releaseTestDatabase(): Promise<void> {
  users = Math.max(0, users - 1);
  if (users > 0 || !own) return;
  const { db, dir } = own;
  own = undefined;
  adminUrl = undefined;
  ownTemplate = undefined;
  await db.stop();
  await rm(dir, { recursive: true, force: true });
}
