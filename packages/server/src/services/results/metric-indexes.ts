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
 * Every index of the result table costs the planning of every statement on it and each upload of
 * the benchmark an entry, so they are bounded (docs/security.md, "Metric indexes"): at most
 * MAX_METRICS_PER_BENCHMARK metrics per benchmark and `maxIndexes` indexes in all, chosen by
 * `chooseMetrics`. The set is reconciled, in the background, whenever a benchmark is approved,
 * changed or deleted (services/catalogue/benchmarks.ts schedules it), and at start: indexes no
 * longer chosen (deleted or unapproved benchmark, metric no longer suggested, over the cap) are
 * dropped, missing ones built (`concurrently`, on a connection of their own). DDL takes no bound parameters: the statement is composed by
 * PostgreSQL's own format() (%I, %L) from bound values, and only property names made of letters,
 * digits, `_` and `-` are indexed.
 *
 * Several processes may share the database (docs/deploy.md, "Many processes"). Each metric's pair
 * of indexes is built or dropped under an advisory lock of its own (db/advisory-lock.ts), and its
 * state read again once the lock is held: a process that cannot take the lock leaves that metric
 * to the other and looks again a few seconds later; an index whose build is under way
 * (pg_stat_progress_create_index) is never dropped; one left invalid by a build that crashed is
 * dropped and built again by whichever process gets there first. The DDL statements of all
 * processes run one at a time (another lock): two `create index concurrently` on one table wait
 * for each other's snapshots and one of them fails with a deadlock.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../core/logger.ts';
import { lockKeyOf, lockWithin, tryLock, unlock, type LockKey, type Run } from '../../db/advisory-lock.ts';
import { withOwnConnection } from '../../db/own-connection.ts';
import { SerialQueue } from '../runtime/serial-queue.ts';
import { MetricValues } from './metric-values.ts';

/** At most this many indexed metrics per benchmark (two indexes each). */
export const MAX_METRICS_PER_BENCHMARK = 4;
const SAFE_SEGMENT = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_DEPTH = 8;
/** The names this module creates; only these are ever dropped. */
const OWN_NAME = '^result_metric_[0-9a-f]{24}(_x)?$';

type SchemaNode = { type?: unknown; properties?: Record<string, unknown>; suggestToUser?: unknown };

function isNumeric(type: unknown): boolean {
  if (type === 'number' || type === 'integer') return true;
  return Array.isArray(type) && type.length > 0 && type.every((t) => t === 'number' || t === 'integer' || t === 'null');
}

/**
 * The paths of the numeric properties a schema suggests to users, depth first in the order of the
 * stored schema's keys (jsonb's: shorter keys first, then bytewise), at most MAX_METRICS_PER_BENCHMARK.
 */
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
  return `result_metric_${createHash('sha256')
    .update(`${benchmarkId}\u0000${path.join('.')}`)
    .digest('hex')
    .slice(0, 24)}`;
}

export interface ChosenMetric {
  benchmark: string;
  path: string[];
  name: string;
}

/**
 * The metrics that get indexes, at most ⌊maxIndexes / 2⌋ (two indexes each): every benchmark's first
 * suggested metric, benchmarks in the order given (oldest first), then every benchmark's second,
 * and so on. Deterministic; a newly approved benchmark never takes the place of an older one's
 * metric of the same rank, and every benchmark gets its headline metric before any gets a second.
 */
export function chooseMetrics(benchmarks: readonly { id: string; metrics: readonly string[][] }[], maxIndexes: number): ChosenMetric[] {
  const room = Math.floor(maxIndexes / 2);
  const out: ChosenMetric[] = [];
  for (let rank = 0; rank < MAX_METRICS_PER_BENCHMARK; rank++) {
    for (const b of benchmarks) {
      if (out.length >= room) return out;
      const path = b.metrics[rank];
      if (path) out.push({ benchmark: b.id, path: [...path], name: metricIndexName(b.id, path) });
    }
  }
  return out;
}

