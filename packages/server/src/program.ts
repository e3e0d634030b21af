import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { runPrimary } from './cluster.ts';
import { buildConfig, DEFAULTS, MAX_WORKERS, type RawConfig, type ServerConfig } from './config.ts';
import { createLogger, useLogFormat } from './core/logger.ts';
import { ConfigurationError } from './db/embedded.ts';
import { loadDemo, trustDemo, type DemoModule, type RunningDemo } from './demo-module.ts';
import { fail, logging, stopWithParent, takeOverSignals } from './exit.ts';
import { preflight } from './preflight.ts';
import { importOriginCommand } from './import-origin/command.ts';
import { prepareDatabase, startServer, VERSION, type RunningServer } from './server.ts';
import { runWorker } from './worker.ts';

export type { DemoModule, DemoServer, RunningDemo } from './demo-module.ts';

function serverOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--database-url <url>', 'external PostgreSQL (default: embedded)').env('DATABASE_URL'))
    .addOption(
      new Option(
        '--database-direct-url <url>',
        'the database of --database-url without PgBouncer, for the migration lock, metric index builds and change notifications (default: --database-url)',
      ).env('DATABASE_DIRECT_URL'),
    )
    .addOption(
      new Option(
        '--database-read-url <urls>',
        'read replicas (streaming standbys of the primary), comma-separated: lists, searches, gets, compare and export read there',
      ).env('DATABASE_READ_URL'),
    )
    .addOption(
      new Option(
        '--max-replica-lag <duration>',
        `a replica further behind than this gets no reads (default ${DEFAULTS.maxReplicaLag})`,
      ).env('MAX_REPLICA_LAG'),
    )
    .addOption(
      new Option(
        '--prepared-statements <bool>',
        'prepare frequent statements by name on each connection (default true; false behind PgBouncer in transaction mode)',
      ).env('PREPARED_STATEMENTS'),
    )
    .addOption(
      new Option('--data-dir <dir>', 'where the embedded database and demo keys live').env('BENCHMARKS_DATA_DIR').default(DEFAULTS.dataDir),
    )
    .addOption(new Option('--log-level <level>', 'debug, info, warn, error or silent').env('LOG_LEVEL').default(DEFAULTS.logLevel))
    .addOption(
      new Option(
        '--log-format <format>',
        `pretty (one readable line per event), json (one JSON object per line) or auto: pretty on a terminal, else json (default ${DEFAULTS.logFormat})`,
      ).env('LOG_FORMAT'),
    )
    .addOption(
      new Option('--database-port <port>', 'port of the embedded PostgreSQL on 127.0.0.1 (default: any free port)').env('DATABASE_PORT'),
    )
    .addOption(
      new Option(
        '--database-log-level <level>',
        `the least level of the embedded PostgreSQL's own log lines, logged at their severity's level (WARNING, ERROR: warn; FATAL, PANIC: error; LOG: info); debug, info, warn, error or silent`,
      )
        .env('DATABASE_LOG_LEVEL')
        .default(DEFAULTS.databaseLogLevel),
    )
    .addOption(
      new Option(
        '--database-start-timeout <duration>',
        `longest the embedded PostgreSQL may take to be created and started, e.g. 60s, 2m (default ${DEFAULTS.databaseStartTimeout}; 0: no limit)`,
      ).env('DATABASE_START_TIMEOUT'),
    )
    .addOption(
      new Option(
        '--database-connect-timeout <duration>',
        `how long the first connection to the database is tried again while it is unreachable or starting (default ${DEFAULTS.databaseConnectTimeout}; 0: no limit)`,
      ).env('DATABASE_CONNECT_TIMEOUT'),
    )
    .addOption(
      new Option(
        '--migration-timeout <duration>',
        `longest the migrations at start may take, waiting for another process applying them included (default ${DEFAULTS.migrationTimeout}; 0: no limit)`,
      ).env('MIGRATION_TIMEOUT'),
    );
}

