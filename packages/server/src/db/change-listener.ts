/**
 * Listens, on a connection of its own, to the database's change notifications (`benchmarks_changes`,
 * sent at commit by the triggers of migration 20261125000000_shared_state for every write to results,
 * their tags and the catalogue, whoever made it), so that the process forgets its remembered totals
 * within milliseconds of a write through any other. A dropped connection is opened again (1 s,
 * doubling to 30 s); what was sent meanwhile is lost, so every (re)connection reports a change of `*`.
 */
import type pg from 'pg';
import { ownClient } from './own-connection.ts';
import type { Logger } from '../core/logger.ts';

export const CHANGES_CHANNEL = 'benchmarks_changes';
/** Sent after each write request when read replicas are used: `<iss> <sub> <lsn>` (db/read-routing.ts). */
export const WRITES_CHANNEL = 'benchmarks_writes';

export interface ChangeHandlers {
  /** A table name, or `*` when notifications may have been missed; for results, the benchmarks written to when known. */
  change(table: string, benchmarks?: string[]): void;
  /** A write request of a caller, with the primary's WAL position after it. */
  write?(payload: string): void;
}

export class ChangeListener {
  #client: pg.Client | null = null;
  #retryMs = 1000;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  /** True while notifications are being received (tests and /ready diagnostics). */
  listening = false;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
    private readonly handlers: ChangeHandlers,
  ) {}

  /** Connects and listens; resolves once listening (or after the first failure, retrying in the background). */
  async start(): Promise<void> {
    if (this.#closed) return;
    const client = ownClient('listener', { connectionString: this.url, connectionTimeoutMillis: 5000 });
    this.#client = client;
    const lost = (reason: string) => {
      if (this.#client !== client) return;
      this.#client = null;
      this.listening = false;
      client.end().catch(() => {});
      if (this.#closed) return;
      this.logger.warn('change notifications lost; totals fall back to their lifetime until reconnected', {
        reason,
        retryInMs: this.#retryMs,
      });
      this.#timer = setTimeout(() => {
        this.#timer = null;
        void this.start();
      }, this.#retryMs);
      this.#timer.unref();
      this.#retryMs = Math.min(30_000, this.#retryMs * 2);
    };
    client.on('error', (err) => lost(err.message));
    client.on('end', () => lost('connection ended'));
    client.on('notification', (message) => {
      if (message.channel === CHANGES_CHANNEL) {
        // `<table>`, or `result <benchmark id>…` (migration 20261203000000_result_notifications).
        const [table, ...benchmarks] = (message.payload || '*').split(' ');
        this.handlers.change(table!, benchmarks.length ? benchmarks : undefined);
      } else if (message.channel === WRITES_CHANNEL && message.payload) this.handlers.write?.(message.payload);
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANGES_CHANNEL}`);
      if (this.handlers.write) await client.query(`listen ${WRITES_CHANNEL}`);
      this.listening = true;
      this.#retryMs = 1000;
      this.handlers.change('*');
    } catch (err) {
      lost((err as Error).message);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    this.listening = false;
    await client?.end().catch(() => {});
  }
}
