import { createServer, type Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DEFAULTS, parseDuration, type ServerConfig } from './config.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { TotalCache } from './services/total-cache.ts';
import { CompareCache } from './services/compare-cache.ts';
import { EmbedCache } from './services/embeds.ts';
import { SchemaPathsCache } from './services/path-warnings.ts';
import { UploadTargets } from './services/upload-targets.ts';
import { MetricTable } from './services/metric-lookup.ts';
import { MetricIndexes } from './services/metric-indexes.ts';
import { connect, migrate, MigrationsBusyError, type PoolOptions } from './db/orm.ts';
import { DatabaseControl } from './db/control.ts';
import { ChangeListener } from './db/change-listener.ts';
import { usePreparedStatements } from './db/bound-driver.ts';
import { parseLsn, ReadReplicas, REPLICA_DEFAULTS } from './db/replicas.ts';
import { WritePositions } from './services/write-positions.ts';
import { RateLimiter, type RateLimit } from './core/rate-limit.ts';
import { SharedRateLimiter } from './services/shared-rate-limit.ts';
import {
  ConfigurationError,
  describeLines,
  formatDuration,
  startEmbeddedPostgres,
  type EmbeddedDatabase,
  type EmbeddedEvent,
  type EmbeddedState,
} from './db/embedded.ts';
import { logEmbeddedEvent } from './db/embedded-events.ts';
import { logPostgresLine } from './db/postgres-log.ts';
import { TokenVerifier } from './auth/verifier.ts';
import { createApp } from './app.ts';
import { answerClientErrors } from './http/client-error.ts';
import type { AppContext } from './services/app-context.ts';

import { VERSION } from './version.ts';
import { ExpensiveListAdmission, ExportAdmission, LargeBodyAdmission } from './services/admission.ts';
import { SchemaCompiler } from './services/schema-compiler.ts';

export { VERSION };

export interface DatabaseHandle {
  url: string;
  /**
   * Where the connections that need a session of their own go (the migration lock, metric index
   * builds, the change listener): DATABASE_DIRECT_URL, else `url`.
   */
  sessionUrl: string;
  embedded: EmbeddedDatabase | null;
}

/**
 * The external database, or an embedded PostgreSQL under the data directory (started within
 * `databaseStartTimeoutMs`, on `databasePort`). The embedded cluster's own log lines go to `databaseLogger` at the
 * level of their severity (default: a logger at `databaseLogLevel`).
 */
export async function openDatabase(
  config: ServerConfig,
  logger: Logger,
  databaseLogger?: Logger,
  onEvent?: (event: EmbeddedEvent) => void,
): Promise<DatabaseHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, sessionUrl: config.databaseDirectUrl ?? config.databaseUrl, embedded: null };
  logger.info('starting the embedded PostgreSQL', { dataDir: config.dataDir });
  const postgresLogger = databaseLogger ?? createLogger(config.databaseLogLevel);
  const embedded = await startEmbeddedPostgres(config.dataDir, (line) => logPostgresLine(postgresLogger, line), {
    startTimeoutMs: config.databaseStartTimeoutMs,
    port: config.databasePort,
    onEvent: (event) => {
      logEmbeddedEvent(logger, event);
      onEvent?.(event);
    },
  });
  return { url: embedded.url, sessionUrl: embedded.url, embedded };
}

function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
}

/** What error messages call the database: its URL (without password), or the embedded cluster with its last log lines. */
async function describeDatabase(db: DatabaseHandle): Promise<string> {
  if (!db.embedded) return `the database at ${redactUrl(db.url)}`;
  return `the embedded PostgreSQL in ${db.embedded.databaseDir} (${describeLines(await db.embedded.lastLogLines())})`;
}

