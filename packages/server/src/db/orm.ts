import { fileURLToPath } from 'node:url';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from '../entities/index.ts';
import { migrationsList } from '../migrations/index.ts';

const migrationsPath = fileURLToPath(new URL('../migrations', import.meta.url));

export function ormOptions(databaseUrl: string, debug = false): Options {
  return {
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    debug,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    timezone: '+00:00',
    pool: { min: 0, max: 10, idleTimeoutMillis: 10_000, acquireTimeoutMillis: 10_000 },
    driverOptions: { connection: { connectionTimeoutMillis: 5_000 } },
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

export async function connect(databaseUrl: string): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl));
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
