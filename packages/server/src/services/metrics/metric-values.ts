/**
 * The metric values table (migration 20261126000000; docs/decisions.md, "Metric values"): for each
 * result, the JSON numbers at the numeric paths its benchmark's schema describes, so that a
 * comparison reads an index of a few megabytes instead of one heap page per result.
 *
 * Triggers on `result` write the rows of every result inserted, updated or deleted, in the same
 * transaction, for the paths chosen at that time (`metric_path`). This module chooses those paths
 * (`metricValuePaths`) whenever a benchmark's schema changes, and fills in, in the background, the
 * values of results stored before their benchmark's paths were chosen (the first start after the
 * migration, a schema changed since): one pass over the result table by heap block ranges, a
 * batch per transaction, its position kept in `metric_backfill` so that a stop resumes where it
 * left off. A batch takes about BATCH_MS (its size follows the pace of the last one): long enough
 * for its statements' cost to be the rows it writes, short enough for the updates and deletes
 * that wait for it. A benchmark is `complete` once a pass that began after its paths were chosen has
 * ended; until then comparisons read the documents (services/compare/compare.ts).
 *
 * Why it is right while results change:
 * - The paths of a benchmark are replaced without a table lock: a write in flight may have read
 *   the old ones. Once the new ones are committed, `paths_xmax` records the transaction ids that
 *   were assigned by then; a pass includes the benchmark only once every transaction below it
 *   has ended (`pg_snapshot_xmin`), so it sees every result written with the old paths, and every
 *   later write sees the new ones; whatever the pass has not reached yet, the triggers write.
 * - Updates and deletes of results take a shared transaction-level advisory lock (CHANGE_LOCK) in
 *   their trigger, and every batch takes it exclusively before it reads: a batch never reads a
 *   result whose change is uncommitted, and a change after the batch sees the batch's rows. An
 *   updated result gets its rows written again from its new version, wherever the update moved it.
 * - A batch writes only the rows a result lacks: a row is only ever written from the result's
 *   current version. An update that leaves a result's values as they were (a claim, a deletion)
 *   writes the rows it lacks while its benchmark is incomplete (migration 20261126030000): it may
 *   move the result to a block the pass has passed, or past the end it recorded.
 * Several processes may share the database: one pass runs at a time (BACKFILL_LOCK), and paths
 * are replaced under CHANGE_LOCK taken exclusively.
 */
import { performance } from 'node:perf_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../core/logger.ts';
import { tryLock, unlock, type LockKey, type Run } from '../../db/advisory-lock.ts';
import { withOwnConnection } from '../../db/own-connection.ts';
import { SerialQueue } from '../runtime/serial-queue.ts';
import { DescribedPaths } from '../schemas/schema-paths.ts';
import { KEY_SLOTS, metricRowsSql } from '../../db/metric-rows.ts';
import type { DisposalStack } from '../../core/disposal.ts';
import { MetricTable } from './metric-lookup.ts';

/**
 * At most this many paths per benchmark (besides the result's own row). Each costs a row of about
 * 120 bytes (heap and index) per result holding a number there; docs/decisions.md gives the sizes.
 */
export const MAX_METRIC_PATHS = 32;
/**
 * The first KEY_SLOTS paths of a benchmark (in `metricValuePaths`' order: headline metrics first)
 * have a slot: every row of a result carries its numbers there (`k1` … `k8`), so that filters on
 * them, and a sort by them, need no lookup per row (migrations 20261201000000, 20261202003000).
 */
export { KEY_SLOTS };
/** Part of each benchmark's digest: a change of how paths are chosen chooses them again. */
const CHOICE_VERSION = `v2:${MAX_METRIC_PATHS}:${KEY_SLOTS}`;
/** Shared by the triggers' updates and deletes, exclusive for a backfill batch (literal in the migration). */
export const CHANGE_LOCK: LockKey = [0x62656e63, 2];
/** Held by the process running the backfill pass. */
const BACKFILL_LOCK: LockKey = [0x62656e63, 3];
/** Heap blocks of the first backfill batch; the next ones take about BATCH_MS each, within these bounds. */
const BATCH_BLOCKS = 256;
const MIN_BATCH_BLOCKS = 1;
const MAX_BATCH_BLOCKS = 16_384;
/** How long a batch should take: it holds CHANGE_LOCK, which updates and deletes of results wait for. */
const BATCH_MS = 250;

