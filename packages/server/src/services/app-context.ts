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

/** What lives as long as the app: shared by every request. */
export interface AppContext {
  config: ServerConfig;
  orm: MikroORM;
  logger: Logger;
  verifier: TokenVerifier | null;
  version: string;
  /** Totals of large result lists, cleared by every write this process serves. */
  totals: TotalCache;
  /** Comparisons of large groups (GET /results:compare), cleared as the totals are. */
  compares: CompareCache;
  /** Change points of large series (GET /results:changes), cleared as the comparisons are. */
  changes: ChangesCache;
  /** Segments long series (GET /results:changes) in a worker thread; remembers every series' change points by content. */
  changeSegmenter: ChangesSegmenter;
  /** Refreshes watched series after writes (services/alerts/scheduler.ts). */
  watches: WatchScheduler;
  /** JSON text of the catalogue rows results embed, per row version. */
  embeds: EmbedCache;
  /** The paths each benchmark's schema describes, per row version (warnings about the others). */
  schemaPaths: SchemaPathsCache;
  /** The catalogue rows recent uploads referred to, at known versions. */
  uploads: UploadTargets;
  /** The upkeep of the metric values table: paths chosen again when schemas change, values filled in. */
  metrics: MetricValues;
  /** What result lists read from the metric values table (which paths, which sorts it serves). */
  metricTable: MetricTable;
  /** Admission of requests with large bodies (batches). */
  largeBodies: LargeBodyAdmission;
  /** Checks and compiles benchmark JSON Schemas in worker threads; caches result validators. */
  schemas: SchemaCompiler;
  /** A database connection outside the pool: readiness, and cancelling statements of abandoned requests. */
  control: DatabaseControl;
  /** Admission of expensive result lists (search terms, JSON filters, unindexed sorts). */
  expensiveLists: ExpensiveListAdmission;
  /** Admission of exports (GET /results:export): a few stream at once. */
  exports: ExportAdmission;
  /** Writes and reads per client (shared by the deployment's processes, or this one's alone); null: unlimited. */
  rateLimiters: { writes: RateLimiter | null; reads: RateLimiter | null };
  /** Where reads go with read replicas (DATABASE_READ_URL); absent: every statement goes to the primary. */
  reads?: ReadRouting;
  /** The embedded PostgreSQL's state (`restarting` after it ended unexpectedly, `failed`), for `/ready`; absent: running. */
  databaseState?: () => DatabaseStatus;
}
