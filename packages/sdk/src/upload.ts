import type { Body, Query, RequestOptions } from './types.ts';
import { MAX_BATCH_ITEMS } from './contract/results.ts';
import { ApiError, type ApiErrorInit, type ProblemDetail } from './errors.ts';

/**
 * One result to upload: where and when it ran (the `createResult` query) and its `json`.
 * @example
 * const item: UploadItem = { benchmark_id, flavor_id, execution_datetime: '2025-01-01T10:00:00Z', json: { score: 1 } };
 */
export type UploadItem = Query<'createResult'> & { json: Body<'createResult'> };

/**
 * What `results.upload` reads: items in an array or any iterable, items from an async iterable (a
 * generator, an object-mode stream), or NDJSON bytes, one item per line: a Node file stream
 * (`createReadStream('results.ndjson')`), a web `ReadableStream<Uint8Array>`, or any async
 * iterable of `Uint8Array` or string chunks.
 * @example
 * const source: UploadSource = createReadStream('results.ndjson');
 */
export type UploadSource =
  | Iterable<UploadItem>
  | AsyncIterable<UploadItem>
  | AsyncIterable<Uint8Array | string>
  | ReadableStream<Uint8Array>;

/**
 * The outcome of one item of an upload, at its `index` in the source (items counted from 0; blank
 * lines of NDJSON are not items): the id of the stored result, or why it was not stored.
 * @example
 * const failed = report.outcomes.filter((o) => !o.ok).map((o) => o.index);
 */
export type UploadOutcome = { index: number; ok: true; id: string } | { index: number; ok: false; error: unknown };

/**
 * What `results.upload` resolves to: how many items were read, stored and failed, and one outcome per
 * item in source order.
 * @example
 * const { stored, failed, outcomes } = await client.results.upload(items);
 */
export interface UploadReport {
  /** Items read from the source. */
  total: number;
  /** Items stored (or stored already under the same idempotency key: the server stores nothing twice). */
  stored: number;
  /** Items not stored: `total - stored`. */
  failed: number;
  /** One per item, in source order. */
  outcomes: UploadOutcome[];
}

/**
 * Progress after each answered request. `total` is the number of items when it is known: from the
 * start for an array, once the source is read to its end for an iterable or a stream.
 * @example
 * const onProgress = ({ done, total, failed }: UploadProgress) => process.stderr.write(`\r${done}/${total ?? '?'} (${failed} failed)`);
 */
export interface UploadProgress {
  done: number;
  total: number | undefined;
  failed: number;
}

/**
 * Options of `client.results.upload`: how to send, and the {@link RequestOptions} of every request
 * (`signal` stops the upload, `timeoutMs` and `headers` apply to each request).
 * @example
 * await client.results.upload(items, { batchSize: 100, concurrency: 4, onProgress: (p) => console.error(p.done) });
 */
export interface UploadOptions extends RequestOptions {
  /**
   * Results per request: 1 to 500, default 100 (`POST /results:batch`); `1` sends each result on its
   * own (`POST /results`).
   */
  batchSize?: number | undefined;
  /** Requests in flight at once (default 4), over the client's reused connections. */
  concurrency?: number | undefined;
  /**
   * Largest request body to build, in bytes (default 900,000, under the server's default limit of
   * 1 MiB): a batch that would be larger is cut shorter. A batch the server still finds too large
   * (413) is split in two and sent again.
   */
  maxBatchBytes?: number | undefined;
  /** Called after each answered request; an exception it throws is ignored, so it cannot stop the upload. */
  onProgress?: ((progress: UploadProgress) => void) | undefined;
  /**
   * The `Idempotency-Key` of each request, from what it sends: its items and the operation
   * (`'createResults'` for a batch, `'createResult'` for one result). Default (or when it returns
   * `undefined`): a random key per request. A key derived from the content makes running the same
   * upload again within 24 h store nothing twice. An exception it throws fails the items of that
   * request, which is then not sent.
   */
  idempotencyKey?: ((items: readonly UploadItem[], operation: 'createResult' | 'createResults') => string | undefined) | undefined;
}

const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_BATCH_BYTES = 900_000;
const DEFAULT_CONCURRENCY = 4;

/** What an upload needs of the client: the batch operation and the single one (`batchSize: 1`, servers without batches). */
export interface BatchSender<I> {
  createBatch(items: I[]): Promise<{ ids: string[] }>;
  createOne(item: I): Promise<{ id: string }>;
}

