import { fileURLToPath } from 'node:url';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import { entities } from '../entities/index.ts';
import { loadMigrations, pendingMigrations } from '../migrations/index.ts';
import { boundParametersDriver } from './bound-driver.ts';
import { refuseUnstorableValues } from './unstorable.ts';
import { reusable } from './request-scope.ts';
import type { Logger } from '../core/logger.ts';
import { lockWithin, MIGRATION_LOCK } from './advisory-lock.ts';
import { withOwnConnection } from './own-connection.ts';

const migrationsPath = fileURLToPath(new URL('../migrations', import.meta.url));

/** How long after its statement timeout pg stops waiting for a server's answer. */
const QUERY_TIMEOUT_MARGIN_MS = 2000;

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

/** The application pool's settings (absent: 10 connections, no statement timeout, prepared statements): per ORM. */
export interface PoolOptions {
  poolSize?: number;
  statementTimeoutMs?: number;
  preparedStatements?: boolean;
}

export function ormOptions(databaseUrl: string, debug = false, logger?: Logger, pool: PoolOptions = {}): Options {
  return {
    clientUrl: databaseUrl,
    driver: boundParametersDriver({ preparedStatements: pool.preparedStatements }),
    entities,
    debug,
    allowGlobalContext: false,
    forceUtcTimezone: true,
    timezone: '+00:00',
    onQuery: refuseUnstorableValues,
    // When the database is gone, requests fail within ~5 s (503) instead of queueing.
    pool: { min: 0, max: pool.poolSize ?? 10, idleTimeoutMillis: 10_000, acquireTimeoutMillis: 5_000 },
    driverOptions: {
      // knex's pool option, which MikroORM's PoolConfig does not declare: a connection whose
      // statement was cancelled is discarded (db/request-scope.ts).
      pool: { validate: reusable },
      connection: {
        connectionTimeoutMillis: 5_000,
        application_name: 'benchmarks-server',
        // PostgreSQL cancels every statement past it (57014); a server that does not answer at all
        // is given up by pg a little later ("Query read timeout", 503), and the connection discarded.
        ...(pool.statementTimeoutMs
          ? { statement_timeout: pool.statementTimeoutMs, query_timeout: pool.statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS }
          : {}),
      },
      ...(logger ? { log: knexLog(logger) } : {}),
    },
    migrations: {
      tableName: 'mikro_orm_migrations',
      silent: true,
      snapshot: false,
      path: migrationsPath,
      pathTs: migrationsPath,
      emit: 'ts',
      transactional: true,
      allOrNothing: true,
    },
  };
}

export async function connect(databaseUrl: string, logger?: Logger, pool?: PoolOptions): Promise<MikroORM> {
  return MikroORM.init(ormOptions(databaseUrl, false, logger, pool));
}

/** The migration lock was not taken by the time given: another process is applying the migrations. */
export class MigrationsBusyError extends Error {
  override name = 'MigrationsBusyError';
}

export interface MigrateOptions {
  /** The migration transaction's statement timeout, in ms (default 0: none): a migration may rewrite a large table. */
  timeoutMs?: number;
  /** Stop waiting for the migration lock at this time, in ms since the epoch (default: wait as long as it takes). */
  lockUntil?: number;
  /** Called once when another process holds the migration lock (this one waits). */
  onWait?: () => void;
  /** Called once the lock is held, before the migrations are read. */
  onLocked?: () => void;
  /** Where the lock's own connection goes (DATABASE_DIRECT_URL); default: the ORM's URL. */
  sessionUrl?: string;
}

/**
 * Applies every pending migration in one transaction, with `timeoutMs` as its statement timeout;
 * returns the names applied. Under the migration lock (db/advisory-lock.ts), on a connection of its
 * own: processes starting together take turns, and the later ones find nothing pending. Throws
 * MigrationsBusyError when the lock is not taken by `lockUntil`.
 */
export async function migrate(orm: MikroORM, options: MigrateOptions = {}): Promise<string[]> {
  return withOwnConnection(
    options.sessionUrl ?? orm.config.get('clientUrl')!,
    async (run) => {
      const until = options.lockUntil ?? Infinity;
      if (!(await lockWithin(run, MIGRATION_LOCK, { until, onWait: options.onWait }))) throw new MigrationsBusyError();
      options.onLocked?.();
      if ((await pendingMigrations(run)).length === 0) return [];
      const migrator = await loadMigrator(orm);
      const connection = orm.em.getConnection();
      const applied = await connection.transactional(async (trx) => {
        await connection.execute(`select set_config('statement_timeout', ?, true)`, [String(options.timeoutMs ?? 0)], 'run', trx);
        // pg's own bound (query_timeout) follows it: knex's transaction client hands out its one pg client.
        type PgClient = { connectionParameters: { query_timeout?: number } };
        const client = await (trx.client as unknown as { acquireConnection(): Promise<PgClient> }).acquireConnection();
        const parameters = client.connectionParameters;
        const poolTimeout = parameters.query_timeout;
        parameters.query_timeout = options.timeoutMs ? options.timeoutMs + QUERY_TIMEOUT_MARGIN_MS : undefined;
        try {
          return await migrator.up({ transaction: trx });
        } finally {
          parameters.query_timeout = poolTimeout;
        }
      });
      return applied.map((m) => m.name);
    },
    'migration lock',
  );
}

/** MikroORM's migrator with every migration, loaded when there is one to apply. */
async function loadMigrator(orm: MikroORM) {
  const [{ Migrator }, migrationsList] = await Promise.all([import('@mikro-orm/migrations'), loadMigrations()]);
  orm.config.set('migrations', { ...orm.config.get('migrations'), migrationsList });
  return new Migrator(orm.em);
}