function config(opts: Record<string, unknown>): ServerConfig {
  const raw: RawConfig = {};
  for (const [k, v] of Object.entries(opts)) if (typeof v === 'string') (raw as Record<string, string>)[k] = v;
  raw.demo = Boolean(opts.demo);
  if (opts.migrate === false) raw.migrate = 'false'; // --no-migrate
  try {
    return buildConfig(raw);
  } catch (err) {
    throw new ConfigurationError((err as Error).message);
  }
}

export interface ProgramOptions {
  /** The demo to run with `--demo` (default: the @benchmarks/demo package, when installed). */
  demo?: DemoModule;
}

async function start(opts: Record<string, unknown>, options: ProgramOptions): Promise<void> {
  const cfg = config(opts);
  await useLogFormat(cfg.logFormat);
  const logger = logging(createLogger(cfg.logLevel));
  if (cluster.isWorker) return runWorker(cfg, logger);
  const databaseLogger = logging(createLogger(cfg.databaseLogLevel));
  await preflight(cfg, logger);
  if (cfg.workers > 1) return runPrimary(cfg, { logger, databaseLogger, demo: options.demo });
  let demo: RunningDemo | undefined;
  let server: RunningServer;
  if (cfg.demo) {
    demo = await (await loadDemo(options.demo)).startDemo(cfg, logger);
    trustDemo(cfg, demo);
  }
  try {
    server = await startServer(cfg, {
      logger,
      databaseLogger,
      extraIssuers: demo ? [demo.issuer] : [],
      onClose: () => demo?.close() ?? Promise.resolve(),
      onDatabaseEvent: (event) => {
        if (event.type === 'failed') fail(event.error);
      },
    });
  } catch (err) {
    await demo?.close();
    throw err;
  }
  let stopping = false;
  // A stop during the demo's seeding lets the seeding finish (one short transaction), and skips its banner.
  const stopped = new AbortController();
  let readying: Promise<void> = Promise.resolve();
  const stop = (cause: { signal: string } | { parent: 'ended' }) => {
    if (stopping) {
      process.stderr.write('benchmarks-server: forced exit\n');
      process.exit(1);
    }
    stopping = true;
    stopped.abort();
    logger.info('stopping: finishing requests in flight', cause);
    readying
      .catch(() => {})
      .then(() => server.close())
      .then(
        () => {
          logger.info('stopped');
          logger.flush();
          process.exit(0);
        },
        (err) => fail(err),
      );
  };
  takeOverSignals((signal) => stop({ signal }));
  stopWithParent(() => stop({ parent: 'ended' }));
  logger.info(`serving on ${server.url}`, { url: server.url, swaggerUi: `${server.url}/`, api: `${server.url}/api/v1` });
  if (demo) {
    readying = demo.ready(server, stopped.signal);
    await readying.catch((err) => {
      if (!stopped.signal.aborted) throw err;
    });
  }
}

async function migrateOnly(opts: Record<string, unknown>): Promise<void> {
  const cfg = config(opts);
  await useLogFormat(cfg.logFormat);
  const logger = logging(createLogger(cfg.logLevel));
  const { db, orm, applied } = await prepareDatabase(cfg, logger, { databaseLogger: logging(createLogger(cfg.databaseLogLevel)) });
  try {
    await orm.close(true);
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n');
  } finally {
    await db.embedded?.stop();
  }
}

