/**
 * `benchmarks-server import-origin` as a function: moves the original service's database into this
 * one, keeping every id (docs/migrating.md). Idempotent (a row whose id is here is left alone),
 * resumable, streaming (results a batch at a time). The imported benchmarks' metric value paths are
 * chosen before their results, so that the insert trigger writes their metric values with them.
 */
import { DEFAULTS } from '../config.ts';
import { createLogger } from '../core/logger.ts';
import { redactUrl, withOwnConnection } from '../db/own-connection.ts';
import { chooseMetricPaths } from '../services/metrics/metric-values.ts';
import { importCatalogue } from './catalogue.ts';
import type { BatchInfo, ImportContext, ProgressEvent } from './context.ts';
import { importResults } from './results.ts';
import { BenchmarkSchemas } from './schemas.ts';
import { OriginSource } from './source.ts';
import { type ImportSummary, KINDS, type ReportLine, Tally } from './summary.ts';
import { ImportTarget } from './target.ts';

export type { BatchInfo, ProgressEvent } from './context.ts';
export type { ImportSummary, ReportLine } from './summary.ts';

export const DEFAULT_BATCH_SIZE = 1000;

export interface ImportOptions {
  /** The original service's database (only read, in one read-only snapshot). */
  from: string;
  /** This service's database, migrated (`benchmarks-server migrate`). */
  to: string;
  /** The time zone the original wrote its naive timestamps in (its server's local time); default UTC. */
  sourceTimezone?: string;
  /** Results per batch and transaction (default 1,000). */
  batchSize?: number;
  /** The limits this service puts on benchmark schemas (default: the server's defaults). */
  maxSchemaBytes?: number;
  maxSchemaNodes?: number;
  /** After every batch and at the end of each kind. */
  onProgress?: (event: ProgressEvent) => void;
  /** Every refused or flagged row, as it is counted (the summary keeps a few per reason). */
  onReport?: (line: ReportLine) => void;
  /** Stops the run between two batches; the summary then says it is not complete. */
  signal?: AbortSignal;
  /** Called inside each batch's transaction before it commits: throwing rolls it back and ends the run. */
  onBatch?: (info: BatchInfo) => void | Promise<void>;
}

/**
 * Imports what the source holds that is not here yet; resolves to the summary, refusals included.
 * Rejects when a database cannot be reached or is not the original's (ConfigurationError), or a
 * batch fails: what was committed stays, and running it again resumes.
 * @example
 * const summary = await importOrigin({ from: 'postgresql://reader@origin/perf', to: config.databaseUrl });
 */
export async function importOrigin(options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const sourceTimezone = options.sourceTimezone ?? 'UTC';
  const tally = new Tally(options.onReport);
  const source = await OriginSource.open(options.from, sourceTimezone);
  let target: ImportTarget | undefined;
  let schemas: BenchmarkSchemas | undefined;
  try {
    target = await ImportTarget.open(options.to);
    schemas = new BenchmarkSchemas({
      maxBytes: options.maxSchemaBytes ?? DEFAULTS.maxSchemaBytes,
      maxNodes: options.maxSchemaNodes ?? DEFAULTS.maxSchemaNodes,
    });
    const counts = await source.counts();
    for (const kind of KINDS) tally.setSource(kind, counts[kind]);
    const ctx: ImportContext = {
      source,
      target,
      tally,
      schemas,
      batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
      epoch: await source.epoch(),
      sites: new Set(),
      flavors: new Map(),
      tags: new Set(),
      signal: options.signal,
      onProgress: options.onProgress,
      onBatch: options.onBatch,
    };
    let complete = await importCatalogue(ctx);
    if (complete) {
      // Held up by a writer elsewhere, they stay incomplete for the server's pass to complete.
      await withOwnConnection(options.to, (run) => chooseMetricPaths(run, createLogger('silent')), 'import-origin');
      complete = await importResults(ctx);
    }
    return tally.summary({
      source: redactUrl(options.from),
      sourceTimezone,
      complete,
      seconds: Math.round(performance.now() - started) / 1000,
    });
  } finally {
    await schemas?.close();
    await target?.close();
    await source.close();
  }
}
