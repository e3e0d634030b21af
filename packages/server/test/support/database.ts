import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.ts';

/**
 * A real PostgreSQL for tests: TEST_DATABASE_URL (the test runner starts one embedded cluster and
 * passes it), or, when a test file runs alone, an embedded cluster of its own in a temporary directory.
 */
let own: { db: EmbeddedDatabase; dir: string } | undefined;
let adminUrl: Promise<string> | undefined;
/** Test servers using the cluster; the cluster this process started stops when the last one closes. */
let users = 0;

export async function startTemporaryCluster(): Promise<{ url: string; stop(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'benchmarks-pg-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
  const db = await startEmbeddedPostgres(dir);
  const url = db.url.replace(/\/benchmarks$/, '/postgres');
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
  const dir = await mkdtemp(join(tmpdir(), 'benchmarks-pg-'));
  await chmod(dir, 0o755);
  own = { db: await startEmbeddedPostgres(dir), dir };
  return own.db.url.replace(/\/benchmarks$/, '/postgres');
}

/** A fresh, empty database on the test cluster; returns its URL. */
export async function createTestDatabase(label = 'test'): Promise<string> {
  users++;
  adminUrl ??= clusterUrl();
  const url = new URL(await adminUrl);
  const name = `t_${label
    .replace(/[^a-z0-9]/gi, '_')
    .toLowerCase()
    .slice(0, 30)}_${randomBytes(4).toString('hex')}`;
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(`create database ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  url.pathname = `/${name}`;
  return url.toString();
}

/** Stops the cluster this process started itself once no test server uses it. */
export async function releaseTestDatabase(): Promise<void> {
  users = Math.max(0, users - 1);
  if (users > 0 || !own) return;
  const { db, dir } = own;
  own = undefined;
  adminUrl = undefined;
  await db.stop();
  await rm(dir, { recursive: true, force: true });
}
