/**
 * Watches (docs/alerts.md): the parameters of GET /results:changes kept on the server, with their
 * defaults resolved, so that a query and a watch with the same parameters are the same series.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import type { WatchInput } from '@benchmarks/sdk/contract/alerts';
import type { Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { formatTimestamp } from '../../core/format.ts';
import { Where } from '../../db/sql.ts';
import { transaction } from '../../db/transaction.ts';
import { getItem, paginate } from '../catalogue/catalogue.ts';
import { benchmarks } from '../catalogue/benchmarks.ts';
import { metricPath } from '../compare/compare.ts';
import type { ChangesParams } from '../changes/changes.ts';
import { resultWhere } from '../results/result-query.ts';
import { columnKey } from '../query/keyset.ts';

type Input = Static<typeof WatchInput>;

/** The result filters a watch keeps (those of GET /results:changes but the benchmark). */
const FILTER_KEYS = [
  'site_id',
  'flavor_id',
  'tags_ids',
  'upload_before',
  'upload_after',
  'execution_before',
  'execution_after',
  'filters',
] as const;

export interface WatchRow {
  id: string;
  owner_iss: string;
  owner_sub: string;
  benchmark_id: string;
  metric: string;
  group_by: 'flavor' | 'site';
  filters: Record<string, unknown>;
  better: 'higher' | 'lower' | null;
  max_pvalue: number;
  min_magnitude: number;
  min_size: number;
  /** Seconds. */
  stale_after: number | null;
  created_datetime: Date;
}

const UNITS: [string, number][] = [
  ['w', 604_800],
  ['d', 86_400],
  ['h', 3600],
  ['m', 60],
];
const durationSeconds = (text: string) => Number(text.slice(0, -1)) * UNITS.find(([u]) => u === text.at(-1))![1];
const durationText = (seconds: number) => {
  const [unit, size] = UNITS.find(([, size]) => seconds % size === 0) ?? ['m', 60];
  return `${Math.round(seconds / size)}${unit}`;
};

/** The series parameters as stored and matched: defaults resolved, only the filters given. */
export function seriesParams(query: Omit<ChangesParams, 'format' | 'changed_after'>) {
  const filters: Record<string, unknown> = {};
  for (const key of FILTER_KEYS) if (query[key] !== undefined) filters[key] = query[key];
  return {
    benchmark_id: query.benchmark_id,
    metric: query.metric,
    group_by: query.group_by ?? 'flavor',
    filters,
    better: query.better ?? null,
    max_pvalue: query.max_pvalue ?? 0.001,
    min_magnitude: query.min_magnitude ?? 0.02,
    min_size: query.min_size ?? 5,
  };
}

/** The series parameters as the watch table's columns hold them, in its order (benchmark_id … min_size). */
function seriesValues(p: ReturnType<typeof seriesParams>): unknown[] {
  return [p.benchmark_id, p.metric, p.group_by, JSON.stringify(p.filters), p.better, p.max_pvalue, p.min_magnitude, p.min_size];
}

/** The query of GET /results:changes a watch segments. */
export function watchQuery(w: WatchRow): ChangesParams {
  return {
    benchmark_id: w.benchmark_id,
    metric: w.metric,
    group_by: w.group_by,
    ...w.filters,
    ...(w.better ? { better: w.better } : {}),
    max_pvalue: w.max_pvalue,
    min_magnitude: w.min_magnitude,
    min_size: w.min_size,
  };
}

export function watchView(w: WatchRow) {
  return {
    id: w.id,
    owner: { iss: w.owner_iss, sub: w.owner_sub },
    benchmark_id: w.benchmark_id,
    metric: w.metric,
    group_by: w.group_by,
    ...w.filters,
    better: w.better,
    max_pvalue: w.max_pvalue,
    min_magnitude: w.min_magnitude,
    min_size: w.min_size,
    stale_after: w.stale_after === null ? null : durationText(w.stale_after),
    created: formatTimestamp(w.created_datetime),
  };
}

