/**
 * GET /results:changes marks each change point that has a change record with the record's id and
 * state (docs/alerts.md). The records shown are those the feed would show the caller: of its own
 * watches, an administrator's of any watch, none to an anonymous or unregistered caller. Applied to
 * a copy of the answer after the cache, so that a remembered answer never freezes a state.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../../core/caller.ts';
import type { ChangesAnswer } from '../changes/changes.ts';
import type { ChangeState } from './records.ts';
import { isOwner, type WatchRow } from './watches.ts';

type Mark = { id: string; state: ChangeState };

export async function markChanges(em: EntityManager, caller: Caller | null, watches: WatchRow[], answer: ChangesAnswer) {
  const seen = caller?.user ? watches.filter((w) => caller.isAdmin || isOwner(caller, w)) : [];
  const points = answer.groups.flatMap((g) => g.changes.map((c) => c.result_id));
  const marks = new Map<string, Mark>();
  if (seen.length && points.length) {
    // The caller's own watch first, then the oldest: one record per point, the same one every time.
    const rows = await em.execute<{ id: string; result_id: string; state: ChangeState }[]>(
      "select c.id, c.result_id, case when c.gone then 'gone' else c.decision end as state " +
        'from change_record c join watch w on w.id = c.watch_id where c.watch_id = any(?::uuid[]) and c.result_id = any(?::uuid[]) ' +
        'order by (w.owner_iss = ? and w.owner_sub = ?) desc, w.created_datetime, w.id',
      [seen.map((w) => w.id), points, caller!.identity.iss, caller!.identity.sub],
    );
    for (const r of rows) if (!marks.has(r.result_id)) marks.set(r.result_id, { id: r.id, state: r.state });
  }
  return {
    ...answer,
    groups: answer.groups.map((g) => ({ ...g, changes: g.changes.map((c) => ({ ...c, record: marks.get(c.result_id) ?? null })) })),
  };
}
