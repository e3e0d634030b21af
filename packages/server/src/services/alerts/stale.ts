/**
 * Stale series (docs/alerts.md): a group of a watch with `stale_after` that has received no
 * visible result (by upload time) for that long is announced once (`series.stale`), and again when
 * data comes back (`series.resumed`). `watch_group` remembers which groups were announced.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { formatTimestamp } from '../../core/format.ts';
import { lockKeyOf } from '../../db/advisory-lock.ts';
import { transaction } from '../../db/transaction.ts';
import { resultWhere } from '../results/result-query.ts';
import { writeEvent } from './records.ts';
import { WATCH_COLUMNS, type WatchRow, watchQuery } from './watches.ts';

interface GroupRow {
  g: string;
  last: Date;
  stale_now: boolean;
  stale: boolean | null;
  site_id: string;
  site_name: string;
  flavor_id: string | null;
  flavor_name: string | null;
}

/** The API's and the explorer's addresses of one group's series, with the API's parameter names. */
export function seriesLinks(w: WatchRow, group: { site_id: string; flavor_id: string | null }) {
  const params = new URLSearchParams({ benchmark_id: w.benchmark_id, metric: w.metric, group_by: w.group_by });
  if (w.group_by === 'site') params.set('site_id', group.site_id);
  else params.set('flavor_id', group.flavor_id!);
  return { api: `/api/v1/results:changes?${params}`, explorer: `/explore/series?${params}` };
}

async function checkWatch(em: EntityManager, w: WatchRow): Promise<void> {
  const { where } = resultWhere(watchQuery(w), { visible: true });
  const bySite = w.group_by === 'site';
  const names = bySite ? 'join site si on si.id = l.g' : 'join flavor f on f.id = l.g join site si on si.id = f.site_id';
  const [first, second] = lockKeyOf(`stale ${w.id}`);
  await transaction(em, async (tx) => {
    const [lock] = await tx.execute<{ ok: boolean }[]>('select pg_try_advisory_xact_lock(?::int, ?::int) as ok', [first, second]);
    if (!lock!.ok) return; // another process checks it now
    const rows = await tx.execute<GroupRow[]>(
      `select l.g, l.last, l.last < now() - ? * interval '1 second' as stale_now, wg.stale, si.id as site_id, si.name as site_name, ` +
        `${bySite ? 'null as flavor_id, null as flavor_name' : 'f.id as flavor_id, f.name as flavor_name'} ` +
        `from (select ${bySite ? 'r.site_id' : 'r.flavor_id'} as g, max(r.upload_datetime) as last from result r ${where.toSql()} group by 1) l ` +
        `${names} left join watch_group wg on wg.watch_id = ? and wg.group_id = l.g`,
      [w.stale_after, ...where.params, w.id],
    );
    for (const row of rows) {
      if (row.stale !== null && row.stale === row.stale_now) continue;
      await tx.execute(
        'insert into watch_group (watch_id, group_id, stale) values (?, ?, ?) on conflict (watch_id, group_id) do update set stale = excluded.stale',
        [w.id, row.g, row.stale_now],
      );
      if (row.stale === null && !row.stale_now) continue;
      const data = {
        watch_id: w.id,
        benchmark_id: w.benchmark_id,
        metric: w.metric,
        group_by: w.group_by,
        site: { id: row.site_id, name: row.site_name },
        flavor: row.flavor_id ? { id: row.flavor_id, name: row.flavor_name } : null,
        last_result_datetime: formatTimestamp(row.last),
        links: seriesLinks(w, row),
      };
      await writeEvent(tx, { iss: w.owner_iss, sub: w.owner_sub }, row.stale_now ? 'series.stale' : 'series.resumed', data);
    }
  });
}

/** Checks every watch with `stale_after`. */
export async function checkStale(em: EntityManager): Promise<void> {
  const watches = await em.execute<WatchRow[]>(`select ${WATCH_COLUMNS} from watch w where w.stale_after is not null`);
  for (const w of watches) await checkWatch(em, w);
}
