/**
 * Comparisons of large groups are remembered (services/compare-cache.ts) and forgotten at every
 * write: one served by this process, and one made anywhere else (PostgreSQL notifies); one whose
 * notification was missed shows after the lifetime. Small comparisons are always computed.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { CompareCache } from '../src/services/compare-cache.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
let flavor: { id: string; site_id: string };

async function insertBehind(n: number, options: { silent?: boolean } = {}): Promise<void> {
  await t.server.context.orm.em.fork().transactional(async (em) => {
    if (options.silent) await em.execute('set local session_replication_role = replica');
    await em.execute(
      `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
       select gen_random_uuid(), ?, ?, ?, jsonb_build_object('score', 1000 + g), now() - make_interval(secs => g), now(), ?, ?, false, false
       from generate_series(1, ?) g`,
      [benchmarkId, flavor.site_id, flavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub, n],
    );
  });
}

const matched = async () => {
  const res = await t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score' } });
  assert.is(res.status, 200, res.text);
  return res.body.matched as number;
};

/** The cache's lifetime here: long enough that a comparison read a few requests later is still remembered on a loaded machine. */
const TTL_SECONDS = 10;

test.before(async () => {
  t = await startTestServer({ totalsCacheSeconds: String(TTL_SECONDS) }, 'compare_cache');
  seed = await createSeeder(t);
  benchmarkId = (await seed.benchmark()).id;
  const site = await seed.site();
  const f = await seed.flavor(site.id);
  flavor = { id: f.id, site_id: f.site_id };
  await insertBehind(1_000);
});
test.after(async () => {
  await t.close();
});

test('the cache: remembers large comparisons for its lifetime, never small ones, forgets on invalidate, keys ignore the format', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10 });
  let calls = 0;
  const computed = (n: number) => async () => {
    calls++;
    return { answer: { matched: n } as never, benchmarkName: 'b' };
  };
  const q = { benchmark_id: 'x', metric: 'json.a' } as const;
  assert.is((await cache.answer(q, computed(50))).answer.matched, 50);
  assert.is((await cache.answer({ ...q, format: 'svg' }, computed(99))).answer.matched, 50, 'the format is not part of the key');
  assert.is(calls, 1);
  assert.is((await cache.answer({ ...q, metric: 'json.b' }, computed(5))).answer.matched, 5);
  assert.is((await cache.answer({ ...q, metric: 'json.b' }, computed(6))).answer.matched, 6, 'small: always computed');
  cache.invalidate();
  assert.is((await cache.answer(q, computed(51))).answer.matched, 51);
  const late = cache.answer({ ...q, metric: 'json.c' }, async () => {
    cache.invalidate(); // a write finished while it ran
    return { answer: { matched: 70 } as never, benchmarkName: 'b' };
  });
  assert.is((await late).answer.matched, 70);
  assert.is((await cache.answer({ ...q, metric: 'json.c' }, computed(71))).answer.matched, 71, 'not kept');
});

test('a comparison of 1,000 results is remembered; a write made anywhere shows at once; a missed notification after the lifetime', async () => {
  assert.is(await matched(), 1_000);
  await insertBehind(5, { silent: true });
  assert.is(await matched(), 1_000, 'remembered (the write was not notified)');
  await insertBehind(1); // notified: every server forgets its comparisons
  // Delivered in milliseconds, more on a loaded machine; awaited for well under the lifetime, after
  // which the comparison would be computed again anyway.
  const deadline = Date.now() + (TTL_SECONDS * 1000) / 2;
  let now = await matched();
  while (now !== 1_006 && Date.now() < deadline) now = await matched();
  assert.is(now, 1_006);
  await insertBehind(2, { silent: true });
  assert.is(await matched(), 1_006);
  await new Promise((r) => setTimeout(r, TTL_SECONDS * 1000 + 100));
  assert.is(await matched(), 1_008, 'after TOTALS_CACHE_SECONDS');
});

test.run();
