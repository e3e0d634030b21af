/**
 * Every connection outside the application pool is made here, for work that needs a session of its
 * own, named `benchmarks-server <purpose>` in pg_stat_activity:
 * - `maintenance`, `migration lock`, `metric values` (withOwnConnection): advisory locks held across
 *   statements, and statements that may run for minutes, past the pool's timeout;
 * - `control` (db/control.ts): `/ready` and cancels, which must answer when the pool is busy;
 * - `listener` (db/change-listener.ts): `LISTEN` holds the session while the process runs;
 * - `export` (services/export/export.ts): a cursor in one snapshot for as long as the answer streams;
 * - `import-origin`: the source's snapshot over many cursors; on the target, the import lock;
 * - `bootstrap` (db/embedded.ts): the `postgres` database, to create the service's before any pool.
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
 * Runs statements on a connection of their own, closed afterwards: maintenance that may run for
 * minutes is neither cut by the pool's statement timeout nor holds a pooled connection, and the
 * advisory locks taken on it end with it. `url` is the session URL (DATABASE_DIRECT_URL): behind
 * PgBouncer in transaction mode a lock would stay with whichever server connection took it.
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
