/**
 * Read replicas (DATABASE_READ_URL): streaming standbys of the primary that serve reads.
 * - Health and lag: every `checkMs` the primary's WAL position is sampled and each replica's
 *   replayed position read. A replica holds every commit up to the last sample at or below its
 *   position, so its lag is at most the time since that sample. One that does not answer, or lags
 *   more than `maxLagMs`, gets no reads. While the primary does not answer, replicas are used
 *   whatever their lag: stale answers beat none.
 * - Reading one's own writes: `pick(minLsn)` only returns a replica checked at or past `minLsn`
 *   (the primary's position after the caller's last write, db/read-routing.ts).
 * - Each replica has its own pool and its own control connection (for cancels).
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../core/logger.ts';
import { DatabaseControl } from './control.ts';

/** A WAL position (`16/B374D848`) as a number: comparable. */
export function parseLsn(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

export interface ReplicaOptions {
  /** A replica further behind than this gets no reads (MAX_REPLICA_LAG). */
  maxLagMs: number;
  /** How often positions are read. */
  checkMs: number;
}

export const REPLICA_DEFAULTS: ReplicaOptions = { maxLagMs: 10_000, checkMs: 1_000 };

interface Replica {
  /** Where it is, without credentials (for logs). */
  label: string;
  url: string;
  orm: MikroORM;
  control: DatabaseControl;
  /** Last replayed position read, and whether the last check found it usable. */
  position: bigint | null;
  healthy: boolean;
  lagMs: number | null;
}

/** Primary positions kept for lag estimates: enough for any lag bound up to 10 minutes. */
const MAX_SAMPLES = 600;

/** host:port/database of a URL, without user or password. */
export function databaseLabel(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || 5432}${u.pathname}`;
  } catch {
    return 'replica';
  }
}

export class ReadReplicas {
  readonly #replicas: Replica[];
  readonly #samples: { at: number; lsn: bigint }[] = [];
  #primaryUp = true;
  #next = 0;
  #timer: NodeJS.Timeout | null = null;
  #checking: Promise<void> | null = null;
  #closed = false;

  constructor(
    private readonly primary: MikroORM,
    replicas: { url: string; orm: MikroORM }[],
    private readonly logger: Logger,
    readonly options: ReplicaOptions = REPLICA_DEFAULTS,
  ) {
    this.#replicas = replicas.map(({ url, orm }) => ({
      label: databaseLabel(url),
      url,
      orm,
      control: new DatabaseControl(url),
      position: null,
      healthy: false,
      lagMs: null,
    }));
  }

  /** Checks once, then every `checkMs` in the background. */
  async start(): Promise<void> {
    await this.check();
    const tick = () => {
      this.#timer = setTimeout(() => {
        void this.check().finally(() => {
          if (!this.#closed) tick();
        });
      }, this.options.checkMs);
      this.#timer.unref();
    };
    tick();
  }

  /** Reads the positions now (one check at a time). */
  check(): Promise<void> {
    this.#checking ??= this.#check().finally(() => {
      this.#checking = null;
    });
    return this.#checking;
  }

  async #check(): Promise<void> {
    const now = Date.now();
    try {
      const [row] = await this.primary.em.fork().execute<{ lsn: string }[]>('select pg_current_wal_lsn()::text as lsn');
      this.#samples.push({ at: now, lsn: parseLsn(row!.lsn) });
      if (this.#samples.length > MAX_SAMPLES) this.#samples.shift();
      this.#primaryUp = true;
    } catch {
      this.#primaryUp = false;
    }
    await Promise.all(this.#replicas.map((replica) => this.#checkReplica(replica, now)));
  }

  async #checkReplica(replica: Replica, now: number): Promise<void> {
    const was = replica.healthy;
    try {
      // A standby's replayed position; a server that is not one (a read URL naming a primary) is current.
      const [row] = await replica.orm.em
        .fork()
        .execute<{ lsn: string }[]>('select coalesce(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text as lsn');
      replica.position = parseLsn(row!.lsn);
      replica.lagMs = this.#lagOf(replica.position, now);
      replica.healthy = !this.#primaryUp || (replica.lagMs !== null && replica.lagMs <= this.options.maxLagMs);
    } catch (err) {
      replica.healthy = false;
      replica.lagMs = null;
      if (was)
        this.logger.warn('read replica not answering: reads go elsewhere', { replica: replica.label, error: (err as Error).message });
      return;
    }
    if (was !== replica.healthy) {
      if (replica.healthy) this.logger.info('read replica in use', { replica: replica.label, lagMs: replica.lagMs });
      else this.logger.warn('read replica lagging: reads go elsewhere', { replica: replica.label, lagMs: replica.lagMs });
    }
  }

  /** How far behind a position is: the time since the last primary sample it has reached (null: before every sample). */
  #lagOf(position: bigint, now: number): number | null {
    for (let i = this.#samples.length - 1; i >= 0; i--) {
      if (this.#samples[i]!.lsn <= position) return i === this.#samples.length - 1 ? 0 : now - this.#samples[i + 1]!.at;
    }
    return this.#samples.length === 0 ? 0 : null;
  }

  /** A usable replica that has replayed `minLsn` (round robin), or null: read from the primary. */
  pick(minLsn: bigint | null = null): MikroORM | null {
    const n = this.#replicas.length;
    for (let k = 0; k < n; k++) {
      const replica = this.#replicas[(this.#next + k) % n]!;
      if (!replica.healthy) continue;
      if (minLsn !== null && (replica.position === null || replica.position < minLsn)) continue;
      this.#next = (this.#next + k + 1) % n;
      return replica.orm;
    }
    return null;
  }

  /** The control connection of the database at `url` (the replica's own), or null for another. */
  controlOf(url: string): DatabaseControl | null {
    return this.#replicas.find((r) => r.url === url)?.control ?? null;
  }

  get primaryUp(): boolean {
    return this.#primaryUp;
  }

  /** Stops checking and closes the control connections; the replicas' ORMs are their opener's to close. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#checking?.catch(() => {});
    await Promise.all(this.#replicas.map((replica) => replica.control.close()));
  }
}
