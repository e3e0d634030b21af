/**
 * Sends the items of one segment through the SDK's `results.upload`: a batch (POST /results:batch,
 * refused items reported and the rest sent again) or, with `--batch-size 1`, one request per result. Each request
 * carries an Idempotency-Key derived from its content and places (keys.ts). After a 401/403 or a
 * lost connection the upload stops: what is not sent yet is skipped, since it would fail the same way.
 */
import type { Client, UploadItem } from '@benchmarks/sdk';
import { CLIENT_RETRIES, type Context } from '../context.ts';
import type { Prepared } from './items.ts';
import { placeOf, uploadKey } from './keys.ts';

/** Thrown instead of sending an item once the upload was stopped. */
export class Skipped extends Error {}

/** `replayed`: the server had stored it already (the same request within 24 h) and did not store it twice. */
export type Outcome = { ok: true; id: string; replayed?: boolean } | { ok: false; error: unknown };

export class Sender {
  /** Why the upload stopped: 'interrupted', 401, 403 or the network error; undefined while it goes on. */
  stopped: unknown;
  readonly #client: Client;
  readonly #server: string;
  readonly #places = new WeakMap<UploadItem, string>();
  /** The items of each request in flight, by key, and the items whose request was answered by a replay. */
  readonly #requests = new Map<string, readonly UploadItem[]>();
  readonly #replayed = new WeakSet<UploadItem>();

  constructor(
    ctx: Context,
    private readonly batchSize: number,
  ) {
    // The SDK retries a request whose connection was lost (its key makes that safe): the upload stops
    // only once one request failed on every attempt.
    const lostAttempts = new Map<string, number>();
    this.#client = ctx.newClient(
      () => ctx.tokens.get(),
      (outcome, key, replayed) => {
        if (replayed && key !== undefined) for (const item of this.#requests.get(key) ?? []) this.#replayed.add(item);
        if (outcome === 401 || outcome === 403) this.stopped ??= outcome;
        else if (outcome instanceof Error) {
          const lost = (lostAttempts.get(key ?? '') ?? 0) + 1;
          lostAttempts.set(key ?? '', lost);
          if (key === undefined || lost > CLIENT_RETRIES) this.stopped ??= outcome;
        } else if (key !== undefined) lostAttempts.delete(key);
      },
    );
    this.#server = ctx.apiBase;
  }

  /** One outcome per item, in order; never rejects. */
  async send(items: readonly Prepared[]): Promise<Outcome[]> {
    const uploads = items.map((p) => {
      this.#places.set(p.upload!, placeOf(p.raw));
      return p.upload!;
    });
    // Asked once per request, before its first attempt: where a stopped upload skips what it has not sent.
    const idempotencyKey = (batch: readonly UploadItem[], operation: string) => {
      if (this.stopped !== undefined) throw new Skipped();
      const key = uploadKey(
        this.#server,
        operation,
        batch.map((item) => ({ place: this.#places.get(item) ?? '', item })),
      );
      this.#requests.set(key, batch);
      keys.push(key);
      return key;
    };
    const keys: string[] = [];
    const replayed = (outcome: Outcome, i: number): Outcome =>
      outcome.ok && this.#replayed.has(uploads[i]!) ? { ...outcome, replayed: true } : outcome;
    try {
      // One method whatever the batch size: `batchSize` 1 sends each result on its own (POST /results).
      const report = await this.#client.results.upload(uploads, { batchSize: this.batchSize, concurrency: 1, idempotencyKey });
      return report.outcomes.map((o, i) => replayed(o.ok ? { ok: true, id: o.id } : { ok: false, error: o.error }, i));
    } catch (error) {
      return uploads.map(() => ({ ok: false, error }));
    } finally {
      for (const key of keys) this.#requests.delete(key);
    }
  }
}