type SchemaNode = Record<string, unknown>;

const isNumericType = (type: unknown) =>
  type === 'number' || type === 'integer' || (Array.isArray(type) && type.some((t) => t === 'number' || t === 'integer'));
const isHeadline = (node: SchemaNode) => node.suggestToUser === true || node['x-better'] === 'higher' || node['x-better'] === 'lower';

/**
 * The paths whose numbers are kept: the described leaf paths without array elements that some
 * subschema types as a number or an integer (services/schemas/schema-paths.ts), those suggested to users
 * or with an `x-better` first, then the others, each in the schema's order; at most MAX_METRIC_PATHS.
 */
export function metricValuePaths(schema: unknown): string[][] {
  const described = new DescribedPaths(schema);
  const headline: string[][] = [];
  const others: string[][] = [];
  for (const leaf of described.leaves()) {
    if (!leaf.every((segment): segment is string => typeof segment === 'string')) continue;
    const nodes = described.nodesAt(leaf);
    if (!nodes?.some((n) => isNumericType(n.type))) continue;
    (nodes.some(isHeadline) ? headline : others).push(leaf);
  }
  return [...headline, ...others].slice(0, MAX_METRIC_PATHS);
}

/** At most this many suggested metrics of a benchmark (its export's default columns). */
export const MAX_SUGGESTED_METRICS = 4;
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DEPTH = 8;

/**
 * The paths of the numeric properties a schema suggests to users (`suggestToUser: true` on a type
 * of numbers, perhaps null, only), with plain names (letters, digits, `_`, `-`), depth first in the
 * order of the stored schema's keys (jsonb's: shorter keys first, then bytewise), at most
 * MAX_SUGGESTED_METRICS.
 */
export function suggestedMetrics(schema: unknown): string[][] {
  const out: string[][] = [];
  const numeric = (type: unknown) =>
    type === 'number' ||
    type === 'integer' ||
    (Array.isArray(type) && type.length > 0 && type.every((t) => t === 'number' || t === 'integer' || t === 'null'));
  const walk = (node: unknown, path: string[]) => {
    if (!node || typeof node !== 'object' || out.length >= MAX_SUGGESTED_METRICS || path.length > MAX_DEPTH) return;
    const n = node as SchemaNode;
    if (path.length && n.suggestToUser === true && numeric(n.type)) out.push(path);
    if (n.properties && typeof n.properties === 'object') {
      for (const [key, child] of Object.entries(n.properties as SchemaNode)) {
        if (SAFE_SEGMENT.test(key)) walk(child, [...path, key]);
      }
    }
  };
  walk(schema, []);
  return out.slice(0, MAX_SUGGESTED_METRICS);
}

/**
 * Chooses the paths of a benchmark created in the transaction of `tx` (it has no results yet), so
 * that its values are complete, and filters and sorts read the table, from its first upload on: the
 * same choice, digest and rows as a later reconcile would make, which then finds nothing to do.
 * Whoever creates the benchmark (a user, an administrator, through the API).
 */
export async function choosePathsOfNewBenchmark(
  tx: { execute: (sql: string, params: unknown[]) => Promise<unknown> },
  benchmarkId: string,
  schema: unknown,
): Promise<void> {
  const paths = metricValuePaths(schema);
  if (paths.length) {
    await tx.execute(
      'insert into metric_path (benchmark_id, path, slot) select ?::uuid, array(select jsonb_array_elements_text(e)), ' +
        'case when i <= ? then i end from jsonb_array_elements(?::jsonb) with ordinality as a(e, i)',
      [benchmarkId, KEY_SLOTS, JSON.stringify(paths)],
    );
  }
  await tx.execute(
    "insert into metric_benchmark (benchmark_id, digest, complete, paths_xmax) select id, md5(json_schema::text) || ':' || ?, true, null " +
      'from benchmark where id = ?',
    [CHOICE_VERSION, benchmarkId],
  );
}

