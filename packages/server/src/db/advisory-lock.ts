/**
 * Advisory locks that coordinate the processes sharing one database (docs/deploy.md, "Many
 * processes"): session-level, on a connection of their own, so a process that crashes leaves none.
 * They are only tried, again after a pause, never waited for in a statement: that session would
 * hold a snapshot, which `create index concurrently` under the lock on another session waits for.
 */
import { createHash } from 'node:crypto';

/** Runs one statement with bound parameters on the lock's connection; returns its rows. */
export type Run = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/** The two int4 keys of `pg_advisory_lock(int, int)`. */
export type LockKey = readonly [number, number];

/** The first key of every lock of this server ("benc"), so that other users of advisory locks keep theirs. */
const FIXED = 0x62656e63;
/** The first key of the locks derived from a name ("bend"). */
const NAMED = 0x62656e64;

/** Held while the migrations are applied: the other processes wait, then find nothing pending. */
export const MIGRATION_LOCK: LockKey = [FIXED, 1];

/** The lock of a named object (the origin import): the first 32 bits of the name's SHA-256. */
export function lockKeyOf(name: string): LockKey {
  return [NAMED, createHash('sha256').update(name).digest().readInt32BE(0)];
}

/** Takes the lock when no other session holds it; true when this session holds it now. */
export async function tryLock(run: Run, key: LockKey): Promise<boolean> {
  const [row] = await run('select pg_try_advisory_lock($1::int, $2::int) as locked', [key[0], key[1]]);
  return row?.locked === true;
}

/** Releases a lock this session holds (ending the connection releases it too). */
export async function unlock(run: Run, key: LockKey): Promise<void> {
  await run('select pg_advisory_unlock($1::int, $2::int)', [key[0], key[1]]);
}

export interface WaitOptions {
  /** Give up at this time (ms since the epoch; Infinity: never). */
  until: number;
  /** How long to pause between tries. */
  pollMs?: number;
  /** Called once, when the first try finds the lock held by another session. */
  onWait?: () => void;
  /** Stop trying when this turns true (the process is stopping). */
  cancelled?: () => boolean;
}

const POLL_MS = 250;

/** Tries the lock until it is taken (true) or `until` passes (false). */
export async function lockWithin(run: Run, key: LockKey, options: WaitOptions): Promise<boolean> {
  for (let attempt = 0; ; attempt++) {
    if (await tryLock(run, key)) return true;
    if (attempt === 0) options.onWait?.();
    const pause = Math.min(options.pollMs ?? POLL_MS, options.until - Date.now());
    if (pause <= 0 || options.cancelled?.()) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
