/**
 * Watches, change records, their triage and the feed against a real server: a watch's records
 * appear with it, follow later segmentations (gone, found again with their decision kept), only
 * visible results count, every change writes its outbox row, and each user sees only their own.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let bob: string;
let admin: string;
let benchmarkId: string;
let flavor: { id: string; site_id: string };
let ids: string[];

const DAY = 86_400_000;
const START = Date.UTC(2026, 0, 1);
/** 30 points around 100, then 30 around 85 (a regression of a higher-is-better score at 30). */
const SCORES = Array.from({ length: 60 }, (_, i) => (i < 30 ? 100 : 85) + ((i * 7) % 5) - 2);

test.before(async () => {
  t = await startTestServer({ maxWatchesPerUser: '3', watchRefreshInterval: '1' }, 'alerts');
  seed = await createSeeder(t);
  [alice, bob, admin] = [await t.user('alice'), await t.user('bob'), await t.admin()];
  benchmarkId = (await seed.benchmark()).id;
  const site = await seed.site({ name: 'Site <&> "x"' });
  flavor = await seed.flavor(site.id, { name: 'f&1' });
  ids = await seed.results(
    SCORES.map((score, i) => ({
      benchmark_id: benchmarkId,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { score },
      execution_datetime: new Date(START + i * DAY),
    })),
  );
});
test.after(() => t.close());

const watch = (token: string, body: Record<string, unknown> = {}) =>
  t.request('POST', '/watches', { token, body: { benchmark_id: benchmarkId, metric: 'json.score', ...body } });
const events = (sub: string) =>
  seed.sql<{ type: string; data: any }>('select type, data from alert_event where user_sub = ? order by created_datetime, type', [sub]);
/** Waits until the scheduler has refreshed after what was just written. */
const refreshed = async () => {
  await new Promise((r) => setTimeout(r, 100)); // the notification reaches the listener
  await t.server.context.alerts.watches.settled();
};

let aliceWatch: any;

test('POST /watches: 201 with the defaults of /results:changes; its change points are open records at once, each an event', async () => {
  const res = await watch(alice, { stale_after: '7d' });
  assert.is(res.status, 201, res.text);
  aliceWatch = res.body;
  assert.equal(
    { ...res.body, id: undefined, created: undefined },
    {
      id: undefined,
      owner: { iss: t.issuer.issuer, sub: 'alice' },
      benchmark_id: benchmarkId,
      metric: 'json.score',
      group_by: 'flavor',
      better: null,
      max_pvalue: 0.001,
      min_magnitude: 0.02,
      min_size: 5,
      stale_after: '1w',
      created: undefined,
    },
  );
  const feed = await t.request('GET', '/changes', { token: alice });
  assert.is(feed.status, 200);
  assert.is(feed.body.items.length, 1);
  const [record] = feed.body.items;
  assert.is(record.result_id, ids[30]);
  assert.is(record.direction, 'regression');
  assert.is(record.state, 'open');
  assert.is(record.watch_id, aliceWatch.id);
  assert.equal(record.flavor, { id: flavor.id, name: 'f&1' });
  const detected = (await events('alice')).filter((e) => e.type === 'change.detected');
  assert.is(detected.length, 1);
  assert.equal(detected[0]!.data, record);
});

test('POST /watches: unknown benchmark 404, malformed metric 422, unregistered 403, past the limit 409', async () => {
  assertProblem(await watch(bob, { benchmark_id: '00000000-0000-4000-8000-000000000000' }), 404, 'NOT_FOUND');
  assertProblem(await watch(bob, { metric: 'score' }), 422, 'INVALID_METRIC');
  assertProblem(await watch(bob, { stale_after: 'soon' }), 422, 'INVALID_BODY');
  assertProblem(await watch(bob, { filters: ['score >'] }), 422, 'INVALID_FILTER');
  assertProblem(await watch(await t.token('stranger')), 403, 'NOT_REGISTERED');
  for (const min_size of [6, 7, 8]) assert.is((await watch(bob, { min_size })).status, 201);
  assertProblem(await watch(bob, { min_size: 9 }), 409, 'TOO_MANY_WATCHES');
});

test('GET /watches: one sees one’s own, an administrator every one; another’s watch is 403 to get or delete', async () => {
  const own = await t.request('GET', '/watches', { token: alice });
  assert.equal(
    own.body.items.map((w: any) => w.id),
    [aliceWatch.id],
  );
  const all = await t.request('GET', '/watches', { token: admin, query: { per_page: 2 } });
  assert.is(all.body.total, 4);
  const next = await t.request('GET', '/watches', { token: admin, query: { per_page: 2, cursor: all.body.next_cursor } });
  assert.is(new Set([...all.body.items, ...next.body.items].map((w: any) => w.id)).size, 4);
  assert.is((await t.request('GET', `/watches/${aliceWatch.id}`, { token: alice })).body.id, aliceWatch.id);
  assertProblem(await t.request('GET', `/watches/${aliceWatch.id}`, { token: bob }), 403, 'NOT_OWNER');
  assertProblem(await t.request('DELETE', `/watches/${aliceWatch.id}`, { token: bob }), 403, 'NOT_OWNER');
  assertProblem(await t.request('GET', '/watches/00000000-0000-4000-8000-000000000000', { token: bob }), 404, 'NOT_FOUND');
  const bobs = await t.request('GET', '/watches', { token: bob });
  assert.is((await t.request('DELETE', `/watches/${bobs.body.items[0].id}`, { token: bob })).status, 204);
  assert.is((await t.request('GET', '/watches', { token: bob })).body.total, 2);
});