export const WATCH_COLUMNS = 'w.*, extract(epoch from w.stale_after)::float8 as stale_after';

export const isOwner = (caller: Caller, w: { owner_iss: string; owner_sub: string }) =>
  w.owner_iss === caller.identity.iss && w.owner_sub === caller.identity.sub;

/** 403 NOT_OWNER unless the caller owns the watch or is an administrator. */
export function requireOwner(caller: Caller, w: { owner_iss: string; owner_sub: string }): void {
  if (!isOwner(caller, w) && !caller.isAdmin) {
    throw new AppError(403, 'NOT_OWNER', 'Only the owner of the watch or an administrator may do this.');
  }
}

export async function findWatch(em: EntityManager, id: string): Promise<WatchRow> {
  const [row] = await em.execute<WatchRow[]>(`select ${WATCH_COLUMNS} from watch w where w.id = ?`, [id]);
  if (!row) throw errors.notFound('Watch', id);
  return row;
}

export async function getWatch(em: EntityManager, caller: Caller, id: string) {
  const w = await findWatch(em, id);
  requireOwner(caller, w);
  return w;
}

/** Checks the parameters as GET /results:changes would (404 benchmark, 422 metric or filters), then stores the watch. */
export async function createWatch(em: EntityManager, caller: Caller, body: Input, maxWatches: number): Promise<WatchRow> {
  metricPath(body.metric);
  resultWhere(body, { visible: true });
  await getItem(em, benchmarks, body.benchmark_id);
  const params = seriesParams(body);
  const id = randomUUID();
  await transaction(em, async (tx) => {
    const { iss, sub } = caller.identity;
    if (maxWatches > 0) {
      await tx.execute('select 1 from app_user where iss = ? and sub = ? for no key update', [iss, sub]);
      const [held] = await tx.execute<{ n: number }[]>('select count(*)::int as n from watch where owner_iss = ? and owner_sub = ?', [
        iss,
        sub,
      ]);
      if (held!.n >= maxWatches) {
        const detail = `You hold ${held!.n} watches, the most one user may (${maxWatches}): delete some first.`;
        throw errors.conflict('TOO_MANY_WATCHES', detail, { limit: maxWatches });
      }
    }
    await tx.execute(
      'insert into watch (id, owner_iss, owner_sub, benchmark_id, metric, group_by, filters, better, max_pvalue, min_magnitude, min_size, stale_after) ' +
        "values (?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ? * interval '1 second')",
      [id, iss, sub, ...seriesValues(params), body.stale_after ? durationSeconds(body.stale_after) : null],
    );
  });
  return findWatch(em, id);
}

export async function deleteWatch(em: EntityManager, caller: Caller, id: string): Promise<void> {
  requireOwner(caller, await findWatch(em, id));
  await em.execute('delete from watch where id = ?', [id]);
}

/** The caller's watches (administrators: every one), newest first. */
export function listWatches(
  em: EntityManager,
  caller: Caller,
  query: { benchmark_id?: string; page?: number; per_page?: number; cursor?: string },
) {
  const where = new Where();
  if (!caller.isAdmin) where.add('w.owner_iss = ? and w.owner_sub = ?', caller.identity.iss, caller.identity.sub);
  if (query.benchmark_id) where.add('w.benchmark_id = ?', query.benchmark_id);
  const keys = [columnKey('w.created_datetime', true), columnKey('w.id', true, true)];
  return paginate(em, { from: 'watch w', columns: WATCH_COLUMNS, name: 'watches' }, where, keys, query, watchView);
}

/** Watches with exactly these series parameters (GET /results:changes brings their records up to date). */
export async function watchesOf(em: EntityManager, query: ChangesParams): Promise<WatchRow[]> {
  return em.execute<WatchRow[]>(
    `select ${WATCH_COLUMNS} from watch w where benchmark_id = ? and metric = ? and group_by = ? and filters = ?::jsonb ` +
      'and better is not distinct from ?::text and max_pvalue = ? and min_magnitude = ? and min_size = ?',
    seriesValues(seriesParams(query)),
  );
}
