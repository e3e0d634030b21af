/**
 * What a start finds of an earlier embedded PostgreSQL in its data directory, and what it does:
 * - no `postmaster.pid`, or one naming a process that is not this cluster's postmaster (as after a
 *   container restart): nothing runs; such a file is removed (PostgreSQL would take it for a live one);
 * - the postmaster runs under a watchdog (db/postmaster.ts) whose server runs, or under a Node
 *   process (a server older than the watchdog): in use, and the start ends with one clear line;
 * - under a watchdog whose server has ended: the watchdog is stopping it, and the start waits;
 * - under anything else (init, the server and the watchdog both killed): left over, and stopped.
 */
import { readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pause } from '../core/abort.ts';
import { WATCHDOG_NAME } from './postmaster.ts';
import { processInfo, type ProcessInfo } from './processes.ts';

export type Leftover =
  | { state: 'none' }
  | { state: 'stale'; pid: number }
  | { state: 'in use'; pid: number; owner: number }
  | { state: 'stopping'; pid: number }
  | { state: 'orphan'; pid: number };

/** Looks at `databaseDir`'s postmaster.pid and the processes it leads to; changes nothing. */
export async function findLeftover(databaseDir: string): Promise<Leftover> {
  const pid = Number((await readFile(join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (!pid) return { state: 'none' };
  const postmaster = processInfo(pid);
  if (!postmaster || !isPostmasterOf(postmaster, databaseDir)) return { state: 'stale', pid };
  const parent = processInfo(postmaster.ppid);
  if (parent && postmaster.ppid > 1 && parent.command.includes(WATCHDOG_NAME)) {
    const server = processInfo(parent.ppid);
    return server && parent.ppid > 1 ? { state: 'in use', pid, owner: server.pid } : { state: 'stopping', pid };
  }
  if (parent && postmaster.ppid > 1 && isNode(parent)) return { state: 'in use', pid, owner: parent.pid };
  return { state: 'orphan', pid };
}

function isPostmasterOf(info: ProcessInfo, databaseDir: string): boolean {
  return / -D /.test(info.command) && info.command.includes(` -D ${databaseDir} `) && !info.command.includes(WATCHDOG_NAME);
}

function isNode(info: ProcessInfo): boolean {
  const program = info.command.split(' ')[0]!.split('/').pop()!;
  return /^(node|nodejs|benchmarks-server)(\.exe)?$/.test(program);
}

export interface SettleOptions {
  /** Told what was done, for the log. */
  onStopped?(pid: number): void;
  /** How long the postmaster may take to stop before it is killed (default 30 s). */
  graceMs?: number;
  /** Ends the waiting at once, rejecting with its reason; a cluster being stopped goes on stopping. */
  signal?: AbortSignal;
}

/** Clears the way for a new postmaster in `databaseDir` (above); returns what it found, a live server's cluster left alone. */
export async function settleLeftover(databaseDir: string, options: SettleOptions = {}): Promise<Leftover> {
  const found = await findLeftover(databaseDir);
  const graceMs = options.graceMs ?? 30_000;
  if (found.state === 'stale') {
    await unlink(join(databaseDir, 'postmaster.pid')).catch(() => {});
  } else if (found.state === 'stopping') {
    await ended(found.pid, graceMs + 5_000, options.signal);
  } else if (found.state === 'orphan') {
    // PostgreSQL's fast shutdown, then its immediate shutdown, then a kill.
    for (const [signal, ms] of [
      ['SIGINT', graceMs],
      ['SIGQUIT', 5_000],
      ['SIGKILL', 5_000],
    ] as const) {
      try {
        process.kill(found.pid, signal);
      } catch {
        break;
      }
      if (await ended(found.pid, ms, options.signal)) break;
    }
    options.onStopped?.(found.pid);
  }
  return found;
}

/** Whether `pid` ended (or stopped being a process) within `ms`. */
async function ended(pid: number, ms: number, signal?: AbortSignal): Promise<boolean> {
  for (const until = Date.now() + ms; Date.now() < until; await pause(50, signal)) {
    if (!processInfo(pid)) return true;
  }
  return !processInfo(pid);
}
