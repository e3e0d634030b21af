/**
 * The database a process serves from, made ready: the external one or the embedded PostgreSQL,
 * connected within DATABASE_CONNECT_TIMEOUT, migrated within MIGRATION_TIMEOUT (with `--no-migrate`,
 * waited for). Each resource goes on the caller's disposal stack as it is opened (core/disposal.ts).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { DEFAULTS, parseDuration, type ServerConfig } from '../config.ts';
import { abortable, pause } from '../core/abort.ts';
import { DisposalStack } from '../core/disposal.ts';
import { ConfigurationError } from '../core/errors.ts';
import { createLogger, type Logger } from '../core/logger.ts';
import { DatabaseControl } from './control.ts';
import { describeLines } from './cluster-log.ts';
import { formatDuration, startEmbeddedPostgres, type EmbeddedDatabase, type EmbeddedEvent } from './embedded.ts';
import { logEmbeddedEvent } from './embedded-events.ts';
import { connect, migrate, MigrationsBusyError, type PoolOptions } from './orm.ts';
import { redactUrl } from './own-connection.ts';
import { logPostgresLine } from './postgres-log.ts';

export interface DatabaseHandle {
  url: string;
  /** Where the connections that need a session of their own go (db/own-connection.ts): DATABASE_DIRECT_URL, else `url`. */
  sessionUrl: string;
  embedded: EmbeddedDatabase | null;
}

/**
 * The external database, or an embedded PostgreSQL under the data directory, whose own log lines go
 * to `databaseLogger` (default: one at `databaseLogLevel`). `signal` aborts the embedded start.
 */
export async function openDatabase(
  config: ServerConfig,
  logger: Logger,
  databaseLogger?: Logger,
  onEvent?: (event: EmbeddedEvent) => void,
  signal?: AbortSignal,
): Promise<DatabaseHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, sessionUrl: config.databaseDirectUrl ?? config.databaseUrl, embedded: null };
  logger.info('starting the embedded PostgreSQL', { dataDir: config.dataDir });
  const postgresLogger = databaseLogger ?? createLogger(config.databaseLogLevel);
  const embedded = await startEmbeddedPostgres(config.dataDir, (line) => logPostgresLine(postgresLogger, line), {
    startTimeoutMs: config.databaseStartTimeoutMs,
    port: config.databasePort,
    signal,
    onEvent: (event) => {
      logEmbeddedEvent(logger, event);
      onEvent?.(event);
    },
  });
  return { url: embedded.url, sessionUrl: embedded.url, embedded };
}

/** What error messages call the database: its URL (without password), or the embedded cluster with its last log lines. */
async function describeDatabase(db: DatabaseHandle): Promise<string> {
  if (!db.embedded) return `the database at ${redactUrl(db.url)}`;
  return `the embedded PostgreSQL in ${db.embedded.databaseDir} (${describeLines(await db.embedded.lastLogLines())})`;
}

export interface ConnectOptions {
  /** How long to try again while the database is unreachable or starting, in ms (0: no limit); other failures end at once. */
  timeoutMs?: number;
  /** What error messages call the database (default: its URL without the password). */
  describe?: () => Promise<string>;
  /** Ends the attempts at once, rejecting with its reason; what an attempt opens is closed. */
  signal?: AbortSignal;
}

/** Failures that end once the database is up: not there yet, not answering, still starting, full. */
const TRANSIENT_CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  '57P03',
  '53300',
]);
const RETRY_MS = 1000;

function transientConnectFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown } } | undefined;
  if (TRANSIENT_CONNECT_CODES.has(String(e?.code)) || TRANSIENT_CONNECT_CODES.has(String(e?.cause?.code))) return true;
  // Whole words: PgBouncer's `unsupported startup parameter: statement_timeout` is for good.
  return /\btimeout\b|timed out|terminated/i.test(String(e?.message ?? ''));
}

const EXPIRED = Symbol('expired');

