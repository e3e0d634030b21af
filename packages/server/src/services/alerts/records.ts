/**
 * Change records (docs/alerts.md): every change point of a watched series is one record of that
 * watch, keyed by the result where the change starts. `refreshWatch` segments the watch's series
 * as GET /results:changes does (visible results only) and brings its records up to date in one
 * transaction, with the outbox rows (alert_event) of what it changed: a new point is an open record
 * and a `change.detected` event; a point no longer found is `gone`; found again, it is what it was
 * before (its decision kept), without a new event.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../../core/caller.ts';
import { errors } from '../../core/errors.ts';
import { formatTimestamp } from '../../core/format.ts';
import { lockKeyOf } from '../../db/advisory-lock.ts';
import { transaction } from '../../db/transaction.ts';
import { findChanges } from '../changes/changes.ts';
import type { ChangesSegmenter } from '../changes/changes-segmenter.ts';
import { findWatch, requireOwner, type WatchRow, watchQuery } from './watches.ts';

type Side = { n: number; mean: number; median: number };
type Ref = { id: string; name: string };

export interface RecordRow {
  id: string;
  watch_id: string;
  benchmark_id: string;
  metric: string;
  group_by: 'flavor' | 'site';
  owner_iss: string;
  owner_sub: string;
  result_id: string;
  site: Ref;
  flavor: Ref | null;
  at: Date;
  before: Side;
  after: Side;
  magnitude: number | null;
  pvalue: number;
  direction: 'regression' | 'improvement';
  first_seen_datetime: Date;
  decision: 'open' | 'acknowledged' | 'dismissed';
  gone: boolean;
  decided_iss: string | null;
  decided_sub: string | null;
  decided_datetime: Date | null;
  note: string | null;
}

export type ChangeState = 'open' | 'acknowledged' | 'dismissed' | 'gone';

/** Records with their watch's series and owner. */
export const RECORDS = 'change_record c join watch w on w.id = c.watch_id';
export const RECORD_COLUMNS = 'c.*, w.benchmark_id, w.metric, w.group_by, w.owner_iss, w.owner_sub';

export function recordView(r: RecordRow) {
  return {
    id: r.id,
    watch_id: r.watch_id,
    benchmark_id: r.benchmark_id,
    metric: r.metric,
    group_by: r.group_by,
    site: r.site,
    flavor: r.flavor,
    at: formatTimestamp(r.at),
    result_id: r.result_id,
    before: r.before,
    after: r.after,
    magnitude: r.magnitude,
    pvalue: r.pvalue,
    direction: r.direction,
    first_seen: formatTimestamp(r.first_seen_datetime),
    state: (r.gone ? 'gone' : r.decision) as ChangeState,
    decided_by: r.decided_iss === null ? null : { iss: r.decided_iss, sub: r.decided_sub! },
    decided_datetime: r.decided_datetime === null ? null : formatTimestamp(r.decided_datetime),
    note: r.note,
  };
}

export type RecordView = ReturnType<typeof recordView>;

/** Writes one outbox row for a user (the webhooks deliver it). */
export async function writeEvent(tx: EntityManager, user: { iss: string; sub: string }, type: string, data: unknown): Promise<void> {
  await tx.execute('insert into alert_event (id, user_iss, user_sub, type, data) values (?, ?, ?, ?, ?::jsonb)', [
    randomUUID(),
    user.iss,
    user.sub,
    type,
    JSON.stringify(data),
  ]);
}

async function recordsOf(tx: EntityManager, where: string, params: unknown[]): Promise<RecordRow[]> {
  return tx.execute<RecordRow[]>(`select ${RECORD_COLUMNS} from ${RECORDS} where ${where}`, params);
}

/**
 * Segments the watch's series and brings its records up to date. Two processes never refresh one
 * watch at once: the transaction holds the watch's advisory lock, and when another holds it this
 * one does nothing and answers false (the other may have read before the latest write: the
 * caller tries again later).
 */
export async function refreshWatch(em: EntityManager, watch: WatchRow, segmenter?: ChangesSegmenter): Promise<boolean> {
  const [first, second] = lockKeyOf(`watch ${watch.id}`);
  return transaction(em, async (tx) => {
    const [lock] = await tx.execute<{ ok: boolean }[]>('select pg_try_advisory_xact_lock(?::int, ?::int) as ok', [first, second]);
    if (!lock!.ok) return false;
    const { answer } = await findChanges(tx, watchQuery(watch), { segmenter });
    const found = answer.groups.flatMap((g) => g.changes.map((c) => ({ ...c, site: g.site, flavor: g.flavor })));
    const known = new Map((await recordsOf(tx, 'c.watch_id = ?', [watch.id])).map((r) => [r.result_id, r]));
    const owner = { iss: watch.owner_iss, sub: watch.owner_sub };
    for (const c of found) {
      const values = [JSON.stringify(c.site), JSON.stringify(c.flavor), `${c.at}Z`, JSON.stringify(c.before), JSON.stringify(c.after)];
      const record = known.get(c.result_id);
      known.delete(c.result_id);
      if (record) {
        await tx.execute(
          'update change_record set site = ?::jsonb, flavor = ?::jsonb, at = ?::timestamptz, before = ?::jsonb, after = ?::jsonb, ' +
            'magnitude = ?, pvalue = ?, direction = ?, gone = false where id = ?',
          [...values, c.magnitude, c.pvalue, c.direction, record.id],
        );
        continue;
      }
      const id = randomUUID();
      await tx.execute(
        'insert into change_record (id, watch_id, result_id, site, flavor, at, before, after, magnitude, pvalue, direction) ' +
          'values (?, ?, ?, ?::jsonb, ?::jsonb, ?::timestamptz, ?::jsonb, ?::jsonb, ?, ?, ?)',
        [id, watch.id, c.result_id, ...values, c.magnitude, c.pvalue, c.direction],
      );
      const [created] = await recordsOf(tx, 'c.id = ?', [id]);
      await writeEvent(tx, owner, 'change.detected', recordView(created!));
    }
    const lost = [...known.values()].filter((r) => !r.gone).map((r) => r.id);
    if (lost.length) await tx.execute('update change_record set gone = true where id = any(?::uuid[])', [lost]);
    return true;
  });
}

export async function findRecord(em: EntityManager, id: string): Promise<RecordRow> {
  const [row] = await recordsOf(em, 'c.id = ?', [id]);
  if (!row) throw errors.notFound('Change record', id);
  return row;
}

const EVENT_OF = { acknowledged: 'change.acknowledged', dismissed: 'change.dismissed' } as const;

/** Acknowledges, dismisses or reopens a record (its watch's owner or an administrator), keeping who, when and the note. */
export async function decide(
  em: EntityManager,
  caller: Caller,
  id: string,
  decision: 'open' | 'acknowledged' | 'dismissed',
  note: string | undefined,
): Promise<RecordView> {
  requireOwner(caller, await findRecord(em, id));
  return transaction(em, async (tx) => {
    await tx.execute(
      'update change_record set decision = ?, decided_iss = ?, decided_sub = ?, decided_datetime = now(), note = ? where id = ?',
      [decision, caller.identity.iss, caller.identity.sub, note ?? null, id],
    );
    const view = recordView(await findRecord(tx, id));
    if (decision !== 'open') {
      const watch = await findWatch(tx, view.watch_id);
      await writeEvent(tx, { iss: watch.owner_iss, sub: watch.owner_sub }, EVENT_OF[decision], view);
    }
    return view;
  });
}
