import { createServer, type Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServerConfig } from './config.ts';
import { DisposalStack } from './core/disposal.ts';
import { ConfigurationError } from './core/errors.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { RateLimiter, type RateLimit } from './rate-limit/limiter.ts';
import { bootstrapDatabase, type BootstrapOptions } from './db/bootstrap.ts';
import { ChangeListener } from './db/change-listener.ts';
import { DatabaseControl } from './db/control.ts';
import type { DatabaseStatus } from './db/embedded.ts';
import { ReadRouting } from './db/read-routing.ts';
import { TokenVerifier } from './auth/verifier.ts';
import { answerClientErrors } from './http/client-error.ts';
import { startRuntime } from './services/runtime/admission.ts';
import type { AppContext } from './services/app-context.ts';
import { CompareCache } from './services/compare/compare-cache.ts';
import { startChanges } from './services/changes/changes.ts';
import { EmbedCache } from './services/catalogue/embeds.ts';
import { startMetrics } from './services/metrics/metric-values.ts';
import { SchemaPathsCache } from './services/results/path-warnings.ts';
import { startSchemas } from './services/schemas/schema-compiler.ts';
import { SharedRateLimiter } from './rate-limit/shared.ts';
import { TotalCache } from './services/results/total-cache.ts';
import { UploadTargets } from './services/results/upload-targets.ts';
import { startAlerts } from './services/alerts/scheduler.ts';
import { startWebhooks } from './services/webhooks/deliverer.ts';
import { createApp } from './app.ts';
import { VERSION } from './version.ts';

export { VERSION };

/** How long requests in flight may take to finish once the server is asked to stop. */
export const SHUTDOWN_GRACE_MS = 25_000;

export interface RunningServer {
  url: string;
  port: number;
  context: AppContext;
  /**
   * Stops accepting, finishes requests in flight, then releases everything the start opened, last
   * opened first (the embedded database last), each step even when another fails; rejects then
   * with a ReleaseError (core/disposal.ts) that names every failed step. Calling it again returns the same promise.
   */
  close(): Promise<void>;
}

export interface StartOptions extends Pick<BootstrapOptions, 'databaseLogger' | 'onDatabaseEvent'> {
  logger?: Logger;
  /** Extra trusted issuers and admin entitlements, e.g. those of the demo provider. */
  extraIssuers?: string[];
  /** Called by `close()` once everything else is released (not when the start fails: the caller still holds what it releases). */
  onClose?: () => Promise<void>;
  /** This process's id among the workers of `--workers`: sent back on every answer as `X-Worker`. */
  worker?: number;
  /** The schema compiler's time budget per schema (default 10 s), for an embedding application or a test. */
  schemaBudgetMs?: number;
  /** The state of the database `/ready` reports (default: the embedded cluster's, else running); a worker's comes from its primary. */
  databaseState?: () => DatabaseStatus;
  /**
   * Aborts the start (a stop asked for meanwhile): the database's steps end at once
   * (db/bootstrap.ts), what was opened is released as for a failed start, and the promise rejects
   * with the signal's reason. Its last steps (the listener, the port) take milliseconds and are not
   * interrupted: the caller looks at the signal once the promise resolves.
   */
  signal?: AbortSignal;
}

/**
 * Starts the server: the database (db/bootstrap.ts), the services that live as long as the app,
 * the change listener, then the port. Each resource goes on one disposal stack as it is opened
 * (core/disposal.ts): a start that fails at any step releases what it had opened, last first, and
 * `close()` releases everything the same way, each step even when another one fails.
 */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const stack = new DisposalStack(logger);
  try {
    return await serve(config, options, logger, stack);
  } catch (err) {
    await stack.dispose().catch((e) => logger.error('the failed start did not release everything', { error: (e as Error).message }));
    throw err;
  }
}

