/**
 * A worker thread of services/changes/changes-segmenter.ts: sorts, segments and sketches series
 * (changes-series.ts) away from the server's event loop. A job is two exchanges: the series sorted,
 * its digest goes to the segmenter, which answers with the change points it remembers for it (or
 * none); then the summary comes back. Holds nothing between jobs, so that it can be terminated at
 * any time.
 */
import { parentPort } from 'node:worker_threads';
import type { ChangeOptions } from './changes-stats.ts';
import { type SeriesSummary, type SortedPoints, sortPoints, summariseSorted, type TimeAxis } from './changes-series.ts';

export interface SegmentJob {
  id: number;
  /** The series as the statement returns it (changes-series.ts, `sortPoints`). */
  points: Uint8Array;
  options: ChangeOptions;
  axis: TimeAxis;
}

/** The segmenter's answer to a digest: the change points remembered for it, or null. */
export interface RememberedCuts {
  id: number;
  cuts: number[] | null;
}

export type WorkerMessage = { id: number; digest: string } | { id: number; summary: SeriesSummary } | { id: number; error: string };

const sorted = new Map<number, { points: SortedPoints; job: SegmentJob }>();

parentPort!.on('message', (message: SegmentJob | RememberedCuts) => {
  try {
    if ('cuts' in message) {
      const waiting = sorted.get(message.id);
      sorted.delete(message.id);
      if (!waiting) throw new Error(`no series sorted for job ${message.id}`);
      const summary = summariseSorted(waiting.points, waiting.job.options, waiting.job.axis, message.cuts ?? undefined);
      parentPort!.postMessage({ id: message.id, summary } satisfies WorkerMessage);
    } else {
      const points = sortPoints(message.points);
      sorted.set(message.id, { points, job: message });
      parentPort!.postMessage({ id: message.id, digest: points.digest } satisfies WorkerMessage);
    }
  } catch (err) {
    sorted.delete(message.id);
    parentPort!.postMessage({ id: message.id, error: (err as Error).message } satisfies WorkerMessage);
  }
});