/**
 * The id of the path when the benchmark's values are complete and the path is one of its paths;
 * null otherwise (read the documents). Called in the comparison's snapshot: complete there means
 * every row of that snapshot is there.
 */
export async function completeMetricPath(em: EntityManager, benchmarkId: string, path: readonly string[]): Promise<number | null> {
  const [row] = await em.execute<{ id: number }[]>(
    'select p.id from metric_benchmark m join metric_path p on p.benchmark_id = m.benchmark_id and p.path = ?::text[] ' +
      'where m.benchmark_id = ? and m.complete',
    [[...path], benchmarkId],
  );
  return row?.id ?? null;
}

/**
 * A batch of the pass: the rows of the results in a range of heap blocks, of the benchmarks the
 * pass is for, that they do not have yet (a result written since its paths were chosen has them
 * from the trigger; one of a benchmark whose schema gained a path lacks that path's only).
 *
 * The rows the batch's results have already are read once, one lookup of the result index per
 * result (usually finding none), and the pairs to write are checked against them in a hash: a
 * lookup per (result, path) would read every row of the result for each of its paths.
 */
const BATCH_SQL =
  'with had as materialized (select v.result_id, v.path_id from result r join metric_value v on v.result_id = r.id ' +
  'where r.ctid >= $1::tid and r.ctid < $2::tid and r.benchmark_id = any((select benchmarks from metric_backfill)::uuid[])) ' +
  metricRowsSql(
    '(select * from result where ctid >= $1::tid and ctid < $2::tid and benchmark_id = any((select benchmarks from metric_backfill)::uuid[]))',
    ' where not exists (select 1 from had h where h.result_id = n.id and h.path_id = p.id)',
  ).replace(/;\s*$/, '');
const lockSql = (key: LockKey) => `select pg_advisory_xact_lock(${key[0]}, ${key[1]})`;

/** The upkeep of the table: paths chosen again when schemas change, values filled in. */
export class MetricValues {
  private readonly queue: SerialQueue;
  private readonly batchMs: number;
  /** Heap blocks of the next batch. */
  private blocks: number;
  /** Batches of the pass so far (in this process). */
  private batches = 0;

  constructor(
    private readonly logger: Logger,
    private readonly options: {
      sessionUrl?: string;
      retryMs?: number;
      /** Heap blocks of the first batch. */
      batchBlocks?: number;
      /** How long a batch should take (the later batches' sizes follow). */
      batchMs?: number;
    } = {},
  ) {
    this.blocks = options.batchBlocks ?? BATCH_BLOCKS;
    this.batchMs = options.batchMs ?? BATCH_MS;
    this.queue = new SerialQueue({
      retryMs: options.retryMs ?? 5_000,
      onError: (err) => {
        this.logger.warn('metric values not brought up to date', { error: (err as Error).message });
        this.queue.retryLater();
      },
    });
  }

  private get closed(): boolean {
    return this.queue.closed;
  }

  /** Chooses the paths of changed benchmarks, then fills in what is missing; after the work queued. Never throws. */
  reconcile(em: EntityManager): Promise<void> {
    return this.queue.request(async () => {
      await this.choosePaths(em);
      await this.backfill(em);
    });
  }

  /** Resolves once nothing is queued, running or waiting to be tried again (the values complete, unless closed). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  /** Something queued, running or waiting to be tried again. */
  get busy(): boolean {
    return this.queue.busy;
  }

  /** Stops after the batch in flight (the pass resumes at the next start). */
  close(): Promise<void> {
    return this.queue.close();
  }

  /** Replaces the paths of every benchmark whose schema changed since they were chosen. */
  private async choosePaths(em: EntityManager): Promise<void> {
    const url = this.options.sessionUrl ?? em.config.get('clientUrl')!;
    const settled = await withOwnConnection(url, (run) => chooseMetricPaths(run, this.logger, () => this.closed), 'metric values');
    // A writer still running (e.g. a session left idle in a transaction): the benchmarks it may
    // concern wait for the next try.
    if (!settled) this.queue.retryLater();
  }