/** `work`'s outcome, or EXPIRED when it takes longer than `ms` (Infinity: no limit). */
async function within<T>(work: Promise<T>, ms: number): Promise<T | typeof EXPIRED> {
  if (!Number.isFinite(ms)) return work;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof EXPIRED>((resolve) => (timer = setTimeout(() => resolve(EXPIRED), Math.max(0, ms))));
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** Connects and checks the database answers, trying again every second while it is unreachable or starting. */
export async function connectDatabase(url: string, logger?: Logger, pool?: PoolOptions, options: ConnectOptions = {}): Promise<MikroORM> {
  const timeoutMs = options.timeoutMs ?? parseDuration(DEFAULTS.databaseConnectTimeout, 'DATABASE_CONNECT_TIMEOUT');
  const describe = options.describe ?? (async () => `the database at ${redactUrl(url)}`);
  const until = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  const { signal } = options;
  let orm: MikroORM | undefined;
  /** Closes, once it settles, what an attempt that is no longer waited for opens. */
  const abandon = (trying: Promise<MikroORM>) =>
    void trying
      .then(
        (o) => o.close(true),
        () => orm?.close(true),
      )
      .catch(() => {});
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) {
      await orm?.close(true).catch(() => {});
      throw signal.reason;
    }
    const trying = (async () => {
      const o = orm ?? (await connect(url, logger, pool));
      orm = o;
      await o.em.getConnection().execute('select 1');
      return o;
    })();
    let outcome: MikroORM | typeof EXPIRED;
    try {
      outcome = await abortable(within(trying, until - Date.now()), signal);
    } catch (err) {
      if (signal?.aborted) {
        abandon(trying);
        throw signal.reason;
      }
      const message = (err as Error)?.message ?? String(err);
      if (!transientConnectFailure(err)) {
        await orm?.close(true).catch(() => {});
        throw new ConfigurationError(`Cannot reach ${await describe()}: ${message}`);
      }
      if (Date.now() + RETRY_MS < until) {
        if (attempt === 1) logger?.warn('the database is not reachable yet: trying again every second', { error: message, timeoutMs });
        await pause(RETRY_MS, signal).catch(() => {}); // aborted: the next turn closes what is open
        continue;
      }
      await orm?.close(true).catch(() => {});
      throw new ConfigurationError(
        `Cannot reach ${await describe()} within ${formatDuration(timeoutMs)} (--database-connect-timeout, DATABASE_CONNECT_TIMEOUT): ${message}`,
      );
    }
    if (outcome !== EXPIRED) return outcome;
    // The attempt goes on in the background; whatever it opens is closed when it ends.
    abandon(trying);
    throw new ConfigurationError(
      `Cannot reach ${await describe()} within ${formatDuration(timeoutMs)} (--database-connect-timeout, DATABASE_CONNECT_TIMEOUT): it did not answer`,
    );
  }
}

/**
 * Applies the pending migrations within `timeoutMs` (0: no limit), waiting while another process
 * holds the migration lock (db/orm.ts). They run in one transaction, rolled back when the caller
 * closes the connection after the deadline or `signal` (PostgreSQL also cancels its statements).
 */
export async function migrateWithin(
  orm: MikroORM,
  timeoutMs: number,
  describe: () => Promise<string>,
  logger?: Logger,
  sessionUrl?: string,
  signal?: AbortSignal,
): Promise<string[]> {
  const until = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  let locked = false;
  const migration = migrate(orm, {
    timeoutMs: timeoutMs > 0 ? timeoutMs + 1000 : 0,
    lockUntil: until,
    sessionUrl,
    onWait: () => logger?.info('another process is applying the migrations: waiting for it to finish', { timeoutMs }),
    onLocked: () => {
      locked = true;
    },
  });
  const busy = async () =>
    new ConfigurationError(
      `Another process kept applying the migrations to ${await describe()} for longer than ${formatDuration(timeoutMs)} ` +
        '(--migration-timeout, MIGRATION_TIMEOUT); this one applied none. Start it again once that process is done.',
    );
  let outcome: string[] | typeof EXPIRED;
  try {
    outcome = await abortable(within(migration, until - Date.now()), signal);
  } catch (err) {
    throw err instanceof MigrationsBusyError ? await busy() : err;
  }
  if (outcome !== EXPIRED) return outcome;
  if (!locked) throw await busy();
  throw new ConfigurationError(
    `The migrations did not finish within ${formatDuration(timeoutMs)} (--migration-timeout, MIGRATION_TIMEOUT) on ${await describe()}; ` +
      'none was applied (they run in one transaction, rolled back). Another session may hold a lock on a table they change.',
  );
}

const PENDING_POLL_MS = 1000;

/**
 * For a process that must not migrate (`--no-migrate`): returns once no migration is pending,
 * waiting up to `timeoutMs` (0: no limit) for another process to apply them, as pods started next to
 * a migration Job do. `signal` ends the wait at once, rejecting with its reason.
 */
