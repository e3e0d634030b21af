/**
 * Where each caller's last write left the primary's WAL, so that the caller's reads go to a replica
 * only once it has replayed that far (db/replicas.ts `pick`): every client reads its own writes.
 * Positions are learned from the writes this process serves and, through PostgreSQL notifications
 * (channel `benchmarks_writes`, db/change-listener.ts), from those of every other process. A
 * position is forgotten after `ttlMs` (the replicas' lag bound): by then every replica in use has
 * replayed it.
 */
export class WritePositions {
  readonly #positions = new Map<string, { lsn: bigint; at: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 100_000,
  ) {}

  /** `identity` (`iss sub`) wrote; the primary was at `lsn` after it. */
  record(identity: string, lsn: bigint): void {
    const known = this.#positions.get(identity);
    this.#positions.delete(identity);
    this.#positions.set(identity, { lsn: known && known.lsn > lsn ? known.lsn : lsn, at: Date.now() });
    while (this.#positions.size > this.maxEntries) this.#positions.delete(this.#positions.keys().next().value!);
  }

  /** The position a replica must have replayed for `identity` to read there; null: any will do. */
  required(identity: string): bigint | null {
    const known = this.#positions.get(identity);
    if (!known) return null;
    if (Date.now() - known.at > this.ttlMs) {
      this.#positions.delete(identity);
      return null;
    }
    return known.lsn;
  }

  get size(): number {
    return this.#positions.size;
  }
}
