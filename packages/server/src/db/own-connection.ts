import pg from 'pg';

/** Runs one statement on the connection; returns its rows. */
export type OwnRun = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

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
  work: (run: OwnRun) => Promise<T>,
  applicationName = 'benchmarks-server maintenance',
): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    application_name: applicationName,
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => {}); // reported by the statement that fails
  await client.connect();
  try {
    return await work(async (sql, params) => (await client.query(sql, params)).rows);
  } finally {
    await client.end().catch(() => {});
  }
}
