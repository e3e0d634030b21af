import { createServer, type Server } from 'node:http';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServerConfig } from './config.ts';
import { createLogger, type Logger } from './core/logger.ts';
import { TotalCache } from './services/total-cache.ts';
import { EmbedCache } from './services/embeds.ts';
import { UploadTargets } from './services/upload-targets.ts';
import { MetricIndexes } from './services/metric-indexes.ts';
import { connect, migrate, type PoolOptions } from './db/orm.ts';
import { DatabaseControl } from './db/control.ts';
import { ConfigurationError, startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { TokenVerifier } from './auth/verifier.ts';
import { createApp } from './app.ts';
import { answerClientErrors } from './http/client-error.ts';
import type { AppContext } from './services/app-context.ts';

import { VERSION } from './version.ts';
import { ExpensiveListAdmission, LargeBodyAdmission } from './services/admission.ts';
import { SchemaCompiler } from './services/schema-compiler.ts';

export { VERSION };

export interface DatabaseHandle {
  url: string;
  embedded: EmbeddedDatabase | null;
}

/** The external database, or an embedded PostgreSQL under the data directory. */
export async function openDatabase(config: ServerConfig, logger: Logger): Promise<DatabaseHandle> {
  if (config.databaseUrl) return { url: config.databaseUrl, embedded: null };
  logger.info('starting the embedded PostgreSQL', { dataDir: config.dataDir });
  const embedded = await startEmbeddedPostgres(config.dataDir, (m) => logger.debug('postgres', { log: m }));
  return { url: embedded.url, embedded };
}

/** Connects and checks the database answers; one clear error otherwise. */
export async function connectDatabase(url: string, logger?: Logger, pool?: PoolOptions): Promise<MikroORM> {
  let orm: MikroORM;
  try {
    orm = await connect(url, logger, pool);
    await orm.em.getConnection().execute('select 1');
  } catch (err) {
    const safeUrl = url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
    throw new ConfigurationError(`Cannot reach the database at ${safeUrl}: ${(err as Error).message}`);
  }
  return orm;
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
  /** Extra trusted issuers and admin entitlements, e.g. those of the demo provider. */
  extraIssuers?: string[];
  onClose?: () => Promise<void>;
}

export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const logger = options.logger ?? createLogger(config.logLevel);
  const db = await openDatabase(config, logger);
  let orm: MikroORM | undefined;
  try {
    orm = await connectDatabase(db.url, logger, { poolSize: config.dbPoolSize, statementTimeoutMs: config.statementTimeoutMs });
    const applied = await migrate(orm);
    if (applied.length) logger.info('migrations applied', { applied });
    const issuers = [...config.oidcIssuers, ...(options.extraIssuers ?? [])];
    const verifier = issuers.length ? new TokenVerifier({ issuers, audience: config.oidcAudience, opaqueIssuer: config.oidcOpaqueIssuer }) : null;
    if (!verifier) logger.warn('no OpenID issuer is trusted (OIDC_ISSUERS): every operation that needs a token answers 401');
    else if (!verifier.opaqueIssuer) logger.info('several OpenID issuers are trusted and none checks opaque tokens (OIDC_OPAQUE_ISSUER): only JWT access tokens are accepted');
    const metrics = new MetricIndexes(logger, { maxIndexes: config.maxMetricIndexes });
    const totals = new TotalCache({ ttlMs: config.totalsCacheSeconds * 1000 });
    const schemas = new SchemaCompiler({ maxBytes: config.maxSchemaBytes, maxNodes: config.maxSchemaNodes });
    const context: AppContext = { config, orm, logger, verifier, version: VERSION, totals, embeds: new EmbedCache(), uploads: new UploadTargets(schemas), metrics,
      largeBodies: new LargeBodyAdmission(config.largeBodyConcurrency), schemas,
      control: new DatabaseControl(db.url), expensiveLists: new ExpensiveListAdmission(config.expensiveListConcurrency) };
    // Indexes for the suggested metrics of approved benchmarks, within the cap, built in the
    // background; those of benchmarks deleted or changed meanwhile are dropped.
    void metrics.ensureAll(orm.em.fork()).catch((err) => logger.warn('metric indexes not checked', { error: (err as Error).message }));
    const app = createApp(context);
    const handle = app.callback();
    let draining = false;
    // While stopping, each answer closes its connection, so that clients sending request after
    // request on a kept-alive connection cannot hold the shutdown open.
    const server = createServer((req, res) => {
      if (draining) res.setHeader('Connection', 'close');
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
          await context.metrics.close();
          await context.schemas.close();
          await context.control.close();
          await ormRef.close(true);
          await options.onClose?.();
          await db.embedded?.stop();
        })()),
    };
  } catch (err) {
    await orm?.close(true).catch(() => {});
    await db.embedded?.stop().catch(() => {});
    throw err;
  }
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') reject(new ConfigurationError(`Port ${port} on ${host} is already in use: choose another with --port.`));
      else if (err.code === 'EADDRNOTAVAIL' || err.code === 'ENOTFOUND') reject(new ConfigurationError(`Cannot listen on host ${host}: ${err.code}.`));
      else if (err.code === 'EACCES') reject(new ConfigurationError(`Not allowed to listen on ${host}:${port}.`));
      else reject(err);
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}
