/**
 * Where a request reads with read replicas (db/replicas.ts): writes, and everything while no replica
 * is usable, go to the primary; a read to a replica that has replayed the caller's last write.
 * Where each caller's last write left the WAL is learned from this process's writes and, through
 * notifications (`benchmarks_writes`), every other's; it is forgotten after the lag bound.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import type { DisposalStack } from '../core/disposal.ts';
import type { Logger } from '../core/logger.ts';
import { WRITES_CHANNEL } from './change-listener.ts';
import { connect, type PoolOptions } from './orm.ts';
import { databaseLabel, parseLsn, ReadReplicas, REPLICA_DEFAULTS } from './replicas.ts';

export class ReadRouting {
  readonly #positions: LRUCache<string, bigint>;

  constructor(
    readonly primary: MikroORM,
    readonly replicas: ReadReplicas,
    readonly logger: Logger,
    maxLagMs: number,
    maxEntries = 100_000,
  ) {
    // By size rather than `max`, which allocates room for every entry at once (3 MB, 12 ms a start).
    this.#positions = new LRUCache({ maxSize: maxEntries, sizeCalculation: () => 1, ttl: Math.max(1, maxLagMs) });
  }

  /**
   * One pool per replica, each on `stack` once connected (all are waited for before a failure is
   * thrown), checked once before this returns, then every second. Undefined without replicas.
   */
  static async start(
    urls: readonly string[],
    maxLagMs: number,
    primary: MikroORM,
    logger: Logger,
    pool: PoolOptions,
    stack: DisposalStack,
  ): Promise<ReadRouting | undefined> {
    if (!urls.length) return undefined;
    const outcomes = await Promise.allSettled(
      urls.map(async (url) => {
        const orm = await connect(url, logger, pool);
        stack.defer(`replica pool ${databaseLabel(url)}`, () => orm.close(true));
        return { url, orm };
      }),
    );
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed) throw failed.reason;
    const orms = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    const replicas = stack.use(
      'replica checks',
      new ReadReplicas(primary, orms, logger, { maxLagMs, checkMs: REPLICA_DEFAULTS.checkMs }),
      (r) => r.close(),
    );
    await replicas.start();
    return new ReadRouting(primary, replicas, logger, maxLagMs);
  }

  /** The database of a read; `caller` names a recently verified caller (null: a token not known, maybe a writer's: the primary). */
  async readFrom(caller?: () => Promise<string | null>): Promise<MikroORM> {
    let minLsn: bigint | null = null;
    if (this.replicas.primaryUp && caller) {
      const identity = await caller();
      if (!identity) return this.primary;
      minLsn = this.#positions.get(identity, { updateAgeOnGet: false }) ?? null;
    }
    return this.replicas.pick(minLsn) ?? this.primary;
  }

  /** After a write of `identity` (`iss sub`): where the primary's WAL is; this process and every other learn it. */
  async wrote(identity: string): Promise<void> {
    try {
      const [row] = await this.primary.em
        .fork()
        .execute<{ lsn: string }[]>(
          `select pg_current_wal_lsn()::text as lsn, pg_notify('${WRITES_CHANNEL}', ? || ' ' || pg_current_wal_lsn()::text)`,
          [identity],
        );
      this.#record(identity, parseLsn(row!.lsn));
    } catch (err) {
      // The primary is gone: so are this caller's writes to read; nothing to record.
      this.logger.debug('write position not recorded', { error: (err as Error).message });
    }
  }

  /** `<iss> <sub> <lsn>` of a notification on benchmarks_writes (`wrote` sends them); anything else is ignored. */
  noticed(payload: string): void {
    const at = payload.lastIndexOf(' ');
    if (at <= 0) return;
    try {
      this.#record(payload.slice(0, at), parseLsn(payload.slice(at + 1)));
    } catch {
      // not a position: not ours
    }
  }

  #record(identity: string, lsn: bigint): void {
    const known = this.#positions.get(identity);
    this.#positions.set(identity, known !== undefined && known > lsn ? known : lsn);
  }
}
