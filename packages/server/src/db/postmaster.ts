/**
 * The embedded PostgreSQL's postmaster, under a watchdog so that it never outlives this process,
 * however it ends (SIGKILL and crashes included).
 *
 * The watchdog is a POSIX shell in a process group of its own (Ctrl-C reaches this process alone,
 * and the server decides when the database stops). It starts the postmaster and holds the read end
 * of a pipe whose only write end is this process's. When that end closes (a stop, or this process
 * ended), it asks for a fast shutdown (SIGINT), an immediate one (SIGQUIT) 30 s later, and kills it
 * 5 s after that. When the postmaster ends, the watchdog ends its guard and exits with its status.
 * (The backends of a killed postmaster notice it is gone and end by themselves.)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { constants } from 'node:os';

/** The name the watchdog shows in `ps` (its `$0`): db/leftover.ts recognises it by this. */
export const WATCHDOG_NAME = 'benchmarks-postgres-watchdog';

// `"$@"` is the postmaster's command line; only the guard holds the pipe (fd 3), and it starts
// before the pid is written, so that a failing write (this process gone) leaves the postmaster watched.
const SCRIPT = [
  'exec 3<&0 </dev/null',
  '"$@" 3<&- &',
  'pm=$!',
  '(read -r _ <&3; kill -INT "$pm"; sleep 30; kill -QUIT "$pm"; sleep 5; kill -KILL "$pm") 2>/dev/null &',
  'exec 3<&-',
  'echo "$pm"',
  'wait "$pm"',
  'code=$?',
  "trap '' TERM",
  'kill -TERM 0 2>/dev/null',
  'exit "$code"',
].join('\n');

export interface PostmasterExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How the postmaster ended: the watchdog exits with its status, 128 + the signal's number for a signal. */
export function describeExit(exit: PostmasterExit): string {
  if (exit.signal) return `signal ${exit.signal}`;
  const signal =
    exit.code !== null && exit.code > 128 ? Object.entries(constants.signals).find(([, n]) => n === exit.code! - 128) : undefined;
  return signal ? `signal ${signal[0]}` : `exit code ${exit.code}`;
}

export interface Postmaster {
  /** The postmaster's process id (postmaster.pid names it once it runs). */
  pid: number;
  /** Settles when the postmaster (and so its watchdog) has ended. */
  exited: Promise<PostmasterExit>;
  /** Whether it still runs. */
  running(): boolean;
  /** Fast shutdown (sessions rolled back), the group killed past `graceMs`; resolves once it has ended. */
  stop(graceMs: number): Promise<void>;
}

export interface PostmasterOptions {
  /** The user and group to run as (PostgreSQL refuses to run as root). */
  uid?: number;
  gid?: number;
  /** Receives its stderr (its log), chunk by chunk. */
  onOutput(chunk: string): void;
}

/** Starts `binary` with `args` under the watchdog; resolves once its process id is known. */
export async function spawnPostmaster(binary: string, args: string[], options: PostmasterOptions): Promise<Postmaster> {
  const watchdog = spawn('/bin/sh', ['-c', SCRIPT, WATCHDOG_NAME, binary, ...args], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    // The messages PostgreSQL writes before it reads its settings, in English: db/postgres-log.ts reads severities.
    env: { ...process.env, LC_MESSAGES: 'C' },
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid }),
  });
  const exited = new Promise<PostmasterExit>((resolve) => watchdog.once('exit', (code, signal) => resolve({ code, signal })));
  watchdog.stderr!.setEncoding('utf8').on('data', options.onOutput);
  // Nothing is written to it: it only has to stay open while this process wants the cluster.
  watchdog.stdin!.on('error', () => {});
  const pid = await firstLine(watchdog);
  let ended = false;
  void exited.then(() => (ended = true));
  return {
    pid,
    exited,
    running: () => !ended,
    stop: async (graceMs) => {
      if (ended) return;
      watchdog.stdin!.end();
      const timer = setTimeout(() => killGroup(watchdog), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The pid the watchdog writes first; an error when it ends before (the shell could not start it). */
async function firstLine(watchdog: ChildProcess): Promise<number> {
  let text = '';
  const stdout = watchdog.stdout!.setEncoding('utf8');
  const line = new Promise<number>((resolve) => {
    const onData = (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\n');
      if (end < 0) return;
      stdout.off('data', onData);
      stdout.resume(); // whatever PostgreSQL writes to stdout is not read
      resolve(Number(text.slice(0, end)));
    };
    stdout.on('data', onData);
  });
  const failed = Promise.race([once(watchdog, 'error'), once(watchdog, 'exit')]).then((event) => {
    throw new Error(event[0] instanceof Error ? event[0].message : 'the watchdog shell ended before it started the postmaster');
  });
  return Promise.race([line, failed]);
}

function killGroup(watchdog: ChildProcess): void {
  try {
    process.kill(-watchdog.pid!, 'SIGKILL');
  } catch {
    // already gone
  }
}
