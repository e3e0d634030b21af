/**
 * Every connection the server opens outside the application pool is made here, each for work that
 * needs a session of its own; everything else goes through the pool (db/orm.ts, db/replicas.ts).
 * `application_name` is `benchmarks-server <purpose>`, as pg_stat_activity shows it.
 *
 * - `maintenance`, `migration lock`, `metric values` (withOwnConnection, below): the migration lock,
 *   the metric values' path changes and backfill: session-level advisory locks held across
 *   statements, and statements that may run for minutes, past the pool's timeout.
 * - `control` (db/control.ts): `/ready` and `pg_cancel_backend` for abandoned requests, which must
 *   answer when every pooled connection is busy.
 * - `listener` (db/change-listener.ts): `LISTEN` holds the session for as long as the process runs.
 * - `export` (services/export/export.ts): a cursor fetched batch by batch in one repeatable-read
 *   snapshot for as long as the answer streams, which would hold a pooled connection meanwhile.
 * - `import-origin` (import-origin/source.ts, target.ts): the source's snapshot over many cursors;
 *   on the target, the import lock held for the whole import.
 * - `bootstrap` (db/embedded.ts): the embedded cluster's `postgres` database, to create the
 *   service's database before any pool can exist.
 */
import pg from 'pg';
import type { Run } from './advisory-lock.ts';

/** Why a connection is opened outside the pool (see above); its `application_name`. */
export type OwnPurpose =
  | 'maintenance'
  | 'migration lock'
  | 'metric values'
  | 'control'
  | 'listener'
  | 'export'
  | 'import-origin'
  | 'bootstrap';

/** A client (not connected) for `purpose`, named after it; `config` holds the rest (URL, timeouts). */
export function ownClient(purpose: OwnPurpose, config: Omit<pg.ClientConfig, 'application_name'>): pg.Client {
  return new pg.Client({ ...config, application_name: `benchmarks-server ${purpose}` });
}

/** A URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/**
 * Runs statements on a connection of their own, opened for the purpose and closed afterwards:
 * maintenance that may run for minutes (`create index concurrently` on a large table) is neither
 * cut by the application pool's statement timeout nor holds one of its connections meanwhile, and
 * the session-level advisory locks taken on it (db/advisory-lock.ts) end with it. DDL is composed
 * by the server; parameters are for the other statements (DDL takes none).
 *
 * `url` is the database's session URL (DATABASE_DIRECT_URL, else DATABASE_URL): behind PgBouncer in
 * transaction mode a lock would stay with whichever server connection took it, held after this
 * connection ends, and an unlock could reach another server connection.
 */
export async function withOwnConnection<T>(
  url: string,
  work: (run: Run) => Promise<T>,
  purpose: Extract<OwnPurpose, 'maintenance' | 'migration lock' | 'metric values' | 'import-origin'> = 'maintenance',
): Promise<T> {
  const client = ownClient(purpose, { connectionString: url, connectionTimeoutMillis: 5_000 });
  client.on('error', () => {}); // reported by the statement that fails
  await client.connect();
  try {
    return await work(async (sql, params) => (await client.query(sql, params)).rows);
  } finally {
    await client.end().catch(() => {});
  }
}