/** This server has no batch operation (an older version): 404 ROUTE_NOT_FOUND or 405. */
const noBatchRoute = (err: unknown) =>
  err instanceof ApiError && ((err.status === 404 && err.code === 'ROUTE_NOT_FOUND') || err.status === 405);

/**
 * The error of one refused item of a refused batch: the batch's error (same class, status and code),
 * with the details of this item only, their paths relative to the item (`/json/score` becomes
 * `{ in: 'json', path: '/score' }` as for a single upload; `/benchmark_id` becomes
 * `{ in: 'body', path: 'benchmark_id' }`) and a detail saying what was wrong with it. `index` is
 * the item's position in the batch as sent, which the server's messages start with (`item 3: `).
 */
function itemError(batch: ApiError, index: number, details: ProblemDetail[]): ApiError {
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
  const Kind = batch.constructor as new (init: ApiErrorInit) => ApiError;
  return new Kind({ ...batch, detail, errors });
}

/** The items of a refused batch that the answer names (`errors[].path` `/items/<i>/…`), with their details. */
function refusedItems(err: ApiError, size: number): Map<number, ProblemDetail[]> {
  const out = new Map<number, ProblemDetail[]>();
  for (const e of err.errors) {
    const m = /^\/items\/(\d+)(?:\/|$)/.exec(e.path);
    if (!m) continue;
    const i = Number(m[1]);
    if (i >= size) continue;
    out.set(i, [...(out.get(i) ?? []), e]);
  }
  return out;
}

/** One item with its place in the source. */
interface Entry<I> {
  index: number;
  item: I;
}

/** A source's items, as they are read; NDJSON lines parsed on the way (a bad line is an item that fails). */
async function* entriesOf<I>(source: UploadSource): AsyncGenerator<Entry<I> | { index: number; error: Error }, void, undefined> {
  if (typeof source === 'string' || source instanceof Uint8Array)
    throw new TypeError('upload takes items or a stream of NDJSON bytes, not a string or a buffer: wrap it, e.g. [buffer]');
  let index = 0;
  let line = 0;
  const entry = (raw: string): Entry<I> | { index: number; error: Error } => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (err) {
      return { index: index++, error: new TypeError(`line ${line} is not valid JSON: ${(err as Error).message}`) };
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value))
      return {
        index: index++,
        error: new TypeError(`line ${line} is not a JSON object (an item is { benchmark_id, flavor_id, execution_datetime, json })`),
      };
    return { index: index++, item: value as I };
  };
  const decoder = new TextDecoder();
  let pending = '';
  const bytes = (chunk: unknown) => typeof chunk === 'string' || chunk instanceof Uint8Array;
  let mode: 'items' | 'bytes' | undefined;
  for await (const chunk of iterate(source)) {
    mode ??= bytes(chunk) ? 'bytes' : 'items';
    if ((mode === 'bytes') !== bytes(chunk))
      throw new TypeError('upload source mixes items with bytes or strings: give items, or NDJSON bytes, not both');
    if (mode === 'items') {
      yield { index: index++, item: chunk as I };
      continue;
    }
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk as Uint8Array, { stream: true });
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const raw of lines) {
      line++;
      if (raw.trim() !== '') yield entry(raw);
    }
  }
  if (mode !== 'bytes') return;
  pending += decoder.decode();
  line++;
  if (pending.trim() !== '') yield entry(pending);
}

