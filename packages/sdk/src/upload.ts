import type { Body, Query, Reply } from './types.ts';
import { MAX_BATCH_ITEMS } from './contract/results.ts';

/**
 * One result to upload: where and when it ran (the `createResult` query) and its `json`.
 * @example
 * const item: UploadItem = { benchmark_id, flavor_id, execution_datetime: '2025-01-01T10:00:00Z', json: { score: 1 } };
 */
export type UploadItem = Query<'createResult'> & { json: Body<'createResult'> };

/**
 * The outcome of one item of {@link uploadMany}, at its `index` in the input.
 * @example
 * const failed = outcomes.filter((o) => !o.ok).map((o) => items[o.index]);
 */
export type UploadOutcome = { index: number; ok: true; result: Reply<'createResult'> } | { index: number; ok: false; error: unknown };

/**
 * Progress after each finished item.
 * @example
 * const onProgress = ({ done, total, failed }: UploadProgress) => process.stderr.write(`\r${done}/${total} (${failed} failed)`);
 */
export interface UploadProgress {
  done: number;
  total: number;
  failed: number;
}

/**
 * Options of `client.results.uploadMany`.
 * @example
 * await client.results.uploadMany(items, { concurrency: 4, onProgress: (p) => console.error(p.done) });
 */
export interface UploadOptions {
  /** Uploads in flight at once (default 8), over the client's reused connections. */
  concurrency?: number | undefined;
  /** Called after each item; an exception it throws is ignored, so it cannot stop the batch. */
  onProgress?: ((progress: UploadProgress) => void) | undefined;
  /**
   * The `Idempotency-Key` of each request, from what it sends: its items (one for `createResult`)
   * and the operation. Default (or when it returns `undefined`): a random key per request. A key
   * derived from the content makes running the same upload again within 24 h store nothing twice.
   * An exception it throws fails the items of that request, which is then not sent.
   */
  idempotencyKey?: ((items: readonly UploadItem[], operation: 'createResult' | 'createResults') => string | undefined) | undefined;
}

/**
 * Runs `create` over every item with at most `concurrency` in flight, never stopping on a failure,
 * and resolves to one outcome per item, in input order. Each upload carries an `Idempotency-Key`, so
 * the client itself retries it after a lost answer, a timeout or a 5xx; what still fails can be sent
 * again with the same key (see `UploadOptions.idempotencyKey`) without storing it twice.
 * @example
 * const outcomes = await uploadMany(items, (item) => client.results.create(item, item.json), {});
 */
