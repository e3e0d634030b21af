/**
 * The upload as a stream: items are read, cut into segments (one batch each), sent a few at a
 * time, and their outcomes handed on in input order. Memory stays bounded whatever the input's
 * size: the reader waits while `concurrency` segments are in flight or too many wait to be handed on.
 */
import type { Prepared } from './items.ts';

/** The server refuses request bodies over 1 MiB by default; the SDK cuts its batches at 900 KB (of JSON). */
const MAX_SEGMENT_CHARS = 900_000;
/** Items (failed ones included) a segment may hold, so that a long run of bad lines is handed on too. */
const MAX_SEGMENT_ITEMS = 10_000;
/** What an item adds to a batch besides its JSON: ids, time, tags. */
const ITEM_OVERHEAD = 200;

/**
 * Consecutive items, cut where a batch ends: at `batchSize` items to send, before the one that would
 * take the batch over ~900 KB of JSON text, or at 10,000 items in all. The cut depends only on the
 * inputs and the batch size, so an upload run again (or resumed) makes the same batches, hence
 * sends the same Idempotency-Keys.
 */
export async function* segments(chunks: AsyncIterable<Prepared[]>, batchSize: number): AsyncGenerator<Prepared[]> {
  let current: Prepared[] = [];
  let ready = 0;
  let chars = 0;
  const cut = () => {
    const segment = current;
    current = [];
    ready = 0;
    chars = 0;
    return segment;
  };
  for await (const chunk of chunks) {
    for (const item of chunk) {
      if (item.upload) {
        const size = (item.raw.size ?? 0) + ITEM_OVERHEAD;
        if (ready > 0 && (ready >= batchSize || chars + size > MAX_SEGMENT_CHARS)) yield cut();
        ready++;
        chars += size;
      }
      current.push(item);
      if (current.length >= MAX_SEGMENT_ITEMS) yield cut();
    }
  }
  if (current.length) yield current;
}

export interface WindowOptions<S, R> {
  /** Segments handled at once. */
  concurrency: number;
  /** The outcomes of one segment: at once (nothing to send), or once sent. Must not reject. */
  handle(segment: S): R | Promise<R>;
  /** Called with each segment's outcomes, in input order. */
  emit(outcome: R): void;
  /** Checked before each segment: true stops reading (the rest is not read). */
  stop?(): boolean;
}

/**
 * Runs `handle` over the segments with at most `concurrency` in flight, and `emit`s their outcomes
 * in order. Resolves to false when `stop` ended the reading early, after the segments in flight.
 */
export async function inOrder<S, R>(source: AsyncIterable<S>, options: WindowOptions<S, R>): Promise<boolean> {
  const queue: { done: boolean; value?: R }[] = [];
  const maxQueued = options.concurrency * 2 + 2;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let failure: { error: unknown } | undefined;
  const flush = () => {
    while (queue.length > 0 && queue[0]!.done) options.emit(queue.shift()!.value as R);
  };
  const settled = () => {
    const resume = wake;
    wake = undefined;
    resume?.();
  };
  const waitForOne = () => new Promise<void>((resolve) => (wake = resolve));
  let complete = true;
  try {
    for await (const segment of source) {
      while (inFlight >= options.concurrency || queue.length >= maxQueued) await waitForOne();
      if (failure) break;
      if (options.stop?.()) {
        complete = false;
        break;
      }
      const entry: { done: boolean; value?: R } = { done: false };
      queue.push(entry);
      const outcome = options.handle(segment);
      if (!(outcome instanceof Promise)) {
        entry.value = outcome;
        entry.done = true;
        flush();
        continue;
      }
      inFlight++;
      outcome
        .then(
          (value) => {
            entry.value = value;
          },
          (error: unknown) => {
            failure ??= { error };
          },
        )
        .finally(() => {
          entry.done = true;
          inFlight--;
          if (!failure) flush();
          settled();
        });
    }
  } finally {
    while (inFlight > 0) await waitForOne();
    if (!failure) flush();
  }
  if (failure) throw failure.error;
  return complete;
}
