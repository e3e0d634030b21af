/**
 * A worker thread of services/compare/changes-segmenter.ts: parses, segments and sketches series
 * (changes-series.ts) away from the server's event loop. Holds nothing between jobs, so that it can
 * be terminated at any time.
 */
import { parentPort } from 'node:worker_threads';
import type { ChangeOptions } from './changes-stats.ts';
import { type SeriesSummary, summariseSeries, type TimeAxis } from './changes-series.ts';

export interface SegmentJob {
  id: number;
  /** The series as the statement returns it (changes-series.ts, `parsePoints`). */
  text: string;
  options: ChangeOptions;
  axis: TimeAxis;
  /** The series' change points when already known (changes-series.ts, `summariseSeries`). */
  cuts?: number[];
}

export type SegmentAnswer = { id: number; summary: SeriesSummary } | { id: number; error: string };

parentPort!.on('message', (job: SegmentJob) => {
  try {
    parentPort!.postMessage({ id: job.id, summary: summariseSeries(job.text, job.options, job.axis, job.cuts) } satisfies SegmentAnswer);
  } catch (err) {
    parentPort!.postMessage({ id: job.id, error: (err as Error).message } satisfies SegmentAnswer);
  }
});
