/**
 * Where each caller's last write left the primary's WAL, so that the caller's reads go to a replica
 * only once it has replayed that far (db/replicas.ts `pick`): every client reads its own writes.
 * Positions are learned from the writes this process serves and, through PostgreSQL notifications
 * (channel `benchmarks_writes`, db/change-listener.ts), from those of every other process. A
 * position is forgotten after `ttlMs` (the replicas' lag bound): by then every replica in use has
 * replayed it.
 */
import { LRUCache } from 'lru-cache';

export class WritePositions {
  readonly #positions: LRUCache<string, bigint>;

  constructor(ttlMs: number, maxEntries = 100_000) {
    // Bounded by size, one per entry, rather than by `max`, which allocates room for every entry at
    // once (about 3 MB and 12 ms of each start for 100,000 that most servers never see).
    this.#positions = new LRUCache({ maxSize: maxEntries, sizeCalculation: () => 1, ttl: Math.max(1, ttlMs) });
  }

  /** `identity` (`iss sub`) wrote; the primary was at `lsn` after it. */
  record(identity: string, lsn: bigint): void {
    const known = this.#positions.get(identity);
    this.#positions.set(identity, known !== undefined && known > lsn ? known : lsn);
  }

  /** The position a replica must have replayed for `identity` to read there; null: any will do. */
  required(identity: string): bigint | null {
    return this.#positions.get(identity, { updateAgeOnGet: false }) ?? null;
  }

  get size(): number {
    return this.#positions.size;
  }
}
