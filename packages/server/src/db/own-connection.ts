import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * Runs statements on a connection of their own, opened for the purpose and closed afterwards:
 * maintenance that may run for minutes (`create index concurrently` on a large table) is neither
 * cut by the application pool's statement timeout nor holds one of its connections meanwhile.
 * Only for statements composed by the server (no parameters).
 */
export async function withOwnConnection<T>(em: EntityManager, work: (run: (sql: string) => Promise<void>) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: em.config.get('clientUrl'),
    application_name: 'benchmarks-server maintenance',
    connectionTimeoutMillis: 5_000,
  });
  client.on('error', () => {}); // reported by the statement that fails
  await client.connect();
  try {
    return await work(async (sql) => {
      await client.query(sql);
    });
  } finally {
    await client.end().catch(() => {});
  }
}
