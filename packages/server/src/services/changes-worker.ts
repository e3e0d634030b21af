/**
 * A worker thread of services/changes-segmenter.ts: segments series (changes-stats.ts) away from
 * the server's event loop. Holds nothing between jobs, so that it can be terminated at any time.
 */
import { parentPort } from 'node:worker_threads';
import { type ChangeOptions, changePoints, summarise } from './changes-stats.ts';

export interface SegmentJob {
  id: number;
  values: Float64Array;
  options: ChangeOptions;
}

export type SegmentAnswer = { id: number; segmented: ReturnType<typeof summarise> } | { id: number; error: string };

parentPort!.on('message', (job: SegmentJob) => {
  try {
    parentPort!.postMessage({
      id: job.id,
      segmented: summarise(job.values, changePoints(job.values, job.options)),
    } satisfies SegmentAnswer);
  } catch (err) {
    parentPort!.postMessage({ id: job.id, error: (err as Error).message } satisfies SegmentAnswer);
  }
});