  /** Runs the pass (or the rest of it) and the next ones, on a connection of its own; another process may be at it. */
  private async backfill(em: EntityManager): Promise<void> {
    const [pending] = await em.execute<{ n: number }[]>(
      'select (select count(*) from metric_benchmark where not complete)::int + cardinality(benchmarks) as n from metric_backfill',
    );
    if (!pending?.n) return;
    const url = this.options.sessionUrl ?? em.config.get('clientUrl')!;
    await withOwnConnection(
      url,
      async (run) => {
        if (!(await tryLock(run, BACKFILL_LOCK))) {
          this.queue.retryLater();
          return;
        }
        try {
          while (!this.closed && (await this.step(run))) {}
        } finally {
          await unlock(run, BACKFILL_LOCK).catch(() => {});
        }
      },
      'metric values',
    );
  }

  /**
   * The next batch's size: as many blocks as the last batch's pace fills in `batchMs` (updates and
   * deletes of results wait for a batch), at most twice or half the last size, within
   * [MIN_BATCH_BLOCKS, MAX_BATCH_BLOCKS].
   */
  private resize(blocks: number, ms: number): void {
    if (blocks < this.blocks) return; // the end of the range: says nothing of the pace
    const paced = (blocks * this.batchMs) / Math.max(ms, 1);
    this.blocks = Math.round(Math.min(MAX_BATCH_BLOCKS, Math.max(MIN_BATCH_BLOCKS, Math.min(2 * blocks, Math.max(blocks / 2, paced)))));
  }

  /** One step of the pass: begin it, a batch, or its end. False when there is nothing left to do. */
  private async step(run: Run): Promise<boolean> {
    const [state] = (await run('select benchmarks::text[] as benchmarks, next_block, end_block from metric_backfill')) as {
      benchmarks: string[];
      next_block: string;
      end_block: string;
    }[];
    if (!state) return false;
    if (state.benchmarks.length === 0) {
      // Blocks past the table's end now hold only results written since: the triggers wrote theirs.
      let begun = 0;
      await inTransaction(run, async () => {
        await run(lockSql(CHANGE_LOCK));
        const [row] = await run(
          'update metric_backfill set benchmarks = coalesce((select array_agg(benchmark_id order by benchmark_id) from metric_benchmark where not complete ' +
            "and paths_xmax <= pg_snapshot_xmin(pg_current_snapshot())), '{}'), " +
            "next_block = 0, end_block = pg_relation_size('result') / current_setting('block_size')::int returning cardinality(benchmarks) as n",
        );
        begun = Number(row?.n ?? 0);
      });
      return begun > 0;
    }
    const from = Number(state.next_block);
    const end = Number(state.end_block);
    await inTransaction(run, async () => {
      await run(lockSql(CHANGE_LOCK));
      if (from >= end) {
        await run('update metric_benchmark set complete = true where benchmark_id = any((select benchmarks from metric_backfill)::uuid[])');
        await run("update metric_backfill set benchmarks = '{}', next_block = 0, end_block = 0");
        return;
      }
      const blocks = Math.min(end - from, this.blocks);
      // Without waiting for its WAL to reach the disk: a crash loses the batch and its position
      // together (the pass does it again), and any later commit flushes it first.
      await run('set local synchronous_commit = off');
      const started = performance.now();
      await run(BATCH_SQL, [`(${from},0)`, `(${from + blocks},0)`]);
      await run('update metric_backfill set next_block = $1', [from + blocks]);
      this.resize(blocks, performance.now() - started);
      this.batches++;
    });
    if (from >= end) {
      this.logger.debug('metric values complete', { benchmarks: state.benchmarks.length, batches: this.batches });
      this.batches = 0;
      // The planner's statistics, and the visibility map that index-only scans need.
      await run('vacuum (analyze) metric_value');
    }
    return true;
  }
}

