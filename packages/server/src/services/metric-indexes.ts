/**
 * Indexes for sorting a benchmark's results by its headline metrics (docs/querying.md, "Fast
 * sorting by a metric"). A benchmark's json_schema marks the values worth showing with the
 * annotation `suggestToUser: true`; each such numeric property gets two partial indexes on the
 * result table, limited to that benchmark's visible results:
 *
 * - `result_metric_<hash>`: (value at the path, id) for results whose value there is a number, so
 *   that `GET /results?benchmark_id=…&sort_by=±json.<path>` reads the top of an index instead of
 *   sorting every result of the benchmark (and a range filter on the path uses it too);
 * - `result_metric_<hash>_x`: (id) for the other results (no number at the path, usually none), so
 *   that the rest of the order is found without a scan either.
 *
 * They are built in the background (`create index concurrently`) when a benchmark is approved or
 * its schema changes, and at start for approved benchmarks that lack them. DDL takes no bound
 * parameters: the statement is composed by PostgreSQL's own format() (%I, %L) from bound values,
 * and only property names made of letters, digits, `_` and `-` are indexed.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.ts';
import { withOwnConnection } from '../db/own-connection.ts';

/** At most this many indexed metrics per benchmark (each costs two indexes on every upload of it). */
export const MAX_METRICS_PER_BENCHMARK = 8;
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DEPTH = 8;

type SchemaNode = { type?: unknown; properties?: Record<string, unknown>; suggestToUser?: unknown };

function isNumeric(type: unknown): boolean {
  if (type === 'number' || type === 'integer') return true;
  return Array.isArray(type) && type.length > 0 && type.every((t) => t === 'number' || t === 'integer' || t === 'null');
}

/** The paths of the numeric properties a schema suggests to users, in document order. */
export function suggestedMetrics(schema: unknown): string[][] {
  const out: string[][] = [];
  const walk = (node: unknown, path: string[]) => {
    if (!node || typeof node !== 'object' || out.length >= MAX_METRICS_PER_BENCHMARK || path.length > MAX_DEPTH) return;
    const n = node as SchemaNode;
    if (path.length && n.suggestToUser === true && isNumeric(n.type)) out.push(path);
    if (n.properties && typeof n.properties === 'object') {
      for (const [key, child] of Object.entries(n.properties)) {
        if (SAFE_SEGMENT.test(key)) walk(child, [...path, key]);
      }
    }
  };
  walk(schema, []);
  return out.slice(0, MAX_METRICS_PER_BENCHMARK);
}

/** The name of the numbers index of (benchmark, path); the other one adds `_x`. */
export function metricIndexName(benchmarkId: string, path: readonly string[]): string {
  return `result_metric_${createHash('sha256').update(`${benchmarkId}\u0000${path.join('.')}`).digest('hex').slice(0, 24)}`;
}

/** The two CREATE INDEX statements, composed by PostgreSQL from bound values. */
const DDL_SQL =
  "select format('create index concurrently if not exists %I on result ((json #> %L::text[]), id) " +
  "where benchmark_id = %L::uuid and not hidden and jsonb_typeof(json #> %L::text[]) = ''number''', ?::text, ?::text, ?::text, ?::text) as numbers, " +
  "format('create index concurrently if not exists %I on result (id) " +
  "where benchmark_id = %L::uuid and not hidden and jsonb_typeof(json #> %L::text[]) is distinct from ''number''', ?::text, ?::text, ?::text) as others";

const pgArray = (path: readonly string[]) => `{${path.join(',')}}`;

/** What is known of the metric indexes of this database, and the builds under way. */
export class MetricIndexes {
  private readonly known = new Map<string, { ready: boolean; checked: number }>();
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly logger: Logger,
    /** How long an index found missing is not looked up again. */
    private readonly recheckMs = 30_000,
  ) {}

  /** True when both indexes of (benchmark, path) exist and are valid (remembered once true). */
  async ready(em: EntityManager, benchmarkId: string, path: readonly string[]): Promise<boolean> {
    const name = metricIndexName(benchmarkId, path);
    const hit = this.known.get(name);
    if (hit && (hit.ready || Date.now() - hit.checked < this.recheckMs)) return hit.ready;
    const rows = await em.execute<{ n: number }[]>(
      'select count(*)::int as n from pg_index i join pg_class c on c.oid = i.indexrelid ' +
        'where c.relname = any(array[?]::text[]) and i.indisvalid and i.indisready',
      [[name, `${name}_x`]],
    );
    const ready = rows[0]!.n === 2;
    this.known.set(name, { ready, checked: Date.now() });
    if (this.known.size > 10_000) this.known.clear();
    return ready;
  }

  /**
   * Builds the missing indexes of a benchmark's suggested metrics, one statement at a time after
   * the builds already queued. Never throws: a failure is logged and tried again at the next start.
   */
  ensure(em: EntityManager, benchmark: { id: string; json_schema: unknown }): Promise<void> {
    const metrics = suggestedMetrics(benchmark.json_schema);
    if (metrics.length === 0) return this.queue;
    this.queue = this.queue.then(async () => {
      for (const path of metrics) {
        if (this.closed) return;
        const name = metricIndexName(benchmark.id, path);
        try {
          const [ddl] = await em.execute<{ numbers: string; others: string }[]>(DDL_SQL, [
            name, pgArray(path), benchmark.id, pgArray(path),
            `${name}_x`, benchmark.id, pgArray(path),
          ]);
          const started = Date.now();
          // A build that failed (deadlock, cancel, crash) leaves an invalid index that `if not
          // exists` would keep: drop it first.
          const invalid = await em.execute<{ name: string }[]>(
            'select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = any(array[?]::text[]) and not i.indisvalid',
            [[name, `${name}_x`]],
          );
          const statements: string[] = [];
          for (const { name: broken } of invalid) {
            const [drop] = await em.execute<{ ddl: string }[]>("select format('drop index concurrently if exists %I', ?::text) as ddl", [broken]);
            statements.push(drop!.ddl);
          }
          statements.push(ddl!.numbers, ddl!.others);
          // A build may take minutes on a large table: on a connection of its own, without the
          // application pool's statement timeout, holding none of the pool's connections.
          await withOwnConnection(em, async (run) => {
            for (const sql of statements) await run(sql);
          });
          this.known.delete(name);
          this.logger.debug('metric index ready', { benchmark: benchmark.id, path: path.join('.'), ms: Date.now() - started });
        } catch (err) {
          if (this.closed) return;
          this.logger.warn('metric index not built', { benchmark: benchmark.id, path: path.join('.'), error: (err as Error).message });
        }
      }
    });
    return this.queue;
  }

  /** Queues the builds of every approved benchmark's missing metric indexes. */
  async ensureAll(em: EntityManager): Promise<void> {
    const benchmarks = await em.execute<{ id: string; json_schema: unknown }[]>("select id, json_schema from benchmark where status = 'approved' order by upload_datetime, id");
    for (const b of benchmarks) void this.ensure(em, b);
  }

  /** Resolves when the builds queued so far are done. */
  idle(): Promise<void> {
    return this.queue;
  }

  /** Stops after the statement in flight; resolves when nothing runs any more. */
  async close(): Promise<void> {
    this.closed = true;
    await this.queue;
  }
}