test('the feed shows only the records of one’s own watches', async () => {
  const bobs = await t.request('GET', '/changes', { token: bob, query: { state: 'all' } });
  assert.ok(bobs.body.items.every((r: any) => r.watch_id !== aliceWatch.id));
  const all = await t.request('GET', '/changes', { token: admin, query: { watch_id: aliceWatch.id } });
  assert.is(all.body.items.length, 1);
});

test('triage: the owner acknowledges with a note (kept, with who and when; an event), others 403, unknown 404', async () => {
  const [record] = (await t.request('GET', '/changes', { token: alice })).body.items;
  assertProblem(await t.request('POST', `/changes/${record.id}:acknowledge`, { token: bob }), 403, 'NOT_OWNER');
  assertProblem(await t.request('POST', '/changes/00000000-0000-4000-8000-000000000000:dismiss', { token: bob }), 404, 'NOT_FOUND');
  assertProblem(
    await t.request('POST', `/changes/${record.id}:acknowledge`, { token: alice, body: { note: 'x'.repeat(1001) } }),
    422,
    'INVALID_BODY',
  );
  assertProblem(
    await t.request('POST', `/changes/${record.id}:acknowledge`, { token: alice, body: { note: 'a\u0000b' } }),
    422,
    'UNSUPPORTED_CHARACTER',
  );
  const res = await t.request('POST', `/changes/${record.id}:acknowledge`, { token: alice, body: { note: 'new compiler <O2>' } });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.state, 'acknowledged');
  assert.is(res.body.note, 'new compiler <O2>');
  assert.equal(res.body.decided_by, { iss: t.issuer.issuer, sub: 'alice' });
  assert.type(res.body.decided_datetime, 'string');
  assert.is((await events('alice')).filter((e) => e.type === 'change.acknowledged').length, 1);
  assert.is((await t.request('GET', '/changes', { token: alice })).body.items.length, 0, 'no longer open');
  const acknowledged = await t.request('GET', '/changes', { token: alice, query: { state: 'acknowledged' } });
  assert.equal(acknowledged.body.items[0].id, record.id);
  // An administrator may decide too, and reopen without a body.
  const reopened = await t.request('POST', `/changes/${record.id}:reopen`, { token: admin });
  assert.is(reopened.body.state, 'open', reopened.text);
  assert.is((await t.request('POST', `/changes/${record.id}:dismiss`, { token: alice, body: {} })).body.state, 'dismissed');
  assert.is((await events('alice')).filter((e) => e.type === 'change.dismissed').length, 1);
});

test('a later segmentation: hidden results make a point gone; visible again, it is back as it was, without a new event', async () => {
  const detectedBefore = (await events('alice')).filter((e) => e.type === 'change.detected').length;
  await seed.sql('update result set hidden = true where id = any(?::uuid[])', [ids.slice(30)]);
  await refreshed();
  const gone = await t.request('GET', '/changes', { token: alice, query: { state: 'gone' } });
  assert.is(gone.body.items.length, 1);
  assert.is(gone.body.items[0].result_id, ids[30]);
  await seed.sql('update result set hidden = false where id = any(?::uuid[])', [ids.slice(30)]);
  await refreshed();
  const back = await t.request('GET', '/changes', { token: alice, query: { state: 'dismissed' } });
  assert.is(back.body.items.length, 1, 'found again, still dismissed');
  assert.is((await events('alice')).filter((e) => e.type === 'change.detected').length, detectedBefore);
});

test('a write refreshes the watches of the benchmarks it wrote to only', async () => {
  const other = (await seed.benchmark()).id;
  const result = (benchmark_id: string) => ({
    benchmark_id,
    flavor_id: flavor.id,
    site_id: flavor.site_id,
    json: { score: 1 },
    execution_datetime: new Date(START),
  });
  await refreshed();
  const before = t.server.context.alerts.watches.refreshes;
  await seed.results([result(other)]);
  await refreshed();
  assert.is(t.server.context.alerts.watches.refreshes, before, 'no watch of the other benchmark');
  const [id] = await seed.results([result(benchmarkId)]);
  await refreshed();
  const watches = (await seed.sql<{ n: number }>('select count(*)::int as n from watch where benchmark_id = ?', [benchmarkId]))[0]!.n;
  assert.is(t.server.context.alerts.watches.refreshes, before + watches, 'every watch of this benchmark');
  await seed.sql('delete from result where id = ?', [id]);
  await refreshed();
  assert.is(t.server.context.alerts.watches.refreshes, before + 2 * watches, 'a delete too');
});