/** The two CREATE INDEX statements, composed by PostgreSQL from bound values. */
const DDL_SQL =
  "select format('create index concurrently if not exists %I on result ((json #> %L::text[]), id) " +
  "where benchmark_id = %L::uuid and not hidden and jsonb_typeof(json #> %L::text[]) = ''number''', ?::text, ?::text, ?::text, ?::text) as numbers, " +
  "format('create index concurrently if not exists %I on result (id) " +
  "where benchmark_id = %L::uuid and not hidden and jsonb_typeof(json #> %L::text[]) is distinct from ''number''', ?::text, ?::text, ?::text) as others";
const DROP_SQL = "select format('drop index concurrently if exists %I', ?::text) as ddl";
/** This module's indexes on the result table (of the schema in use), and whether each is usable. */
const EXISTING_SQL =
  'select c.relname as name, i.indisvalid and i.indisready as valid from pg_index i join pg_class c on c.oid = i.indexrelid ' +
  "where i.indrelid = 'result'::regclass and c.relname ~ ?";
/** The same for some of them, read on the maintenance connection under their lock, with whether a build of each is under way (any session). */
const STATE_SQL =
  'select c.relname as name, i.indisvalid and i.indisready as valid, ' +
  'exists (select 1 from pg_stat_progress_create_index p where p.index_relid = c.oid) as building ' +
  "from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'result'::regclass and c.relname = any($1::text[])";
/** Held, across processes, while one of this module's DDL statements runs. */
const DDL_LOCK: LockKey = lockKeyOf('result_metric DDL');
/** How often a process waiting for that lock tries it again. */
const DDL_POLL_MS = 500;
/** Left to another process for now: its lock was held, or its build is under way. */
const BUSY = Symbol('busy');

type IndexState = { name: string; valid: boolean; building: boolean };

const pgArray = (path: readonly string[]) => `{${path.join(',')}}`;
/** The names of both indexes of each metric. */
const namesOf = (metrics: readonly ChosenMetric[]) => new Set(metrics.flatMap((m) => [m.name, `${m.name}_x`]));
/** Schemas are read again only when they changed (by digest): a benchmark's may be 256 KiB. */
const FETCH_CHUNK = 100;

/** What is known of the metric indexes of this database, and their upkeep. */
export class MetricIndexes {
  private readonly known = new Map<string, { ready: boolean; checked: number }>();
  private readonly metricsOf = new Map<string, { digest: string; metrics: string[][] }>();
  private readonly queue: SerialQueue;
  private readonly maxIndexes: number;
  private readonly recheckMs: number;
  private readonly sessionUrl: string | undefined;
  /**
   * The metric values table (services/results/metric-values.ts): kept up to date on the same occasions as
   * these indexes (start, a benchmark approved, changed or deleted), but not bounded by their cap.
   */
  readonly values: MetricValues;

  constructor(
    private readonly logger: Logger,
    options: {
      /** At most this many metric indexes in all (MAX_METRIC_INDEXES); 0: none. */
      maxIndexes?: number;
      /** How long an index's state is remembered before it is looked up again. */
      recheckMs?: number;
      /** How soon the indexes left to another process are looked at again. */
      retryMs?: number;
      /** Where the builds and their locks run (DATABASE_DIRECT_URL); default: the URL of the EntityManager given. */
      sessionUrl?: string;
    } = {},
  ) {
    this.maxIndexes = options.maxIndexes ?? 200;
    this.recheckMs = options.recheckMs ?? 30_000;
    const retryMs = options.retryMs ?? 5_000;
    this.sessionUrl = options.sessionUrl;
    this.queue = new SerialQueue({
      retryMs,
      onError: (err) => this.logger.warn('metric indexes not reconciled', { error: (err as Error).message }),
    });
    this.values = new MetricValues(logger, { sessionUrl: options.sessionUrl, retryMs });
  }

  private get closed(): boolean {
    return this.queue.closed;
  }