async function serve(config: ServerConfig, options: StartOptions, logger: Logger, stack: DisposalStack): Promise<RunningServer> {
  // The caller's own resource (the demo): released last by a stop; after a failed start the caller still holds it.
  let served = false;
  const { onClose } = options;
  if (onClose) stack.defer('onClose', () => (served ? onClose() : undefined));
  const pool = {
    poolSize: config.dbPoolSize,
    statementTimeoutMs: config.statementTimeoutMs,
    preparedStatements: config.preparedStatements,
  };
  const { db, orm, applied } = await bootstrapDatabase(config, logger, stack, {
    databaseLogger: options.databaseLogger,
    onDatabaseEvent: options.onDatabaseEvent,
    pool,
    signal: options.signal,
  });
  if (applied.length) logger.info('migrations applied', { applied });
  options.signal?.throwIfAborted();
  const issuers = [...config.oidcIssuers, ...(options.extraIssuers ?? [])];
  const verifier = issuers.length
    ? new TokenVerifier({ issuers, audience: config.oidcAudience, opaqueIssuer: config.oidcOpaqueIssuer })
    : null;
  if (!verifier) logger.warn('no OpenID issuer is trusted (OIDC_ISSUERS): every operation that needs a token answers 401');
  else if (!verifier.opaqueIssuer)
    logger.info(
      'several OpenID issuers are trusted and none checks opaque tokens (OIDC_OPAQUE_ISSUER): only JWT access tokens are accepted',
    );
  const metrics = startMetrics(stack, logger, db.sessionUrl);
  const schemas = startSchemas(stack, config, options.schemaBudgetMs);
  const control = stack.use('control connection', new DatabaseControl(db.url), (c) => c.close());
  const limiters = rateLimiters(config, orm, logger);
  for (const [name, limiter] of Object.entries(limiters)) {
    if (limiter instanceof SharedRateLimiter) stack.defer(`shared rate limit (${name})`, () => limiter.close());
  }
  const ttlMs = config.totalsCacheSeconds * 1000;
  const changes = startChanges(stack, ttlMs);
  const context: AppContext = {
    config,
    orm,
    logger,
    verifier,
    version: VERSION,
    control,
    rateLimiters: limiters,
    databaseState: options.databaseState ?? (() => ({ state: db.embedded?.state() ?? 'running', reason: db.embedded?.reason() })),
    runtime: startRuntime(config),
    schemas,
    metrics,
    catalogue: { embeds: new EmbedCache() },
    results: { totals: new TotalCache({ ttlMs }), uploads: new UploadTargets(schemas), schemaPaths: new SchemaPathsCache() },
    compare: { cache: new CompareCache({ ttlMs }) },
    changes,
    alerts: startAlerts(stack, orm, logger, config, changes.segmenter),
  };
  context.reads = await ReadRouting.start(config.databaseReadUrls, config.maxReplicaLagMs, orm, logger, { ...pool }, stack);
  const reads = context.reads;
  // Totals are forgotten when any process (or anyone) writes: PostgreSQL notifies every listener;
  // with replicas, every process also learns where each caller's writes left the primary.
  const listener = stack.use(
    'change listener',
    new ChangeListener(db.sessionUrl, logger, {
      change: (table, benchmarks) => {
        context.results.totals.invalidate();
        context.compare.cache.invalidate();
        context.changes.cache.invalidate();
        if (table === 'result' || table === '*') context.alerts.watches.touch(benchmarks);
      },
      ...(reads ? { write: (payload: string) => reads.noticed(payload) } : {}),
    }),
    (l) => l.close(),
  );
  await listener.start();
  startWebhooks(stack, orm, logger, config);
  // The metric paths of benchmarks whose schema changed since they were chosen (or created by
  // SQL), and the values of their results, filled in in the background.
  void metrics.values.reconcile(orm.em.fork());
  const handle = createApp(context).callback();
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
  stack.defer('HTTP server', () => {
    draining = true;
    return drain(server);
  });
  served = true;
  const port = (server.address() as { port: number }).port;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;
  return { url: `http://${hostForUrl}:${port}`, port, context, close: () => stack.dispose() };
}

/** Stops accepting; requests in flight finish, and a request still running after the grace period is cut. */
function drain(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
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