/**
 * Chooses the paths of every benchmark whose schema changed since its paths were chosen (or that
 * has none yet), on a connection of its own: the server after start and at every benchmark change,
 * and `import-origin` once it has imported the benchmarks, before their results (whose rows the
 * insert trigger then writes). `stop`: checked between benchmarks and while waiting for writers.
 * False when writers that may have missed new paths were still running after `waitMs`: their
 * benchmarks stay incomplete (and out of a pass) until a later call finds them ended.
 */
export async function chooseMetricPaths(run: Run, logger: Logger, stop: () => boolean = () => false, waitMs = 30_000): Promise<boolean> {
  const stale = (await run(
    'select b.id from benchmark b left join metric_benchmark m on m.benchmark_id = b.id ' +
      "where m.digest is distinct from md5(b.json_schema::text) || ':' || $1 order by b.id",
    [CHOICE_VERSION],
  )) as { id: string }[];
  const removed: number[] = [];
  const rekeyed: string[] = [];
  for (const { id } of stale) {
    if (stop()) return false;
    const [row] = (await run("select md5(json_schema::text) || ':' || $1 as digest, json_schema from benchmark where id = $2", [
      CHOICE_VERSION,
      id,
    ])) as { digest: string; json_schema: unknown }[];
    if (!row) continue; // deleted meanwhile
    const replaced = await replacePaths(run, logger, id, row.digest, metricValuePaths(row.json_schema));
    removed.push(...replaced.removed);
    if (replaced.rekeyed) rekeyed.push(id);
  }
  // The writers that may have missed the new paths are those whose transaction id was assigned
  // before they were committed: every id below the current snapshot's xmax. Set after the commit
  // (here, and again at the next call should the process stop in between).
  await run('update metric_benchmark set paths_xmax = pg_snapshot_xmax(pg_current_snapshot()) where paths_xmax is null');
  const [waiting] = (await run('select max(paths_xmax)::text as xmax from metric_benchmark where not complete')) as {
    xmax: string | null;
  }[];
  if (!(waiting?.xmax || removed.length || rekeyed.length)) return true;
  if (!(await writersEnded(run, waiting?.xmax ?? null, stop, waitMs))) return false;
  // Benchmarks without results are complete at once: every later result is written by the triggers.
  await run(
    'update metric_benchmark m set complete = true where not complete and paths_xmax <= pg_snapshot_xmin(pg_current_snapshot()) ' +
      'and not exists (select 1 from result r where r.benchmark_id = m.benchmark_id and not r.hidden) ' +
      'and not exists (select 1 from result r where r.benchmark_id = m.benchmark_id and r.hidden)',
  );
  // The rows of removed paths, which writers that had not seen their removal may have added to.
  if (removed.length) await run('delete from metric_value where path_id = any($1::int[])', [removed]);
  // The rows of benchmarks whose key slots moved: the pass writes them all again.
  if (rekeyed.length) {
    await run('delete from metric_value where path_id in (select id from metric_path where benchmark_id = any($1::uuid[]))', [rekeyed]);
  }
  return true;
}

/**
 * Waits until every transaction with an id below `xmax` has ended (none when null: the
 * transactions running now); false when stopped or `waitMs` passed first.
 */
