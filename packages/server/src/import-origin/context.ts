/** What the phases of an import share: the databases, the tally, the schemas, what rows may refer to, the hooks. */
import type { BenchmarkSchemas } from './schemas.ts';
import type { OriginSource } from './source.ts';
import type { BatchTally, Kind, Tally } from './summary.ts';
import type { ImportTarget } from './target.ts';

/** Sent after every batch and at the end of each kind. */
export interface ProgressEvent {
  kind: Kind;
  /** Rows of this kind dealt with (imported, skipped or refused). */
  done: number;
  total: number;
  refused: number;
  flagged: number;
  /** This kind is done. */
  finished: boolean;
}

/** A batch about to be committed. */
export interface BatchInfo {
  kind: Kind;
  /** 1 for the first batch of each kind. */
  batch: number;
  rows: number;
}

export interface ImportContext {
  source: OriginSource;
  target: ImportTarget;
  tally: Tally;
  schemas: BenchmarkSchemas;
  batchSize: number;
  /** The source's earliest time (timestamptz text): the upload time of rows it kept none for. */
  epoch: string;
  /** Sites, flavors (with their site) and tags present here after their phase, imported or not. */
  sites: Set<string>;
  flavors: Map<string, string>;
  tags: Set<string>;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** Called inside each batch's transaction before it commits: throwing rolls the batch back and ends the run. */
  onBatch?: (info: BatchInfo) => void | Promise<void>;
}

/** Counts a committed batch and tells the progress listener. */
export function commit(ctx: ImportContext, kind: Kind, batch: BatchTally): void {
  ctx.tally.apply(batch);
  progress(ctx, kind, false);
}

export function progress(ctx: ImportContext, kind: Kind, finished: boolean): void {
  const c = ctx.tally.counts(kind);
  ctx.onProgress?.({ kind, done: ctx.tally.done(kind), total: c.source, refused: c.refused, flagged: c.flagged, finished });
}

/** Whether the caller asked the run to stop (checked between batches). */
export function stopping(ctx: ImportContext): boolean {
  return ctx.signal?.aborted === true;
}
