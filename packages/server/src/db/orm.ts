import { fileURLToPath } from 'node:url';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from '../entities/index.ts';
import { migrationsList } from '../migrations/index.ts';
import { BoundParametersDriver } from './bound-driver.ts';
import { refuseUnstorableValues } from './unstorable.ts';
import type { Logger } from '../logger.ts';

const migrationsPath = fileURLToPath(new URL('../migrations', import.meta.url));

/** knex's own warnings (e.g. a pooled connection lost) as JSON lines of the server's logger. */
function knexLog(logger: Logger) {
  const text = (m: unknown) => (m instanceof Error ? m.message : String(m));
  return {
    warn: (m: unknown) => logger.warn('database', { message: text(m) }),
    error: (m: unknown) => logger.error('database', { message: text(m) }),
    deprecate: () => {},
    debug: () => {},
  };
}

export function ormOptions(databaseUrl: string, debug = false, logger?: Logger): Options {
  return {
    clientUrl: databaseUrl,
    driver: BoundParametersDriver as never,
    entities,
    extensions: [Migrator],
    debug,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    timezone: '+00:00',
    onQuery: refuseUnstorableValues,
    // When the database is gone, requests fail within ~5 s (503) instead of queueing: a new
    // connection gives up after 5 s, waiting for a free one in the pool too.
    pool: { min: 0, max: 10, idleTimeoutMillis: 10_000, acquireTimeoutMillis: 5_000 },
    driverOptions: { connection: { connectionTimeoutMillis: 5_000 }, ...(logger ? { log: knexLog(logger) } : {}) },
    migrations: {
      tableName: 'mikro_orm_migrations',
      silent: true,
      snapshot: false,
      path: migrationsPath,
      pathTs: migrationsPath,
      emit: 'ts',
      transactional: true,
      allOrNothing: true,
      migrationsList,
    },
  };
}

export async function connect(databaseUrl: string, logger?: Logger): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, false, logger));
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((m) => m.name);
}

/** True when the database answers and no migration is pending. */
export async function pendingMigrations(orm: MikroORM): Promise<string[]> {
  const pending = await orm.getMigrator().getPendingMigrations();
  return pending.map((m) => m.name);
}
