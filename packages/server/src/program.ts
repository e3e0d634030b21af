import cluster from 'node:cluster';
import { Command, Option } from 'commander';
import { logServing, runPrimary } from './cluster.ts';
import { buildConfig, type RawConfig, type ServerConfig } from './config.ts';
import { createLogger, useLogFormat } from './core/logger.ts';
import { ConfigurationError } from './core/errors.ts';
import { loadDemo, trustDemo, type DemoModule, type RunningDemo } from './demo-module.ts';
import { fail, forceExit, logging, type StopCause, StopRequests } from './exit.ts';
import { preflight } from './preflight.ts';
import { importOriginCommand } from './import-origin/command.ts';
import { prepareDatabase } from './db/bootstrap.ts';
import { startServer, VERSION, type RunningServer } from './server.ts';
import { runWorker } from './worker.ts';
import { type CommandName, SETTINGS, settingsOf, shownDefault } from './settings.ts';

export type { DemoModule, DemoServer, RunningDemo } from './demo-module.ts';

/** The options of `command`, each derived from its declaration in settings.ts. */
export function settingOptions(command: CommandName): Option[] {
  const options: Option[] = [];
  for (const [, s] of settingsOf(command)) {
    const option = new Option(s.arg ? `${s.flag} ${s.arg}` : s.flag, `${s.help} (default: ${shownDefault(s)})`).env(s.env);
    options.push(option);
    if (s === SETTINGS.migrate) {
      options.push(new Option('--no-migrate', 'the same as --migrate false: for processes started next to `benchmarks-server migrate`'));
    }
  }
  return options;
}

function withSettings(cmd: Command, command: CommandName): Command {
  for (const option of settingOptions(command)) cmd.addOption(option);
  return cmd;
}

/** The `ServerConfig` of the options commander parsed; a wrong value is a `ConfigurationError` (one line, exit 1). */
export function configOf(opts: Record<string, unknown>): ServerConfig {
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
  // A worker takes SIGTERM from its primary (worker.ts); the others take their stop requests over
  // before they acquire anything, so that a stop during the start-up releases it.
  if (cluster.isWorker) {
    const cfg = configOf(opts);
    await useLogFormat(cfg.logFormat);
    return runWorker(cfg, logging(createLogger(cfg.logLevel)));
  }
  const stops = new StopRequests();
  try {
    await startServing(opts, options, stops);
  } catch (err) {
    if (stops.signal.aborted) stops.exitInterrupted();
    throw err;
  }
}

async function startServing(opts: Record<string, unknown>, options: ProgramOptions, stops: StopRequests): Promise<void> {
  const cfg = configOf(opts);
  await useLogFormat(cfg.logFormat);
  const logger = logging(createLogger(cfg.logLevel));
  stops.useLogger(logger);
  const { signal } = stops;
  const databaseLogger = logging(createLogger(cfg.databaseLogLevel));
  await preflight(cfg, logger, signal);
  if (cfg.workers > 1) return runPrimary(cfg, { logger, databaseLogger, demo: options.demo, stops });
  let demo: RunningDemo | undefined;
  let server: RunningServer;
  if (cfg.demo) {
    demo = await (await loadDemo(options.demo)).startDemo(cfg, logger, signal);
    trustDemo(cfg, demo);
  }
  try {
    signal.throwIfAborted();
    server = await startServer(cfg, {
      logger,
      databaseLogger,
      extraIssuers: demo ? [demo.issuer] : [],
      onClose: () => demo?.close() ?? Promise.resolve(),
      signal,
    });
  } catch (err) {
    await demo?.close();
    throw err;
  }
  let stopping = false;
  // A stop during the demo's seeding lets the seeding finish (one short transaction), and skips its banner.
  const stopped = new AbortController();
  let readying: Promise<void> = Promise.resolve();
  const stop = (cause: StopCause) => {
    if (stopping) forceExit();
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
  try {
    stops.serving(stop);
  } catch (err) {
    // Asked to stop while the last step of the start ran: released as a failed start is.
    await server.close().catch((e) => logger.warn('the interrupted start did not release everything', { error: (e as Error).message }));
    throw err;
  }
  logServing(logger, server.url);
  if (demo) {
    readying = demo.ready(server, stopped.signal);
    await readying.catch((err) => {
      if (!stopped.signal.aborted) throw err;
    });
  }
}

async function migrateOnly(opts: Record<string, unknown>): Promise<void> {
  const stops = new StopRequests();
  const cfg = configOf(opts);
  await useLogFormat(cfg.logFormat);
  const logger = logging(createLogger(cfg.logLevel));
  stops.useLogger(logger);
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  try {
    prepared = await prepareDatabase(cfg, logger, { databaseLogger: logging(createLogger(cfg.databaseLogLevel)), signal: stops.signal });
  } catch (err) {
    if (stops.signal.aborted) stops.exitInterrupted();
    throw err;
  }
  // Once applied, they are reported and the database released whatever a stop asks (a second forces exit 1).
  const { applied, close } = prepared;
  try {
    process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'The database is up to date.\n');
  } finally {
    await close();
  }
}

/** The `benchmarks-server` command line (`start`, `migrate`, `import-origin`). */
export function program(options: ProgramOptions = {}): Command {
  const cmd = new Command('benchmarks-server').description('Benchmark results service').version(VERSION);
  withSettings(cmd.command('start').description('Run the service (applies pending migrations first)'), 'start').action((opts) =>
    start(opts, options).catch(fail),
  );
  withSettings(cmd.command('migrate').description('Apply pending database migrations and exit'), 'migrate').action((opts) =>
    migrateOnly(opts).catch(fail),
  );
  importOriginCommand(withSettings(cmd.command('import-origin'), 'import-origin'), configOf);
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