async function writersEnded(run: Run, xmax: string | null, stop: () => boolean, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  const [mark] = (await run('select coalesce($1::xid8, pg_snapshot_xmax(pg_current_snapshot()))::text as xmax', [xmax])) as {
    xmax: string;
  }[];
  for (;;) {
    const [now] = (await run('select pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 as ended', [mark!.xmax])) as { ended: boolean }[];
    if (now?.ended) return true;
    if (stop() || Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Replaces a benchmark's paths; returns the ids of those removed. No table lock: a writer in
 * flight may have read the old paths, so a benchmark that gained paths is not complete, and only
 * a pass that begins once every such writer has ended (`paths_xmax`) fills it in.
 */
async function replacePaths(
  run: Run,
  logger: Logger,
  benchmarkId: string,
  digest: string,
  paths: string[][],
): Promise<{ removed: number[]; rekeyed: boolean }> {
  let removed: number[] = [];
  let rekeyed = false;
  await inTransaction(run, async () => {
    await run(lockSql(CHANGE_LOCK));
    const [current] = (await run(
      "select md5(b.json_schema::text) || ':' || $1 as digest, m.digest as stored, m.complete from benchmark b " +
        'left join metric_benchmark m on m.benchmark_id = b.id where b.id = $2',
      [CHOICE_VERSION, benchmarkId],
    )) as { digest: string; stored: string | null; complete: boolean | null }[];
    // Deleted, changed again (the next reconcile chooses) or done by another process meanwhile.
    if (!current || current.digest !== digest || current.stored === digest) return;
    const wanted = paths.map((p) => JSON.stringify(p));
    const existing = (await run('select id, path, slot from metric_path where benchmark_id = $1', [benchmarkId])) as {
      id: number;
      path: string[];
      slot: number | null;
    }[];
    removed = existing.filter((e) => !wanted.includes(JSON.stringify(e.path))).map((e) => e.id);
    const kept = new Set(existing.map((e) => JSON.stringify(e.path)));
    const added = wanted.filter((p) => !kept.has(p));
    // Their rows are deleted once no writer can add to them any more (chooseMetricPaths).
    if (removed.length) await run('delete from metric_path where id = any($1::int[])', [removed]);
    if (added.length) {
      await run(
        'insert into metric_path (benchmark_id, path) select $1::uuid, array(select jsonb_array_elements_text(e)) from jsonb_array_elements($2::jsonb) e',
        [benchmarkId, `[${added.join(',')}]`],
      );
    }
    // The key slots follow the order of the paths; when they move, every row of the benchmark is
    // written again (its key columns), and the rows written meanwhile with the old slots are
    // deleted once no writer can add to them any more (chooseMetricPaths).
    const slotOf = new Map(wanted.slice(0, KEY_SLOTS).map((p, i) => [p, i + 1]));
    rekeyed = existing.some((e) => (slotOf.get(JSON.stringify(e.path)) ?? null) !== e.slot) || added.some((p) => slotOf.has(p));
    if (rekeyed) {
      await run('update metric_path set slot = null where benchmark_id = $1', [benchmarkId]);
      await run(
        'update metric_path p set slot = s.i from jsonb_array_elements($2::jsonb) with ordinality as s(e, i) ' +
          'where p.benchmark_id = $1 and p.path = array(select jsonb_array_elements_text(s.e))',
        [benchmarkId, `[${[...slotOf.keys()].join(',')}]`],
      );
    }
    // Complete when nothing was added to complete values (or there is nothing to keep); a
    // benchmark without results is marked complete by chooseMetricPaths once no writer can have
    // missed its paths.
    const complete = added.length === 0 && !rekeyed && (current.complete === true || paths.length === 0);
    await run(
      'insert into metric_benchmark (benchmark_id, digest, complete, paths_xmax) values ($1, $2, $3, null) ' +
        'on conflict (benchmark_id) do update set digest = excluded.digest, complete = excluded.complete, ' +
        'paths_xmax = case when excluded.complete then metric_benchmark.paths_xmax end',
      [benchmarkId, digest, complete],
    );
    if (added.length || rekeyed) await run('update metric_backfill set benchmarks = array_remove(benchmarks, $1::uuid)', [benchmarkId]);
    logger.debug('metric value paths chosen', { benchmark: benchmarkId, paths: paths.length });
  });
  return { removed, rekeyed };
}

async function inTransaction(run: Run, work: () => Promise<void>): Promise<void> {
  await run('begin');
  try {
    await work();
    await run('commit');
  } catch (err) {
    await run('rollback').catch(() => {});
    throw err;
  }
}

/** The metrics domain: the table's upkeep (its connection released with the app) and what lists read from it. */
export function startMetrics(stack: DisposalStack, logger: Logger, sessionUrl: string): { values: MetricValues; table: MetricTable } {
  return { values: stack.use('metric values', new MetricValues(logger, { sessionUrl }), (m) => m.close()), table: new MetricTable() };
}