/** Any source as an async iterable; a web stream read through its reader (browsers without stream iteration). */
async function* iterate(source: UploadSource): AsyncGenerator<unknown, void, undefined> {
  if (typeof (source as ReadableStream).getReader === 'function') {
    const reader = (source as ReadableStream<Uint8Array>).getReader();
    try {
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        yield chunk.value;
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }
  if (typeof (source as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return yield* source as AsyncIterable<unknown>;
  if (typeof (source as Iterable<unknown>)[Symbol.iterator] === 'function') return yield* source as Iterable<unknown>;
  throw new TypeError('upload takes an array or iterable of items, an async iterable, or a stream of NDJSON bytes');
}

/**
 * What `client.results.upload` does (see there), with what it leaves unsaid: the source is read only
 * as fast as requests are sent; a batch too large for the server (413) is split in two; a failure
 * that remains after the client's retries (401, 403, a 5xx, a lost connection) fails every item of
 * its batch; aborting `options.signal` stops reading and sending, and the upload rejects with its
 * reason once the requests in flight are over.
 * @example
 * const report = await upload(items, { createBatch: (b) => client.results.createMany(b), createOne: ... }, {});
 */
export async function upload<I>(source: UploadSource, sender: BatchSender<I>, options: UploadOptions = {}): Promise<UploadReport> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const maxBytes = options.maxBatchBytes ?? DEFAULT_BATCH_BYTES;
  const { signal } = options;
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new TypeError('concurrency must be a positive integer');
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > MAX_BATCH_ITEMS)
    throw new TypeError(`batchSize must be an integer from 1 to ${MAX_BATCH_ITEMS}`);
  if (!(maxBytes > 0)) throw new TypeError('maxBatchBytes must be a positive number');
  signal?.throwIfAborted();

  const outcomes: UploadOutcome[] = [];
  let total: number | undefined = Array.isArray(source) ? source.length : undefined;
  let read = 0;
  let done = 0;
  let failed = 0;
  let single = batchSize === 1;
  const finish = (outcome: UploadOutcome) => {
    outcomes[outcome.index] = outcome;
    done++;
    if (!outcome.ok) failed++;
  };
  const progress = () => {
    try {
      options.onProgress?.({ done, total, failed });
    } catch {
      // A progress display must not decide the fate of the upload.
    }
  };

  // Batches of consecutive items, cut by count and by the size of their JSON, read as they are needed.
  const encoder = new TextEncoder();
  async function* batchesOf(): AsyncGenerator<Entry<I>[], void, undefined> {
    let current: Entry<I>[] = [];
    let bytes = 0;
    for await (const entry of entriesOf<I>(source)) {
      read++;
      if ('error' in entry) {
        finish({ index: entry.index, ok: false, error: entry.error });
        progress();
        continue;
      }
      const size = single ? 0 : encoder.encode(JSON.stringify(entry.item)).byteLength + 1;
      if (current.length && (current.length >= batchSize || bytes + size > maxBytes)) {
        yield current;
        current = [];
        bytes = 0;
      }
      current.push(entry);
      bytes += size;
    }
    total = read;
    if (current.length) yield current;
  }

  const oneByOne = async (entries: Entry<I>[]) => {
    for (const { index, item } of entries) {
      try {
        finish({ index, ok: true, id: (await sender.createOne(item)).id });
      } catch (error) {
        finish({ index, ok: false, error });
      }
      progress();
    }
  };
  const send = async (entries: Entry<I>[]): Promise<void> => {
    let pending = entries;
    while (pending.length) {
      if (single) return oneByOne(pending);
      try {
        const { ids } = await sender.createBatch(pending.map((e) => e.item));
        pending.forEach(({ index }, k) => {
          finish({ index, ok: true, id: ids[k]! });
        });
        return progress();
      } catch (error) {
        if (noBatchRoute(error)) {
          single = true;
          continue;
        }
        if (error instanceof ApiError && error.status === 413 && pending.length > 1) {
          const half = Math.ceil(pending.length / 2);
          await send(pending.slice(0, half));
          pending = pending.slice(half);
          continue;
        }
        const refused =
          error instanceof ApiError && (error.status === 422 || error.status === 404) ? refusedItems(error, pending.length) : new Map();
        if (refused.size === 0) {
          for (const { index } of pending) finish({ index, ok: false, error });
          return progress();
        }
        // Nothing was stored: the refused items fail, the others go again in a smaller batch.
        for (const [k, details] of refused)
          finish({ index: pending[k]!.index, ok: false, error: itemError(error as ApiError, k, details) });
        progress();
        pending = pending.filter((_, k) => !refused.has(k));
      }
    }
  };
  // The workers share one reader of the source: each takes the next batch when it is free.
  const batches = batchesOf();
  const worker = async () => {
    while (!signal?.aborted) {
      const next = await batches.next();
      if (next.done) return;
      await send(next.value);
    }
  };
  // Settled, not raced: a source that fails (a file that cannot be read) rejects the upload only once
  // the requests in flight are answered.
  const settled = await Promise.allSettled(Array.from({ length: concurrency }, worker));
  await batches.return();
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  signal?.throwIfAborted();
  return { total: read, stored: done - failed, failed, outcomes };
}