test('only visible results make records: a step made of hidden results is never a record', async () => {
  const hiddenBenchmark = (await seed.benchmark()).id;
  await seed.results(
    SCORES.map((score, i) => ({
      benchmark_id: hiddenBenchmark,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { score: i < 30 ? 100 : score },
      execution_datetime: new Date(START + i * DAY),
      hidden: i >= 30 && score < 100,
    })),
  );
  const w = await watch(alice, { benchmark_id: hiddenBenchmark });
  assert.is(w.status, 201);
  const feed = await t.request('GET', '/changes', { token: alice, query: { watch_id: w.body.id, state: 'all' } });
  assert.is(feed.body.items.length, 0);
});

/** A strict check of the XML the feed is made of: tags nest, every & is an entity; the elements with their text. */
function parseXml(text: string): { name: string; text: string }[] {
  const body = text.replace(/^<\?xml[^?]*\?>\s*/, '');
  const stack: string[] = [];
  const out: { name: string; text: string }[] = [];
  const re = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  let last = 0;
  for (let m = re.exec(body); m; m = re.exec(body)) {
    last = re.lastIndex;
    const [, close, name, attrs, self, chars] = m;
    const entityOk = (s: string) => !/&(?!(amp|lt|gt|quot|apos);)/.test(s);
    if (chars !== undefined) {
      assert.ok(entityOk(chars) && !chars.includes('>'), `text ${chars}`);
      if (stack.length)
        out.push({
          name: stack.at(-1)!,
          text: chars
            .replace(/&lt;/g, '<')
            .replace(/&gt;/g, '>')
            .replace(/&quot;/g, '"')
            .replace(/&amp;/g, '&'),
        });
      continue;
    }
    assert.ok(entityOk(attrs ?? ''), `attributes ${attrs}`);
    if (close) assert.is(stack.pop(), name, 'tags nest');
    else if (!self) stack.push(name!);
    else out.push({ name: name!, text: '' });
  }
  assert.is(last, body.length, 'nothing but elements and text');
  assert.is(stack.length, 0, 'every element closed');
  return out;
}

test('GET /changes?format=atom: an Atom feed of the same query, names escaped', async () => {
  const res = await t.request('GET', '/changes', { token: alice, query: { format: 'atom', state: 'all', watch_id: aliceWatch.id } });
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^application\/atom\+xml/);
  const elements = parseXml(res.text);
  assert.is(elements.filter((e) => e.name === 'id').length, 2, 'the feed and one entry');
  const title = elements.filter((e) => e.name === 'title')[1]!.text;
  assert.match(title, /regression -1\d\.\d % in json\.score on Site <&> "x" \/ f&1/);
  assert.ok(elements.some((e) => e.name === 'summary' && e.text.includes('dismissed')));
});

test('GET /results:changes marks a recorded point with its record as the feed shows it, after the answer cache', async () => {
  const options = t.server.context.changes.cache.options as { minMatched: number };
  const minMatched = options.minMatched;
  options.minMatched = 1; // this small answer is remembered, as a large one would be
  try {
    const series = { benchmark_id: benchmarkId, metric: 'json.score' };
    const point = async (token?: string, query: Record<string, unknown> = {}) => {
      const res = await t.request('GET', '/results:changes', { ...(token ? { token } : {}), query: { ...series, ...query } });
      assert.is(res.status, 200, res.text);
      const [change] = res.body.groups.flatMap((g: any) => g.changes);
      assert.is(change.result_id, ids[30]);
      return change.record;
    };
    const [record] = (await t.request('GET', '/changes', { token: alice, query: { watch_id: aliceWatch.id, state: 'all' } })).body.items;
    assert.equal(await point(alice), { id: record.id, state: 'dismissed' });
    assert.equal(await point(admin), { id: record.id, state: 'dismissed' }, 'an administrator sees every watch’s records');
    assert.is(await point(), null, 'anonymous: the feed is not public');
    assert.is(await point(bob), null, 'another user’s record is not shown');
    assert.is(await point(alice, { max_pvalue: 0.0005 }), null, 'a series nobody watches');
    assert.is((await t.request('POST', `/changes/${record.id}:acknowledge`, { token: alice })).status, 200);
    assert.equal(await point(alice), { id: record.id, state: 'acknowledged' });
    // A decision written behind the server's back (no write request clears the cache): the mark still follows it.
    assert.ok(t.server.context.changes.cache.size > 0, 'the answer is remembered');
    await seed.sql("update change_record set decision = 'open' where id = ?", [record.id]);
    assert.equal(await point(alice), { id: record.id, state: 'open' });
    assertProblem(await t.request('GET', '/results:changes', { token: 'not-a-token', query: series }), 401, 'INVALID_TOKEN');
  } finally {
    options.minMatched = minMatched;
  }
});

test('GET /changes: bad query values are 422, not 500', async () => {
  assertProblem(await t.request('GET', '/changes', { token: alice, query: { state: 'closed' } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('GET', '/changes', { token: alice, query: { since: 'yesterday' } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('GET', '/changes', { token: alice, query: { cursor: 'x.y' } }), 422, 'INVALID_CURSOR');
  assertProblem(await t.request('GET', '/changes', { query: {} }), 401, 'MISSING_TOKEN');
});

test.run();