  /**
   * True when both indexes of (benchmark, path) exist and are valid. Remembered for `recheckMs`
   * (another process sharing the database may drop them; the list is still right meanwhile, only slower).
   */
  async ready(em: EntityManager, benchmarkId: string, path: readonly string[]): Promise<boolean> {
    const name = metricIndexName(benchmarkId, path);
    const hit = this.known.get(name);
    if (hit && Date.now() - hit.checked < this.recheckMs) return hit.ready;
    const rows = await em.execute<{ n: number }[]>(
      'select count(*)::int as n from pg_index i join pg_class c on c.oid = i.indexrelid ' +
        'where c.relname = any(?::text[]) and i.indisvalid and i.indisready',
      [[name, `${name}_x`]],
    );
    const ready = rows[0]!.n === 2;
    this.known.set(name, { ready, checked: Date.now() });
    if (this.known.size > 10_000) this.known.clear();
    return ready;
  }

  /**
   * Brings the indexes in line with the approved benchmarks and the cap, after the work already
   * queued (calls while one waits share it). Never throws: a failure is logged and mended at the
   * next change or start.
   */
  reconcile(em: EntityManager): Promise<void> {
    void this.values.reconcile(em.fork());
    return this.queue.request(() => this.reconcileNow(em));
  }

  /** At start: the same, which also drops what a deleted benchmark or a crashed build left behind. */
  ensureAll(em: EntityManager): Promise<void> {
    return this.reconcile(em);
  }

  /**
   * Resolves once nothing is queued, running or waiting to be tried again, here or in the metric
   * values (whose pass is then complete), unless closed meanwhile.
   */
  async idle(): Promise<void> {
    do await Promise.all([this.queue.idle(), this.values.idle()]);
    while (!this.closed && (this.queue.busy || this.values.busy));
  }

  /** Stops after the statement in flight; resolves when nothing runs any more. */
  async close(): Promise<void> {
    await Promise.all([this.queue.close(), this.values.close()]);
  }

  private async reconcileNow(em: EntityManager): Promise<void> {
    const wanted = await this.wanted(em);
    const wantedNames = namesOf(wanted);
    const existing = await em.execute<{ name: string; valid: boolean }[]>(EXISTING_SQL, [OWN_NAME]);
    const usable = new Set(existing.filter((e) => e.valid).map((e) => e.name));
    // Not chosen any more; those left invalid by a failed build (`if not exists` would keep them) are
    // dropped before they are built again.
    const drops = new Map<string, string[]>();
    for (const { name } of existing.filter((e) => !wantedNames.has(e.name))) {
      const base = name.replace(/_x$/, '');
      drops.set(base, [...(drops.get(base) ?? []), name]);
    }
    const builds = wanted.filter((m) => !usable.has(m.name) || !usable.has(`${m.name}_x`));
    if (drops.size === 0 && builds.length === 0) return;
    let busy = false;
    // A build may take minutes on a large table: on a connection of its own, without the
    // application pool's statement timeout, holding none of the pool's connections.
    await withOwnConnection(this.sessionUrl ?? em.config.get('clientUrl')!, async (run) => {
      for (const [base, names] of drops) {
        if (this.closed) return;
        if ((await this.locked(run, base, () => this.dropUnwanted(em, run, names))) === BUSY) busy = true;
      }
      this.known.clear();
      for (const m of builds) {
        if (this.closed) return;
        if ((await this.locked(run, m.name, () => this.build(run, em, m))) === BUSY) busy = true;
      }
    });
    if (busy) this.queue.retryLater();
  }

  /** The metrics that get indexes now, read afresh (only changed schemas are fetched). */
  private async wanted(em: EntityManager): Promise<ChosenMetric[]> {
    return chooseMetrics(await this.approvedMetrics(em), this.maxIndexes);
  }

  /** `work` under the lock of the metric `base` (the name of its numbers index); BUSY when another session holds it. */
  private async locked(run: Run, base: string, work: () => Promise<typeof BUSY | undefined>): Promise<typeof BUSY | undefined> {
    const key = lockKeyOf(base);
    try {
      if (!(await tryLock(run, key))) {
        this.logger.debug('metric index busy in another process: looked at again later', { index: base });
        return BUSY;
      }
    } catch (err) {
      if (!this.closed) this.logger.warn('metric index not checked', { index: base, error: (err as Error).message });
      return;
    }
    try {
      return await work();
    } finally {
      await unlock(run, key).catch(() => {});
    }
  }

