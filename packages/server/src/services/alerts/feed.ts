/** GET /changes (docs/alerts.md, "The feed"): the caller's change records, newest first, as JSON or Atom. */
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import type { ChangesFeedQuery } from '@benchmarks/sdk/contract/alerts';
import type { Caller } from '../../core/caller.ts';
import { parseDateBound } from '../../core/dates.ts';
import { Where } from '../../db/sql.ts';
import { paginate } from '../catalogue/catalogue.ts';
import { columnKey, type KeyTerm } from '../query/keyset.ts';
import { RECORD_COLUMNS, RECORDS, type RecordView, recordView } from './records.ts';

type FeedQuery = Static<typeof ChangesFeedQuery>;

const AT: KeyTerm = { sql: 'c.at', params: [], type: 'timestamptz', descending: true, nullable: false, unique: false };

export function listRecords(em: EntityManager, caller: Caller, query: FeedQuery) {
  const where = new Where();
  if (!caller.isAdmin) where.add('w.owner_iss = ? and w.owner_sub = ?', caller.identity.iss, caller.identity.sub);
  const state = query.state ?? 'open';
  if (state === 'gone') where.add('c.gone');
  else if (state !== 'all') where.add('not c.gone and c.decision = ?', state);
  if (query.direction) where.add('c.direction = ?', query.direction);
  if (query.benchmark_id) where.add('w.benchmark_id = ?', query.benchmark_id);
  if (query.metric !== undefined) where.add('w.metric = ?', query.metric);
  if (query.watch_id) where.add('c.watch_id = ?', query.watch_id);
  if (query.since) where.add('c.first_seen_datetime >= ?', parseDateBound(query.since));
  const keys = [columnKey('c.first_seen_datetime', true), AT, columnKey('c.id', true, true)];
  return paginate(em, { from: RECORDS, columns: RECORD_COLUMNS, name: 'changes' }, where, keys, query, recordView);
}

/** Escaped for XML text and attributes; characters XML 1.0 cannot hold at all become U+FFFD. */
const escapeXml = (text: string) =>
  text
    // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML cannot hold
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '\uFFFD')
    .replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!);

const percent = (m: number | null) => (m === null ? 'n/a' : `${m >= 0 ? '+' : ''}${(m * 100).toFixed(1)} %`);

/** The page as an Atom feed (RFC 4287); `self` is the feed's own address. */
export function atomFeed(items: RecordView[], self: string, origin: string): string {
  const updated =
    items
      .map((r) => r.first_seen)
      .sort()
      .at(-1) ?? '1970-01-01T00:00:00.000';
  const entry = (r: RecordView) => {
    const group = r.flavor ? `${r.site.name} / ${r.flavor.name}` : r.site.name;
    const title = `${r.direction} ${percent(r.magnitude)} in ${r.metric} on ${group}`;
    const summary = `${r.state}: mean ${r.before.mean} → ${r.after.mean} at ${r.at}Z (p = ${r.pvalue})${r.note ? `; note: ${r.note}` : ''}`;
    return (
      `<entry><id>urn:uuid:${r.id}</id><title>${escapeXml(title)}</title><updated>${r.first_seen}Z</updated>` +
      `<link href="${escapeXml(`${origin}/api/v1/results/${r.result_id}`)}"/><summary>${escapeXml(summary)}</summary></entry>`
    );
  };
  return (
    '<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">' +
    `<id>${escapeXml(self)}</id><title>Benchmark changes</title><updated>${updated}Z</updated>` +
    `<author><name>benchmarks</name></author><link rel="self" href="${escapeXml(self)}"/>${items.map(entry).join('')}</feed>\n`
  );
}
