/**
 * The columns each resource shows in tables and CSV (JSON always carries the whole object). On a
 * narrow terminal, tables leave out the columns with a `drop` (lowest first) and cut the others but
 * the ids (`whole`): see table.ts.
 */
import type { Item, Reply } from '@benchmarks/sdk';
import type { Column } from './output.ts';

export type Submit = Item<'listSubmits'>;

const uploader = (u: { iss: string; sub: string; removed: boolean }) => `${u.sub}${u.removed ? ' (removed)' : ''} @ ${u.iss}`;

export const benchmarkColumns: Column<Reply<'getBenchmark'>>[] = [
  { header: 'id', value: (b) => b.id, whole: true },
  { header: 'name', value: (b) => b.name },
  { header: 'status', value: (b) => b.status },
  { header: 'upload_datetime', value: (b) => b.upload_datetime, drop: 2 },
  { header: 'description', value: (b) => b.description, max: 40, drop: 3 },
  { header: 'url', value: (b) => b.url, drop: 1 },
];

export const siteColumns: Column<Reply<'getSite'>>[] = [
  { header: 'id', value: (s) => s.id, whole: true },
  { header: 'name', value: (s) => s.name },
  { header: 'address', value: (s) => s.address, max: 40, drop: 3 },
  { header: 'status', value: (s) => s.status },
  { header: 'upload_datetime', value: (s) => s.upload_datetime, drop: 1 },
  { header: 'description', value: (s) => s.description, max: 40, drop: 2 },
];

export const flavorColumns: Column<Reply<'getFlavor'>>[] = [
  { header: 'id', value: (f) => f.id, whole: true },
  { header: 'site_id', value: (f) => f.site_id, whole: true, drop: 1 },
  { header: 'name', value: (f) => f.name },
  { header: 'status', value: (f) => f.status },
  { header: 'upload_datetime', value: (f) => f.upload_datetime, drop: 2 },
  { header: 'description', value: (f) => f.description, max: 40, drop: 3 },
];

export const tagColumns: Column<Reply<'getTag'>>[] = [
  { header: 'id', value: (t) => t.id, whole: true },
  { header: 'name', value: (t) => t.name },
  { header: 'status', value: (t) => t.status },
  { header: 'description', value: (t) => t.description, max: 60, drop: 1 },
];

export const resultColumns: Column<Reply<'getResult'>>[] = [
  { header: 'id', value: (r) => r.id, whole: true },
  { header: 'benchmark', value: (r) => r.benchmark.name },
  { header: 'site', value: (r) => r.site.name, drop: 5 },
  { header: 'flavor', value: (r) => r.flavor.name },
  { header: 'tags', value: (r) => r.tags.map((t) => t.name).join(' '), drop: 3 },
  { header: 'execution_datetime', value: (r) => r.execution_datetime },
  { header: 'upload_datetime', value: (r) => r.upload_datetime, drop: 1 },
  { header: 'hidden', value: (r) => r.hidden, drop: 2 },
  { header: 'json', value: (r) => r.json, max: 50, drop: 4 },
];

export const claimColumns: Column<Reply<'claimResult'>>[] = [
  { header: 'id', value: (c) => c.id, whole: true },
  { header: 'resource_type', value: (c) => c.resource_type, drop: 1 },
  { header: 'resource_id', value: (c) => c.resource_id, whole: true, drop: 4 },
  { header: 'status', value: (c) => c.status },
  { header: 'upload_datetime', value: (c) => c.upload_datetime, drop: 2 },
  { header: 'uploader', value: (c) => uploader(c.uploader), drop: 3 },
  { header: 'message', value: (c) => c.message, max: 50 },
];

/** `names`: each item's name by id (a submission carries only the id), looked up by `review list`. */
export const submitColumns = (names: ReadonlyMap<string, string>): Column<Submit>[] => [
  { header: 'resource_type', value: (s) => s.resource_type },
  { header: 'resource_id', value: (s) => s.resource_id, whole: true },
  { header: 'name', value: (s) => names.get(s.resource_id) ?? '', max: 40 },
  { header: 'uploader', value: (s) => uploader(s.uploader), drop: 2 },
  { header: 'upload_datetime', value: (s) => s.upload_datetime, drop: 1 },
];

export const userColumns: Column<Item<'listUsers'>>[] = [
  { header: 'iss', value: (u) => u.iss },
  { header: 'sub', value: (u) => u.sub, whole: true },
  { header: 'email', value: (u) => u.email },
  { header: 'registration_datetime', value: (u) => u.registration_datetime, drop: 2 },
  { header: 'terms_version', value: (u) => u.terms_version, drop: 1 },
  { header: 'removed', value: (u) => u.removed, drop: 3 },
];

export const webhookColumns: Column<Reply<'getWebhook'>>[] = [
  { header: 'id', value: (w) => w.id, whole: true },
  { header: 'url', value: (w) => w.url, max: 60 },
  { header: 'format', value: (w) => w.format, drop: 2 },
  { header: 'enabled', value: (w) => String(w.enabled) },
  { header: 'events', value: (w) => w.events.join(','), drop: 1 },
  { header: 'disabled_reason', value: (w) => w.disabled_reason ?? '', max: 60, drop: 3 },
];

export const webhookAttemptColumns: Column<Item<'listWebhookDeliveries'>>[] = [
  { header: 'attempted_datetime', value: (a) => a.attempted_datetime },
  { header: 'delivery_id', value: (a) => a.delivery_id, whole: true },
  { header: 'event_type', value: (a) => a.event_type, drop: 2 },
  { header: 'status', value: (a) => (a.status === null ? (a.error ?? '') : String(a.status)), max: 40 },
  { header: 'duration_ms', value: (a) => String(a.duration_ms), drop: 1 },
  { header: 'state', value: (a) => a.delivery_state },
  { header: 'event_id', value: (a) => a.event_id, whole: true, drop: 3 },
];

export const watchColumns: Column<Reply<'getWatch'>>[] = [
  { header: 'id', value: (w) => w.id, whole: true },
  { header: 'benchmark_id', value: (w) => w.benchmark_id, whole: true, drop: 3 },
  { header: 'metric', value: (w) => w.metric },
  { header: 'group_by', value: (w) => w.group_by, drop: 2 },
  { header: 'stale_after', value: (w) => w.stale_after ?? '', drop: 1 },
  { header: 'created', value: (w) => w.created, drop: 4 },
];

const percent = (m: number | null) => (m === null ? '' : `${m > 0 ? '+' : ''}${(m * 100).toFixed(1)}%`);

export const changeRecordColumns: Column<Reply<'acknowledgeChange'>>[] = [
  { header: 'id', value: (r) => r.id, whole: true },
  { header: 'first_seen', value: (r) => r.first_seen, drop: 3 },
  { header: 'state', value: (r) => r.state },
  { header: 'direction', value: (r) => r.direction },
  { header: 'magnitude', value: (r) => percent(r.magnitude) },
  { header: 'group', value: (r) => (r.flavor ? `${r.site.name} / ${r.flavor.name}` : r.site.name), max: 40 },
  { header: 'metric', value: (r) => r.metric, drop: 2 },
  { header: 'at', value: (r) => r.at, drop: 4 },
  { header: 'note', value: (r) => r.note ?? '', max: 40, drop: 1 },
];
