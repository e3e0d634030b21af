import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServerConfig } from '../config.ts';
import type { Logger } from '../core/logger.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import type { TotalCache } from './results/total-cache.ts';
import type { CompareCache } from './compare/compare-cache.ts';
import type { ChangesCache } from './changes/changes.ts';
import type { ChangesSegmenter } from './changes/changes-segmenter.ts';
import type { EmbedCache } from './catalogue/embeds.ts';
import type { SchemaPathsCache } from './results/path-warnings.ts';
import type { UploadTargets } from './results/upload-targets.ts';
import type { MetricValues } from './metrics/metric-values.ts';
import type { MetricTable } from './metrics/metric-lookup.ts';
import type { LargeBodyAdmission } from './runtime/admission.ts';
import type { SchemaCompiler } from './schemas/schema-compiler.ts';
import type { DatabaseControl } from '../db/control.ts';
import type { ExpensiveListAdmission, ExportAdmission } from './runtime/admission.ts';
import type { RateLimiter } from '../rate-limit/limiter.ts';
import type { ReadRouting } from '../db/read-routing.ts';
import type { DatabaseStatus } from '../db/embedded.ts';
import type { WatchScheduler } from './alerts/scheduler.ts';

/** What lives as long as the app, shared by every request: the process's parts, then each domain's services. */
export interface AppContext {
  config: ServerConfig;
  orm: MikroORM;
  logger: Logger;
  verifier: TokenVerifier | null;
  version: string;
  /** A database connection outside the pool: readiness, and cancelling statements of abandoned requests. */
  control: DatabaseControl;
  /** Where reads go with read replicas (DATABASE_READ_URL); absent: every statement goes to the primary. */
  reads?: ReadRouting;
  /** Writes and reads per client (shared by the deployment's processes, or this one's alone); null: unlimited. */
  rateLimiters: { writes: RateLimiter | null; reads: RateLimiter | null };
  /** The embedded PostgreSQL's state (`restarting` after it ended unexpectedly, `failed`), for `/ready`; absent: running. */
  databaseState?: () => DatabaseStatus;
  /** Admission: requests with large bodies (batches), expensive result lists (search terms, JSON filters, unindexed sorts), exports. */
  runtime: { largeBodies: LargeBodyAdmission; expensiveLists: ExpensiveListAdmission; exports: ExportAdmission };
  /** Checks and compiles benchmark JSON Schemas in worker threads; caches result validators. */
  schemas: SchemaCompiler;
  /** The metric values table: its upkeep (paths chosen again when schemas change, values filled in), and what lists read from it. */
  metrics: { values: MetricValues; table: MetricTable };
  /** JSON text of the catalogue rows results embed, per row version. */
  catalogue: { embeds: EmbedCache };
  /**
   * Totals of large result lists (cleared by every write this process serves), the catalogue rows
   * recent uploads referred to, and the paths each benchmark's schema describes (warnings about the others).
   */
  results: { totals: TotalCache; uploads: UploadTargets; schemaPaths: SchemaPathsCache };
  /** Comparisons of large groups (GET /results:compare), cleared as the totals are. */
  compare: { cache: CompareCache };
  /** Change points of large series, and the segmenter that computes them in a worker thread (remembered by content). */
  changes: { cache: ChangesCache; segmenter: ChangesSegmenter };
  /** Refreshes watched series after writes (services/alerts/scheduler.ts). */
  alerts: { watches: WatchScheduler };
}