  private async state(run: Run, names: readonly string[]): Promise<IndexState[]> {
    return (await run(STATE_SQL, [names])) as IndexState[];
  }

  /** Drops those of `names` still not wanted once the lock is held (another process may have approved their benchmark since). */
  private async dropUnwanted(em: EntityManager, run: Run, names: string[]): Promise<typeof BUSY | undefined> {
    try {
      const wantedNow = namesOf(await this.wanted(em));
      const states = await this.state(
        run,
        names.filter((name) => !wantedNow.has(name)),
      );
      if (states.some((s) => s.building)) return BUSY;
      for (const { name } of states) {
        if (this.closed) return;
        await this.drop(run, em, name);
        this.logger.debug('metric index dropped', { index: name });
      }
    } catch (err) {
      if (!this.closed) this.logger.warn('metric index not dropped', { index: names[0], error: (err as Error).message });
    }
  }

  private async drop(run: Run, em: EntityManager, name: string): Promise<void> {
    const [drop] = await em.execute<{ ddl: string }[]>(DROP_SQL, [name]);
    await this.ddl(run, drop!.ddl);
  }

  /** Runs one DDL statement once no other process runs one (after the one in flight, if any). */
  private async ddl(run: Run, sql: string): Promise<void> {
    const locked = await lockWithin(run, DDL_LOCK, { until: Infinity, pollMs: DDL_POLL_MS, cancelled: () => this.closed });
    if (!locked) throw new Error('stopping');
    try {
      await run(sql);
    } finally {
      await unlock(run, DDL_LOCK).catch(() => {});
    }
  }

  /** Builds both indexes of `m` unless they are valid already; drops first what a failed build left invalid. */
  private async build(run: Run, em: EntityManager, m: ChosenMetric): Promise<typeof BUSY | undefined> {
    const started = Date.now();
    try {
      const states = await this.state(run, [m.name, `${m.name}_x`]);
      if (states.some((s) => s.building)) return BUSY;
      if (states.length === 2 && states.every((s) => s.valid)) return;
      for (const broken of states.filter((s) => !s.valid)) await this.drop(run, em, broken.name);
      const [ddl] = await em.execute<{ numbers: string; others: string }[]>(DDL_SQL, [
        m.name,
        pgArray(m.path),
        m.benchmark,
        pgArray(m.path),
        `${m.name}_x`,
        m.benchmark,
        pgArray(m.path),
      ]);
      await this.ddl(run, ddl!.numbers);
      await this.ddl(run, ddl!.others);
      this.known.delete(m.name);
      this.logger.debug('metric index ready', { benchmark: m.benchmark, path: m.path.join('.'), ms: Date.now() - started });
    } catch (err) {
      if (!this.closed)
        this.logger.warn('metric index not built', { benchmark: m.benchmark, path: m.path.join('.'), error: (err as Error).message });
    }
  }

  /** Every approved benchmark's suggested metrics, oldest benchmark first. */
  private async approvedMetrics(em: EntityManager): Promise<{ id: string; metrics: string[][] }[]> {
    const rows = await em.execute<{ id: string; digest: string }[]>(
      "select id, md5(json_schema::text) as digest from benchmark where status = 'approved' order by upload_datetime, id",
    );
    const stale = rows.filter((r) => this.metricsOf.get(r.id)?.digest !== r.digest).map((r) => r.id);
    for (let i = 0; i < stale.length; i += FETCH_CHUNK) {
      const fetched = await em.execute<{ id: string; digest: string; json_schema: unknown }[]>(
        'select id, md5(json_schema::text) as digest, json_schema from benchmark where id = any(?::uuid[])',
        [stale.slice(i, i + FETCH_CHUNK)],
      );
      for (const f of fetched) this.metricsOf.set(f.id, { digest: f.digest, metrics: suggestedMetrics(f.json_schema) });
    }
    const current = new Set(rows.map((r) => r.id));
    for (const id of this.metricsOf.keys()) if (!current.has(id)) this.metricsOf.delete(id);
    return rows.map((r) => ({ id: r.id, metrics: this.metricsOf.get(r.id)?.metrics ?? [] }));
  }
}
