/**
 * A connection outside the pool, for what must answer when every pooled one is busy: `/ready` and
 * the cancels of statements whose client went away. Connected on first use and after a failure; its
 * statements are short (`timeoutMs`) and run one at a time, and the cancels asked for in one turn
 * of the event loop go in one statement (many clients leaving at once cost one round trip).
 */
import type pg from 'pg';
import { ownClient } from './own-connection.ts';
import { pendingMigrations } from '../migrations/index.ts';

export class DatabaseControl {
  #client: Promise<pg.Client> | null = null;
  #readiness: Promise<string[]> | null = null;
  /** The last statement queued: the next one starts when it has ended. */
  #tail: Promise<unknown> = Promise.resolve();
  /** Backends to cancel in the statement about to be sent, and its answer. */
  #cancelling: { pids: Set<number>; done: Promise<Set<number>> } | null = null;
  #closed = false;

  constructor(
    private readonly url: string,
    /** Connecting, and each statement, give up after this long. */
    private readonly timeoutMs = 1000,
  ) {}

  #connect(): Promise<pg.Client> {
    if (this.#closed) return Promise.reject(new Error('The database control connection is closed.'));
    if (this.#client) return this.#client;
    const client = ownClient('control', {
      connectionString: this.url,
      connectionTimeoutMillis: this.timeoutMs,
      statement_timeout: this.timeoutMs,
      // The server may not answer at all (stopped without closing the socket).
      query_timeout: this.timeoutMs + 500,
    });
    const connecting = client.connect().then(
      () => client,
      (err) => {
        forget();
        client.end().catch(() => {});
        throw err;
      },
    );
    const forget = () => {
      if (this.#client === connecting) this.#client = null;
    };
    client.on('error', forget);
    client.on('end', forget);
    this.#client = connecting;
    return connecting;
  }

  /** Runs the statement once the statements queued before it have ended. */
  #query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
    const run = this.#tail.then(() => this.#send<R>(sql, params));
    this.#tail = run.catch(() => {});
    return run;
  }

  async #send<R extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<R[]> {
    const connecting = this.#connect();
    const client = await connecting;
    try {
      return (await client.query<R>(sql, params)).rows;
    } catch (err) {
      // A statement that timed out on this side (no SQLSTATE) leaves the connection in an unknown state.
      if (!(err as { code?: string }).code) {
        if (this.#client === connecting) this.#client = null;
        client.end().catch(() => {});
      }
      throw err;
    }
  }

  /** The migrations not applied yet; concurrent calls share one statement (a flood of `/ready` costs one query at a time). */
  pendingMigrations(): Promise<string[]> {
    this.#readiness ??= pendingMigrations((sql) => this.#query(sql)).finally(() => {
      this.#readiness = null;
    });
    return this.#readiness;
  }

  /** Cancels the statements running on these backends; returns how many were signalled. */
  async cancel(pids: number[]): Promise<number> {
    if (!this.#cancelling) {
      const batch = new Set<number>();
      const done = (async () => {
        await new Promise((resolve) => setImmediate(resolve)); // the calls of this turn join the batch
        if (this.#cancelling?.pids === batch) this.#cancelling = null;
        const rows = await this.#query<{ pid: number }>('select pid from unnest($1::int[]) pid where pg_cancel_backend(pid)', [[...batch]]);
        return new Set(rows.map((r) => r.pid));
      })();
      this.#cancelling = { pids: batch, done };
    }
    const { pids: batch, done } = this.#cancelling;
    for (const pid of pids) batch.add(pid);
    const signalled = await done;
    return pids.filter((pid) => signalled.has(pid)).length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = null;
    if (client) await client.then((c) => c.end()).catch(() => {});
  }
}