/** The `benchmarks-server` command line (`start`, `migrate`, `import-origin`). */
export function program(options: ProgramOptions = {}): Command {
  const cmd = new Command('benchmarks-server').description('Benchmark results service').version(VERSION);
  serverOptions(
    cmd
      .command('start')
      .description('Run the service (applies pending migrations first)')
      .addOption(
        new Option(
          '--workers <n>',
          `processes serving the port (node:cluster; a worker that dies is started again), 1 to ${MAX_WORKERS} or auto (one per core); default 1: this process alone`,
        ).env('WORKERS'),
      )
      .addOption(
        new Option(
          '--migrate <bool>',
          'apply pending migrations at start (default true; processes on one database take turns); false: wait up to --migration-timeout for another process to apply them, then exit 1',
        ).env('MIGRATE'),
      )
      .addOption(new Option('--no-migrate', 'the same as --migrate false: for processes started next to `benchmarks-server migrate`'))
      .addOption(new Option('--host <host>', 'address to listen on').env('HOST').default(DEFAULTS.host))
      .addOption(new Option('--port <port>', 'port to listen on (0: any free port)').env('PORT').default(String(DEFAULTS.port)))
      .addOption(new Option('--public-url <url>', 'public base URL behind a reverse proxy').env('PUBLIC_URL'))
      .addOption(new Option('--oidc-issuer <urls>', 'comma-separated trusted OpenID issuers').env('OIDC_ISSUERS'))
      .addOption(new Option('--oidc-audience <aud>', 'required audience of JWT access tokens').env('OIDC_AUDIENCE'))
      .addOption(
        new Option(
          '--oidc-opaque-issuer <url>',
          'the trusted issuer that checks opaque (non-JWT) tokens at its userinfo endpoint; default: the only trusted issuer (with several, opaque tokens are refused)',
        ).env('OIDC_OPAQUE_ISSUER'),
      )
      .addOption(
        new Option('--oidc-device-client-id <id>', 'public client id the CLI uses to log in (device grant)').env('OIDC_DEVICE_CLIENT_ID'),
      )
      .addOption(new Option('--admin-entitlement <list>', 'comma-separated entitlements that make a user admin').env('ADMIN_ENTITLEMENTS'))
      .addOption(new Option('--trust-proxy <bool>', 'honour X-Forwarded-Proto/Host/Prefix').env('TRUST_PROXY'))
      .addOption(new Option('--cors-origins <list>', "comma-separated origins allowed by CORS ('*' for any)").env('CORS_ORIGINS'))
      .addOption(new Option('--body-limit <bytes>', 'largest accepted request body').env('BODY_LIMIT'))
      .addOption(
        new Option(
          '--max-schema-bytes <bytes>',
          `largest benchmark json_schema, in bytes of JSON (default ${DEFAULTS.maxSchemaBytes})`,
        ).env('MAX_SCHEMA_BYTES'),
      )
      .addOption(
        new Option(
          '--max-schema-nodes <n>',
          `most values (object members and array elements) in a benchmark json_schema (default ${DEFAULTS.maxSchemaNodes})`,
        ).env('MAX_SCHEMA_NODES'),
      )
      .addOption(new Option('--rate-limit <rate>', `writes per client, e.g. ${DEFAULTS.rateLimit}; 0 disables`).env('RATE_LIMIT'))
      .addOption(
        new Option(
          '--totals-cache-seconds <s>',
          `how long totals of large result lists are remembered (default ${DEFAULTS.totalsCacheSeconds}; 0: never)`,
        ).env('TOTALS_CACHE_SECONDS'),
      )
      .addOption(
        new Option(
          '--large-body-concurrency <n>',
          `requests with a body of 64 KB or more (batches) parsed, validated and stored at once; the others wait (default: one per core, at least 2; here ${DEFAULTS.largeBodyConcurrency})`,
        ).env('LARGE_BODY_CONCURRENCY'),
      )
      .addOption(
        new Option(
          '--max-open-claims <n>',
          `claims one user may have waiting for review at once (default ${DEFAULTS.maxOpenClaims}; 0: no limit)`,
        ).env('MAX_OPEN_CLAIMS'),
      )
      .addOption(
        new Option(
          '--max-metric-indexes <n>',
          `most indexes for sorting by benchmarks' suggested metrics, two per metric (default ${DEFAULTS.maxMetricIndexes}; 0: none)`,
        ).env('MAX_METRIC_INDEXES'),
      )
      .addOption(
        new Option(
          '--statement-timeout <duration>',
          `longest a database statement of a request may run, e.g. 15s, 500ms (default ${DEFAULTS.statementTimeout}; 0: no limit; migrations and index builds are exempt)`,
        ).env('STATEMENT_TIMEOUT'),
      )
      .addOption(
        new Option('--db-pool-size <n>', `database connections of the application pool (default ${DEFAULTS.dbPoolSize})`).env(
          'DB_POOL_SIZE',
        ),
      )
      .addOption(
        new Option(
          '--max-page-depth <n>',
          `how deep paging by page number may reach into a result list: page × per_page at most this (default ${DEFAULTS.maxPageDepth}); cursors go deeper`,
        ).env('MAX_PAGE_DEPTH'),
      )
      .addOption(
        new Option(
          '--expensive-list-concurrency <n>',
          `result lists with search terms, JSON filters or unindexed sorts, and comparisons, run at once; the others wait their turn (default: one per core, at least 2; here ${DEFAULTS.expensiveListConcurrency})`,
        ).env('EXPENSIVE_LIST_CONCURRENCY'),
      )
      .addOption(
        new Option(
          '--expensive-list-wait <duration>',
          `how long an expensive list or comparison waits for its turn before 503, at most --statement-timeout (default ${DEFAULTS.expensiveListWait}; 0: refused at once when every place is taken)`,
        ).env('EXPENSIVE_LIST_WAIT'),
      )
      .addOption(
        new Option(
          '--export-concurrency <n>',
          `exports (GET /results:export) streaming at once, each on a database connection of its own; one more gets 503 (default: one per core, at least 2; here ${DEFAULTS.exportConcurrency})`,
        ).env('EXPORT_CONCURRENCY'),
      )
      .addOption(
        new Option(
          '--export-stall-timeout <duration>',
          `an export whose client accepts no data for this long is cut off and its place freed, e.g. 30s (default ${DEFAULTS.exportStallTimeout}; 0: never)`,
        ).env('EXPORT_STALL_TIMEOUT'),
      )
      .addOption(
        new Option(
          '--export-max-duration <duration>',
          `the longest an export may stream before it is cut off, e.g. 60m (default ${DEFAULTS.exportMaxDuration}; 0: no limit)`,
        ).env('EXPORT_MAX_DURATION'),
      )
      .addOption(
        new Option(
          '--rate-limit-store <store>',
          `where rate limits keep their buckets: database (shared by every process of the deployment) or memory (per process) (default ${DEFAULTS.rateLimitStore})`,
        ).env('RATE_LIMIT_STORE'),
      )
      .addOption(
        new Option('--read-rate-limit <rate>', 'reads (GET) per client, e.g. 600/60s (default 0: no limit)').env('READ_RATE_LIMIT'),
      )
      .addOption(
        new Option(
          '--review-tags <bool>',
          "tags users create wait for an administrator's review (default true); false: approved at once, as in the original service",
        ).env('REVIEW_TAGS'),
      )
      .addOption(new Option('--access-log <bool>', 'one line per request at info (default true); false: at debug').env('ACCESS_LOG'))
      .addOption(new Option('--terms-version <v>', 'version of the terms of use users accept').env('TERMS_VERSION'))
      .addOption(new Option('--terms-url <url>', 'where the terms of use are published').env('TERMS_URL'))
      .addOption(new Option('--demo', 'embedded database + built-in OpenID provider + demo data (loopback only)').env('BENCHMARKS_DEMO'))
      .addOption(
        new Option(
          '--demo-issuer-port <port>',
          'with --demo: port of the built-in OpenID provider (default: the one it used last time, else a free one; the tokens it printed name it)',
        ).env('BENCHMARKS_DEMO_ISSUER_PORT'),
      )
      .addOption(
        new Option(
          '--demo-seed <bool>',
          'with --demo: seed the sample catalogue into a database never seeded before whose catalogue is empty (default true; false: start empty)',
        ).env('BENCHMARKS_DEMO_SEED'),
      ),
  ).action((opts) => start(opts, options).catch(fail));
  serverOptions(cmd.command('migrate').description('Apply pending database migrations and exit')).action((opts) =>
    migrateOnly(opts).catch(fail),
  );
  importOriginCommand(serverOptions(cmd.command('import-origin')), config);
  return cmd;
}

/**
 * Runs `benchmarks-server` on the given arguments (default: the process's).
 * @example
 * await main(['node', 'benchmarks-server', 'start', '--port', '0']);
 */
export async function main(argv: string[] = process.argv, options: ProgramOptions = {}): Promise<void> {
  await program(options).parseAsync(argv);
}
