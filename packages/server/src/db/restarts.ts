/**
 * Keeps the embedded cluster running: a postmaster that ends unasked (killed, the OOM killer) is
 * started again at once on the same port and password, so the pools reconnect by themselves; a
 * failed start is tried again after 1, 2 and 4 s. One that cannot start, or ends a fourth time in
 * five minutes, is given up (`failed`): the server answers what needs no database, `/ready` says why.
 */
import { ConfigurationError } from '../core/errors.ts';
import { describeLines } from './cluster-log.ts';
import { describeExit, type Postmaster, type PostmasterExit } from './postmaster.ts';

export type RestartEvent =
  | { type: 'ended'; exit: PostmasterExit; lines: string[] }
  | { type: 'retrying'; error: string; inMs: number }
  | { type: 'restarted'; ms: number }
  /** `reason`: why, in a phrase without paths or log lines (`/ready` says it to anyone); `error` says it all. */
  | { type: 'failed'; error: ConfigurationError; reason: string };

export const RETRY_DELAYS_MS = [1000, 2000, 4000];
const WINDOW_MS = 5 * 60_000;
const MOST_ENDS = 3;

export interface RestartOptions {
  /** The postmaster running now. */
  current(): Postmaster;
  /** Starts it again; a ConfigurationError when it cannot. */
  launch(): Promise<void>;
  /** Whether the cluster is being stopped (its end is then expected). */
  stopping(): boolean;
  lastLogLines(): Promise<string[]>;
  onEvent(event: RestartEvent): void;
}

export interface Restarts {
  state(): 'running' | 'restarting' | 'failed';
  /** Why it was given up (the failed event's `reason`). */
  reason(): string | undefined;
  /** Resolves once no restart is under way. */
  settled(): Promise<void>;
}

export function superviseRestarts(options: RestartOptions): Restarts {
  let state: 'running' | 'restarting' | 'failed' = 'running';
  let reason: string | undefined;
  let restarting: Promise<void> = Promise.resolve();
  const ends: number[] = [];

  const giveUp = (error: ConfigurationError, why: string) => {
    state = 'failed';
    reason = `the embedded PostgreSQL ${why}`;
    options.onEvent({ type: 'failed', error, reason });
  };

  const restart = async (exit: PostmasterExit): Promise<void> => {
    state = 'restarting';
    const now = Date.now();
    ends.push(now);
    while (ends[0]! <= now - WINDOW_MS) ends.shift();
    const lines = await options.lastLogLines();
    if (ends.length > MOST_ENDS) {
      const why = `ended unexpectedly ${ends.length} times within 5 minutes, the last time with ${describeExit(exit)}`;
      return giveUp(new ConfigurationError(`The embedded PostgreSQL ${why}; ${describeLines(lines)}`), why);
    }
    options.onEvent({ type: 'ended', exit, lines });
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      if (options.stopping()) return;
      try {
        await options.launch();
        break;
      } catch (err) {
        const message = (err as Error).message;
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined || options.stopping()) {
          const why = `ended unexpectedly (${describeExit(exit)}) and could not be started again`;
          return giveUp(new ConfigurationError(`The embedded PostgreSQL ${why}: ${message}`), why);
        }
        options.onEvent({ type: 'retrying', error: message, inMs: delay });
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
    if (options.stopping()) return;
    state = 'running';
    options.onEvent({ type: 'restarted', ms: Date.now() - started });
    watch(options.current());
  };

  const watch = (postmaster: Postmaster) => {
    void postmaster.exited.then((exit) => {
      if (options.stopping() || options.current() !== postmaster) return;
      restarting = restart(exit);
    });
  };
  watch(options.current());
  return { state: () => state, reason: () => reason, settled: () => restarting };
}