export async function uploadMany<I, R>(
  items: readonly I[],
  create: (item: I) => Promise<R>,
  options: UploadOptions = {},
): Promise<Array<{ index: number; ok: true; result: R } | { index: number; ok: false; error: unknown }>> {
  const concurrency = options.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError('concurrency must be a positive integer');
  const outcomes: Array<{ index: number; ok: true; result: R } | { index: number; ok: false; error: unknown }> = new Array(items.length);
  let next = 0;
  let done = 0;
  let failed = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      try {
        outcomes[index] = { index, ok: true, result: await create(items[index]!) };
      } catch (error) {
        failed++;
        outcomes[index] = { index, ok: false, error };
      }
      done++;
      try {
        options.onProgress?.({ done, total: items.length, failed });
      } catch {
        // A progress display must not decide the fate of the batch.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return outcomes;
}

/**
 * The outcome of one item of {@link uploadInBatches}, at its `index` in the input: the id of the
 * stored result, or why it was not stored.
 * @example
 * const ids = outcomes.filter((o) => o.ok).map((o) => o.id);
 */
export type BatchUploadOutcome = { index: number; ok: true; id: string } | { index: number; ok: false; error: unknown };

/**
 * Options of `client.results.uploadInBatches`.
 * @example
 * await client.results.uploadInBatches(items, { batchSize: 100, concurrency: 4 });
 */
export interface BatchUploadOptions extends UploadOptions {
  /** Results per request (default 100; 1 to 500, the server's bound). */
  batchSize?: number | undefined;
  /**
   * Largest request body to build, in bytes (default 900,000, under the server's default limit of
   * 1 MiB): a batch that would be larger is cut shorter. A batch the server still finds too large
   * (413) is split in two and sent again.
   */
  maxBatchBytes?: number | undefined;
  // `concurrency`: requests (batches) in flight at once, default 4.
}

const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_BATCH_BYTES = 900_000;
const DEFAULT_BATCH_CONCURRENCY = 4;

/** What uploadInBatches needs of the client: the batch operation and, for servers without it, the single one. */
export interface BatchSender<I> {
  createBatch(items: I[]): Promise<{ ids: string[] }>;
  createOne(item: I): Promise<{ id: string }>;
}

interface ProblemLike {
  status: number;
  code: string;
  detail: string;
  errors: { in: string; path: string; message: string }[];
}

const isProblem = (err: unknown): err is ProblemLike & Error =>
  err instanceof Error && typeof (err as Partial<ProblemLike>).status === 'number' && Array.isArray((err as Partial<ProblemLike>).errors);

/** This server has no batch operation (an older version): 404 ROUTE_NOT_FOUND or 405. */
const noBatchRoute = (err: unknown) => isProblem(err) && ((err.status === 404 && err.code === 'ROUTE_NOT_FOUND') || err.status === 405);

/**
 * The error of one refused item of a refused batch: the batch's error (same class, status and code),
 * with the details of this item only, their paths relative to the item (`/json/score` becomes
 * `{ in: 'json', path: '/score' }` as for a single upload; `/benchmark_id` becomes
 * `{ in: 'body', path: 'benchmark_id' }`) and a detail saying what was wrong with it. `index` is
 * the item's position in the batch as sent, which the server's messages start with (`item 3: `).
 */
function itemError(batch: ProblemLike & Error, index: number, details: ProblemLike['errors']): Error {
  const prefix = `item ${index}: `;
  const at = `/items/${index}`;
  const errors = details.map((d) => {
    const message = d.message.startsWith(prefix) ? d.message.slice(prefix.length) : d.message;
    const rest = d.path.slice(at.length);
    // A schema violation (BATCH_REFUSED) reads as it would for a single upload: in the result's json.
    if (batch.code === 'BATCH_REFUSED' && (rest === '/json' || rest.startsWith('/json/')))
      return { in: 'json', path: rest.slice('/json'.length) || '/', message };
    return { in: d.in, path: rest.replace(/^\//, '') || '/', message };
  });
  const inJson = errors.filter((e) => e.in === 'json').length;
  // The server's own messages are sentences ("Flavor … was not found."); the body validator's name no field ("must be a UUID").
  const other = errors.filter((e) => e.in !== 'json').map((e) => (/^[A-Z]/.test(e.message) ? e.message : `${e.path} ${e.message}`));
  const detail = [
    ...new Set(other),
    ...(inJson ? [`The result does not satisfy the json_schema of its benchmark: ${inJson} violation(s).`] : []),
  ].join(' ');
  const Kind = batch.constructor as new (init: object) => Error;
  const b = batch as unknown as Record<string, unknown>;
  try {
    return new Kind({
      ...b,
      status: batch.status,
      code: batch.code,
      detail,
      errors,
      request: b.request,
      headers: b.headers,
      extensions: b.extensions,
    });
  } catch {
    return Object.assign(new Error(detail), { status: batch.status, code: batch.code, detail, errors });
  }
}

/** The items of a refused batch that the answer names (`errors[].path` `/items/<i>/…`), with their details. */
function refusedItems(err: ProblemLike, size: number): Map<number, ProblemLike['errors']> {
  const out = new Map<number, ProblemLike['errors']>();
  for (const e of err.errors) {
    const m = /^\/items\/(\d+)(?:\/|$)/.exec(e.path);
    if (!m) continue;
    const i = Number(m[1]);
    if (i >= size) continue;
    out.set(i, [...(out.get(i) ?? []), e]);
  }
  return out;
}

/**
 * Uploads `items` in batches of `batchSize` (POST /results:batch, all or none per request), at most
 * `concurrency` requests in flight, and resolves to one outcome per item in input order, never
 * rejecting. A batch refused because of some of its items (422 or 404 naming them in
 * `errors[].path`) stores nothing: those items fail with their own details, and the others are sent
 * again without them. A batch too large for the server (413) is split in two. Each request carries an
 * `Idempotency-Key`, so the client retries a lost answer, a timeout or a 5xx without storing the
 * batch twice; any failure that remains (401, 403, a 5xx or lost connection after the retries) fails
 * every item of that batch. Against a server without the batch operation, items are sent one by one
 * (POST /results).
 * @example
 * const outcomes = await uploadInBatches(items, { createBatch: (b) => client.results.createMany(b), createOne: ... }, {});
 */
export async function uploadInBatches<I>(
  items: readonly I[],
  sender: BatchSender<I>,
  options: BatchUploadOptions = {},
): Promise<BatchUploadOutcome[]> {
  const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const maxBytes = options.maxBatchBytes ?? DEFAULT_BATCH_BYTES;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError('concurrency must be a positive integer');
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_ITEMS)
    throw new TypeError(`batchSize must be an integer from 1 to ${MAX_BATCH_ITEMS}`);
  if (!(maxBytes > 0)) throw new TypeError('maxBatchBytes must be a positive number');

  // Batches of consecutive items, cut by count and by the size of their JSON.
  const encoder = new TextEncoder();
  const batches: number[][] = [];
  let current: number[] = [];
  let bytes = 0;
  items.forEach((item, index) => {
    const size = encoder.encode(JSON.stringify(item)).byteLength + 1;
    if (current.length && (current.length >= batchSize || bytes + size > maxBytes)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(index);
    bytes += size;
  });
  if (current.length) batches.push(current);

  const outcomes: BatchUploadOutcome[] = new Array(items.length);
  let done = 0;
  let failed = 0;
  let single = false;
  const finish = (outcome: BatchUploadOutcome) => {
    outcomes[outcome.index] = outcome;
    done++;
    if (!outcome.ok) failed++;
  };
  const progress = () => {
    try {
      options.onProgress?.({ done, total: items.length, failed });
    } catch {
      // A progress display must not decide the fate of the upload.
    }
  };
  const oneByOne = async (indexes: number[]) => {
    for (const index of indexes) {
      try {
        finish({ index, ok: true, id: (await sender.createOne(items[index]!)).id });
      } catch (error) {
        finish({ index, ok: false, error });
      }
      progress();
    }
  };
  const send = async (indexes: number[]): Promise<void> => {
    let pending = indexes;
    while (pending.length) {
      if (single) return oneByOne(pending);
      try {
        const { ids } = await sender.createBatch(pending.map((i) => items[i]!));
        pending.forEach((index, k) => {
          finish({ index, ok: true, id: ids[k]! });
        });
        return progress();
      } catch (error) {
        if (noBatchRoute(error)) {
          single = true;
          continue;
        }
        if (isProblem(error) && error.status === 413 && pending.length > 1) {
          const half = Math.ceil(pending.length / 2);
          await send(pending.slice(0, half));
          pending = pending.slice(half);
          continue;
        }
        const refused =
          isProblem(error) && (error.status === 422 || error.status === 404) ? refusedItems(error, pending.length) : new Map();
        if (refused.size === 0) {
          for (const index of pending) finish({ index, ok: false, error });
          return progress();
        }
        // Nothing was stored: the refused items fail, the others go again in a smaller batch.
        for (const [k, details] of refused)
          finish({ index: pending[k]!, ok: false, error: itemError(error as ProblemLike & Error, k, details) });
        progress();
        pending = pending.filter((_, k) => !refused.has(k));
      }
    }
  };
  let next = 0;
  const worker = async () => {
    while (next < batches.length) await send(batches[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
  return outcomes;
}