export interface ConnectOptions {
  /**
   * How long to keep trying while the database refuses connections, does not answer or is still
   * starting, in ms; 0: no limit. Default: `DATABASE_CONNECT_TIMEOUT`'s. Other failures (a wrong
   * password, say) end at once.
   */
  timeoutMs?: number;
  /** Ends the error message: what the database is (default: its URL without the password). */
  describe?: () => Promise<string>;
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

/**
 * Connects and checks the database answers, trying again every second until `timeoutMs` while it
 * is unreachable or starting; one clear error otherwise.
 */
export async function connectDatabase(url: string, logger?: Logger, pool?: PoolOptions, options: ConnectOptions = {}): Promise<MikroORM> {
  const timeoutMs = options.timeoutMs ?? parseDuration(DEFAULTS.databaseConnectTimeout, 'DATABASE_CONNECT_TIMEOUT');
  const describe = options.describe ?? (async () => `the database at ${redactUrl(url)}`);
  const until = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  let orm: MikroORM | undefined;
  for (let attempt = 1; ; attempt++) {
    const trying = (async () => {
      const o = orm ?? (await connect(url, logger, pool));
      orm = o;
      await o.em.getConnection().execute('select 1');
      return o;
    })();
    let outcome: MikroORM | typeof EXPIRED;
    try {
      outcome = await within(trying, until - Date.now());
    } catch (err) {
      const message = (err as Error)?.message ?? String(err);
      if (!transientConnectFailure(err)) {
        await orm?.close(true).catch(() => {});
        throw new ConfigurationError(`Cannot reach ${await describe()}: ${message}`);
      }
      if (Date.now() + RETRY_MS < until) {
        if (attempt === 1) logger?.warn('the database is not reachable yet: trying again every second', { error: message, timeoutMs });
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      await orm?.close(true).catch(() => {});
      throw new ConfigurationError(
        `Cannot reach ${await describe()} within ${formatDuration(timeoutMs)} (--database-connect-timeout, DATABASE_CONNECT_TIMEOUT): ${message}`,
      );
    }
    if (outcome !== EXPIRED) return outcome;
    // The attempt goes on in the background; whatever it opens is closed when it ends.
    void trying
      .then(
        (o) => o.close(true),
        () => orm?.close(true),
      )
      .catch(() => {});
    throw new ConfigurationError(
      `Cannot reach ${await describe()} within ${formatDuration(timeoutMs)} (--database-connect-timeout, DATABASE_CONNECT_TIMEOUT): it did not answer`,
    );
  }
}

/**
 * Applies the pending migrations within `timeoutMs` (0: no limit), waiting meanwhile while another
 * process holds the migration lock (db/orm.ts): processes started together on one database apply
 * them once. They run in one transaction: past the deadline the error says so, and the transaction
 * is rolled back when the connection closes (each of its statements is also cancelled by
 * PostgreSQL past the deadline).
 */
export async function migrateWithin(
  orm: MikroORM,
  timeoutMs: number,
  describe: () => Promise<string>,
  logger?: Logger,
  sessionUrl?: string,
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
    outcome = await within(migration, until - Date.now());
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
 * For a process that must not migrate (`--no-migrate`, MIGRATE=false): returns once no migration
 * is pending, waiting up to `timeoutMs` (0: no limit) for another process or `benchmarks-server
 * migrate` to apply them (as pods start next to a migration Job); then one clear error.
 */
export async function awaitMigrations(url: string, timeoutMs: number, describe: () => Promise<string>, logger?: Logger): Promise<void> {
  const until = timeoutMs > 0 ? Date.now() + timeoutMs : Infinity;
  const control = new DatabaseControl(url, 5_000);
  try {
    for (let attempt = 0; ; attempt++) {
      const pending = await control.pendingMigrations();
      if (!pending.length) return;
      const pause = Math.min(PENDING_POLL_MS, until - Date.now());
      if (pause <= 0) {
        throw new ConfigurationError(
          `${pending.length === 1 ? 'A migration is' : `${pending.length} migrations are`} not applied to ${await describe()} ` +
            `(${pending.join(', ')}) and this process must not apply them (--no-migrate, MIGRATE=false): ` +
            `run \`benchmarks-server migrate\` first (waited ${formatDuration(timeoutMs)}, --migration-timeout, MIGRATION_TIMEOUT).`,
        );
      }
      if (attempt === 0)
        logger?.info('migrations pending: waiting for another process to apply them (--no-migrate)', { pending, timeoutMs });
      await new Promise((resolve) => setTimeout(resolve, pause));
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

/**
 * Opens the database (starting the embedded one if need be), connects and applies the migrations
 * (with `config.migrate` false: waits until none is pending), each step within its deadline of
 * `config`. On failure, whatever was opened is closed again, the embedded cluster stopped, and a
 * ConfigurationError names the database.
 */
export async function prepareDatabase(
  config: ServerConfig,
  logger: Logger,
  options: { databaseLogger?: Logger; pool?: PoolOptions; onDatabaseEvent?: (event: EmbeddedEvent) => void } = {},
): Promise<PreparedDatabase> {
  const db = await openDatabase(config, logger, options.databaseLogger, options.onDatabaseEvent);
  let orm: MikroORM | undefined;
  try {
    const describe = () => describeDatabase(db);
    orm = await connectDatabase(db.url, logger, options.pool, { timeoutMs: config.databaseConnectTimeoutMs, describe });
    if (!config.migrate) {
      await awaitMigrations(db.url, config.migrationTimeoutMs, describe, logger);
      return { db, orm, applied: [] };
    }
    const applied = await migrateWithin(orm, config.migrationTimeoutMs, describe, logger, db.sessionUrl);
    return { db, orm, applied };
  } catch (err) {
    // The pool waits for the connections in use: a migration past its deadline holds one until
    // PostgreSQL cancels it (or the embedded cluster stops).
    if (orm)
      await within(
        orm.close(true).catch(() => {}),
        1000,
      );
    await db.embedded?.stop().catch(() => {});
    throw err;
  }
}

/** How long requests in flight may take to finish once the server is asked to stop. */
export const SHUTDOWN_GRACE_MS = 25_000;

export interface RunningServer {
  url: string;
  port: number;
  context: AppContext;
  /** Stops accepting, finishes requests in flight, closes the pool and the embedded database. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Receives the embedded PostgreSQL's own log lines (default: a logger at `config.databaseLogLevel`). */
  databaseLogger?: Logger;
  /** Extra trusted issuers and admin entitlements, e.g. those of the demo provider. */
  extraIssuers?: string[];
  onClose?: () => Promise<void>;
  /** This process's id among the workers of `--workers`: sent back on every answer as `X-Worker`. */
  worker?: number;
  /** The schema compiler's time budget per schema (default 10 s), for an embedding application or a test. */
  schemaBudgetMs?: number;
  /**
   * Told of the embedded cluster's unexpected ends and restarts (db/restarts.ts); `failed`: it was
   * given up, and the caller decides (the command exits 1). Default: logged only.
   */
  onDatabaseEvent?: (event: EmbeddedEvent) => void;
  /** The state of the database `/ready` reports (default: the embedded cluster's, else running); a worker's comes from its primary. */
  databaseState?: () => EmbeddedState;
}

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  usePreparedStatements(config.preparedStatements);
  const logger = options.logger ?? createLogger(config.logLevel);
  const { db, orm, applied } = await prepareDatabase(config, logger, {
    databaseLogger: options.databaseLogger,
    onDatabaseEvent: options.onDatabaseEvent,
    pool: { poolSize: config.dbPoolSize, statementTimeoutMs: config.statementTimeoutMs },
  });
  try {
    if (applied.length) logger.info('migrations applied', { applied });
    const issuers = [...config.oidcIssuers, ...(options.extraIssuers ?? [])];
    const verifier = issuers.length
      ? new TokenVerifier({ issuers, audience: config.oidcAudience, opaqueIssuer: config.oidcOpaqueIssuer })
      : null;
    if (!verifier) logger.warn('no OpenID issuer is trusted (OIDC_ISSUERS): every operation that needs a token answers 401');
    else if (!verifier.opaqueIssuer)
      logger.info(
        'several OpenID issuers are trusted and none checks opaque tokens (OIDC_OPAQUE_ISSUER): only JWT access tokens are accepted',
      );
    const metrics = new MetricIndexes(logger, { maxIndexes: config.maxMetricIndexes, sessionUrl: db.sessionUrl });
    const totals = new TotalCache({ ttlMs: config.totalsCacheSeconds * 1000 });
    const compares = new CompareCache({ ttlMs: config.totalsCacheSeconds * 1000 });
    const schemas = new SchemaCompiler({
      maxBytes: config.maxSchemaBytes,
      maxNodes: config.maxSchemaNodes,
      ...(options.schemaBudgetMs === undefined ? {} : { budgetMs: options.schemaBudgetMs }),
    });
    const context: AppContext = {
      config,
      orm,
      logger,
      verifier,
      version: VERSION,
      totals,
      compares,
      embeds: new EmbedCache(),
      schemaPaths: new SchemaPathsCache(),
      uploads: new UploadTargets(schemas),
      metrics,
      metricTable: new MetricTable(),
      largeBodies: new LargeBodyAdmission(config.largeBodyConcurrency),
      schemas,
      control: new DatabaseControl(db.url),
      expensiveLists: new ExpensiveListAdmission(config.expensiveListConcurrency, config.expensiveListWaitMs),
      exports: new ExportAdmission(config.exportConcurrency),
      rateLimiters: rateLimiters(config, orm, logger),
      databaseState: options.databaseState ?? (() => db.embedded?.state() ?? 'running'),
    };
    if (config.databaseReadUrls.length) {
      const replicaOrms = await Promise.all(
        config.databaseReadUrls.map(async (url) => ({
          url,
          orm: await connect(url, logger, { poolSize: config.dbPoolSize, statementTimeoutMs: config.statementTimeoutMs }),
        })),
      );
      context.replicas = new ReadReplicas(orm, replicaOrms, logger, {
        maxLagMs: config.maxReplicaLagMs,
        checkMs: REPLICA_DEFAULTS.checkMs,
      });
      context.writePositions = new WritePositions(config.maxReplicaLagMs);
      await context.replicas.start();
    }
    // Totals are forgotten when any process (or anyone) writes: PostgreSQL notifies every listener;
    // with replicas, every process also learns where each caller's writes left the primary.
    const positions = context.writePositions;
    const listener = new ChangeListener(db.sessionUrl, logger, {
      change: () => {
        totals.invalidate();
        compares.invalidate();
      },
      ...(positions ? { write: (payload: string) => recordWritePosition(positions, payload) } : {}),
    });
    await listener.start();
    // Indexes for the suggested metrics of approved benchmarks, within the cap, built in the
    // background; those of benchmarks deleted or changed meanwhile are dropped.
    void metrics.ensureAll(orm.em.fork()).catch((err) => logger.warn('metric indexes not checked', { error: (err as Error).message }));
    const app = createApp(context);
    const handle = app.callback();
    let draining = false;
    const worker = options.worker === undefined ? undefined : String(options.worker);
    // While stopping, each answer closes its connection, so that clients sending request after
    // request on a kept-alive connection cannot hold the shutdown open.
    const server = createServer((req, res) => {
      if (draining) res.setHeader('Connection', 'close');
      if (worker) res.setHeader('X-Worker', worker);
      void handle(req, res);
    });
    server.keepAliveTimeout = 65_000;
    answerClientErrors(server);
    await listen(server, config.host, config.port);
    const port = (server.address() as { port: number }).port;
    const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
    const url = `http://${hostForUrl}:${port}`;
    let closing: Promise<void> | undefined;
    const ormRef = orm;
    return {
      url,
      port,
      context,
      close: () =>
        (closing ??= (async () => {
          draining = true;
          await new Promise<void>((resolve) => {
            // Requests in flight finish; a request still running after the grace period is cut.
            const force = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
            // A connection whose request was in flight becomes idle once answered: close it then,
            // rather than after the keep-alive timeout.
            const sweep = setInterval(() => server.closeIdleConnections(), 100);
            force.unref();
            sweep.unref();
            server.close(() => {
              clearTimeout(force);
              clearInterval(sweep);
              resolve();
            });
          });
          await listener.close();
          await context.replicas?.close();
          await Promise.all(
            Object.values(context.rateLimiters).map((limiter) => (limiter instanceof SharedRateLimiter ? limiter.close() : undefined)),
          );
          await context.metrics.close();
          await context.schemas.close();
          await context.control.close();
          await ormRef.close(true);
          await options.onClose?.();
          await db.embedded?.stop();
        })()),
    };
  } catch (err) {
    await orm.close(true).catch(() => {});
    await db.embedded?.stop().catch(() => {});
    throw err;
  }
}

/** `<iss> <sub> <lsn>` of a notification on benchmarks_writes (app.ts sends them); anything else is ignored. */
function recordWritePosition(positions: WritePositions, payload: string): void {
  const at = payload.lastIndexOf(' ');
  if (at <= 0) return;
  try {
    positions.record(payload.slice(0, at), parseLsn(payload.slice(at + 1)));
  } catch {
    // not a position: not ours
  }
}

/**
 * The write and read limits: shared through the database by every process of the deployment
 * (RATE_LIMIT_STORE=database, the default), or kept by this process alone (memory).
 */
function rateLimiters(config: ServerConfig, orm: MikroORM, logger: Logger): AppContext['rateLimiters'] {
  const limiter = (limit: RateLimit | null, name: string) => {
    if (!limit) return null;
    if (config.rateLimitStore === 'memory') return new RateLimiter(limit);
    return new SharedRateLimiter(limit, name, (sql, params) => orm.em.fork().execute(sql, params), logger);
  };
  return { writes: limiter(config.rateLimit, 'writes'), reads: limiter(config.readRateLimit, 'reads') };
}

/** The one line of a failure to listen on `host`:`port` (code: EADDRINUSE…); undefined for an unknown failure. */
export function listenFailure(code: string | undefined, host: string, port: number): ConfigurationError | undefined {
  if (code === 'EADDRINUSE') return new ConfigurationError(`Port ${port} on ${host} is already in use: choose another with --port.`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') return new ConfigurationError(`Cannot listen on host ${host}: ${code}.`);
  if (code === 'EACCES') return new ConfigurationError(`Not allowed to listen on ${host}:${port}.`);
  return undefined;
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => reject(listenFailure(err.code, host, port) ?? err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
