import type { Body, Query, Reply } from './types.ts';

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
export type UploadOutcome =
  | { index: number; ok: true; result: Reply<'createResult'> }
  | { index: number; ok: false; error: unknown };

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
  concurrency?: number;
  /** Called after each item; an exception it throws is ignored, so it cannot stop the batch. */
  onProgress?: (progress: UploadProgress) => void;
}

/**
 * Runs `create` over every item with at most `concurrency` in flight, never stopping on a failure,
 * and resolves to one outcome per item, in input order. Uploads are POSTs, so a failed one is never
 * retried automatically (a lost answer may hide a stored result): retry the failed items yourself
 * after checking.
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