export async function awaitMigrations(
  url: string,
  timeoutMs: number,
  describe: () => Promise<string>,
  logger?: Logger,
  signal?: AbortSignal,
): Promise<void> {
  const until = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  const control = new DatabaseControl(url, 5_000);
  try {
    for (let attempt = 0; ; attempt++) {
      const pending = await abortable(control.pendingMigrations(), signal);
      if (!pending.length) return;
      const wait = Math.min(PENDING_POLL_MS, until - Date.now());
      if (wait <= 0) {
        throw new ConfigurationError(
          `${pending.length === 1 ? 'A migration is' : `${pending.length} migrations are`} not applied to ${await describe()} ` +
            `(${pending.join(', ')}) and this process must not apply them (--no-migrate, MIGRATE=false): ` +
            `run \`benchmarks-server migrate\` first (waited ${formatDuration(timeoutMs)}, --migration-timeout, MIGRATION_TIMEOUT).`,
        );
      }
      if (attempt === 0)
        logger?.info('migrations pending: waiting for another process to apply them (--no-migrate)', { pending, timeoutMs });
      await pause(wait, signal);
    }
  } finally {
    await control.close();
  }
}

export interface PreparedDatabase {
  db: DatabaseHandle;
  orm: MikroORM;
  /** The migrations applied now. */
  applied: string[];
}

export interface BootstrapOptions {
  /** Receives the embedded PostgreSQL's own log lines (default: a logger at `config.databaseLogLevel`). */
  databaseLogger?: Logger;
  /** The ORM's pool (default: `config.preparedStatements`, and knex's other defaults). */
  pool?: PoolOptions;
  /** Told of the embedded cluster's ends and restarts (db/restarts.ts); `failed`: given up (`/ready` says why). Default: logged only. */
  onDatabaseEvent?: (event: EmbeddedEvent) => void;
  /** Aborts the step in progress at once, rejecting with its reason; what was opened stays on the stack for the caller. */
  signal?: AbortSignal;
}

/** How long a failed start waits for the ORM's pool to close: a migration past its deadline holds a connection until PostgreSQL cancels it. */
const FAILED_CLOSE_MS = 1000;

/**
 * Opens the database, connects and applies the migrations (or waits for them), each step within its
 * deadline of `config`; what it opens goes on `stack`, for the caller to release on failure or at
 * stop. A failure is a ConfigurationError naming the database.
 */
export async function bootstrapDatabase(
  config: ServerConfig,
  logger: Logger,
  stack: DisposalStack,
  options: BootstrapOptions = {},
): Promise<PreparedDatabase> {
  const { signal } = options;
  const db = await openDatabase(config, logger, options.databaseLogger, options.onDatabaseEvent, signal);
  const { embedded } = db;
  if (embedded) stack.defer('embedded PostgreSQL', () => embedded.stop());
  const describe = () => describeDatabase(db);
  let failed = false;
  try {
    const pool: PoolOptions = { preparedStatements: config.preparedStatements, ...options.pool };
    const orm = await connectDatabase(db.url, logger, pool, { timeoutMs: config.databaseConnectTimeoutMs, describe, signal });
    stack.defer('database pool', async () => {
      if (!failed) return orm.close(true);
      // The pool waits for its connections: a migration past its deadline holds one until cancelled.
      const closed = orm.close(true);
      if ((await within(closed, FAILED_CLOSE_MS)) === EXPIRED) closed.catch(() => {});
    });
    if (!config.migrate) {
      await awaitMigrations(db.url, config.migrationTimeoutMs, describe, logger, signal);
      return { db, orm, applied: [] };
    }
    const applied = await migrateWithin(orm, config.migrationTimeoutMs, describe, logger, db.sessionUrl, signal);
    return { db, orm, applied };
  } catch (err) {
    failed = true;
    throw err;
  }
}

/** `bootstrapDatabase` on a stack of its own, for `migrate` and `import-origin`: released on failure, or by `close()`. */
export async function prepareDatabase(
  config: ServerConfig,
  logger: Logger,
  options: BootstrapOptions = {},
): Promise<PreparedDatabase & { close(): Promise<void> }> {
  const stack = new DisposalStack(logger);
  try {
    const prepared = await bootstrapDatabase(config, logger, stack, options);
    return { ...prepared, close: () => stack.dispose() };
  } catch (err) {
    await stack.dispose().catch((e) => logger.warn('the database was not released cleanly', { error: (e as Error).message }));
    throw err;
  }
}
