/**
 * Totals of large result lists are remembered for a few seconds (services/total-cache.ts): a write
 * served by this process forgets them at once; a write made behind its back (another server process
 * sharing the database, here plain SQL) shows after the cache's lifetime; small totals are always
 * counted. Real server, real PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, upload, type Seeder } from './support/seed.ts';
import { TotalCache } from '../src/services/total-cache.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let big: { benchmark: string; flavor: string; site: string };
let small: { benchmark: string; flavor: string; site: string };

/** Results inserted behind the server's back, as another server process would. */
async function insertBehind(target: { benchmark: string; flavor: string; site: string }, n: number): Promise<void> {
  await seed.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?, jsonb_build_object('n', g), now() - make_interval(secs => g), now(), ?, ?, false, false
     from generate_series(1, ?) g`,
    [target.benchmark, target.site, target.flavor, seed.owner.uploader_iss, seed.owner.uploader_sub, n],
  );
}

const totalOf = async (benchmark: string, query: Record<string, string | number> = {}) => {
  const res = await t.request('GET', '/results', { query: { benchmark_id: benchmark, per_page: 1, ...query } });
  assert.is(res.status, 200, res.text);
  return res.body.total as number;
};

test.before(async () => {
  t = await startTestServer({ totalsCacheSeconds: '2' }, 'totals');
  seed = await createSeeder(t);
  alice = await t.user('alice');
  const make = async () => {
    const site = (await seed.site()).id;
    return { benchmark: (await seed.benchmark()).id, flavor: (await seed.flavor(site)).id, site };
  };
  big = await make();
  small = await make();
  await insertBehind(big, 1_500);
  await insertBehind(small, 3);
});

test.after(async () => {
  await t.close();
});

test('the cache: counts once per lifetime, keeps only large totals, forgets on invalidate', async () => {
  const cache = new TotalCache({ ttlMs: 60_000, minTotal: 10 });
  let calls = 0;
  const count = (n: number) => async () => {
    calls++;
    return n;
  };
  assert.is(await cache.total('q', [1], count(50)), 50);
  assert.is(await cache.total('q', [1], count(99)), 50, 'remembered');
  assert.is(await cache.total('q', [2], count(60)), 60, 'other values, other total');
  assert.is(calls, 2);
  assert.is(await cache.total('small', [], count(3)), 3);
  assert.is(await cache.total('small', [], count(4)), 4, 'small totals are always counted');
  cache.invalidate();
  assert.is(await cache.total('q', [1], count(51)), 51, 'forgotten after a write');
  // A count that was running while a write finished is not kept.
  const slow = cache.total('late', [], async () => {
    cache.invalidate();
    return 70;
  });
  assert.is(await slow, 70);
  assert.is(await cache.total('late', [], count(71)), 71);
  const off = new TotalCache({ ttlMs: 0 });
  assert.is(await off.total('q', [], count(500)), 500);
  assert.is(await off.total('q', [], count(501)), 501, 'ttl 0 never remembers');
  const bounded = new TotalCache({ ttlMs: 60_000, minTotal: 0, maxEntries: 3 });
  for (let i = 0; i < 10; i++) await bounded.total('q', [i], count(i));
  assert.is(bounded.size, 3, 'at most maxEntries totals');
});

test('refresh ahead: in the second half of its life a total is answered at once and recounted behind', async () => {
  const cache = new TotalCache({ ttlMs: 400, minTotal: 0 });
  let calls = 0;
  let next = 1;
  const count = async () => {
    calls++;
    return next;
  };
  assert.is(await cache.total('q', [], count), 1);
  next = 2;
  assert.is(await cache.total('q', [], count), 1, 'fresh: remembered');
  assert.is(calls, 1);
  await new Promise((r) => setTimeout(r, 250));
  assert.is(await cache.total('q', [], count), 1, 'old: still answered at once');
  await new Promise((r) => setTimeout(r, 20));
  assert.is(calls, 2, 'and counted again behind');
  assert.is(await cache.total('q', [], count), 2, 'the new count is used');
  assert.is(calls, 2);
  next = 3;
  await new Promise((r) => setTimeout(r, 450));
  assert.is(await cache.total('q', [], count), 3, 'expired: counted before answering');
});

test('a large total is remembered across pages; a write through this server shows at once', async () => {
  assert.is(await totalOf(big.benchmark), 1_500);
  await insertBehind(big, 5);
  assert.is(await totalOf(big.benchmark, { page: 2 }), 1_500, 'remembered: written behind the server');
  // Another list (other WHERE) counts afresh.
  assert.is(await totalOf(big.benchmark, { site_id: big.site }), 1_505);
  const res = await upload(t, alice, { benchmark_id: big.benchmark, flavor_id: big.flavor }, { n: 0 });
  assert.is(res.status, 201, res.text);
  assert.is(await totalOf(big.benchmark), 1_506, 'the upload made every remembered total stale');
});

test('a failed write also forgets the totals (it may have changed something first)', async () => {
  assert.is(await totalOf(big.benchmark), 1_506);
  await insertBehind(big, 1);
  const res = await t.request('DELETE', `/results/${crypto.randomUUID()}`, { token: alice });
  assert.ok(res.status >= 400, res.text);
  assert.is(await totalOf(big.benchmark), 1_507);
});

test('small totals are always exact; large ones catch up after the lifetime', async () => {
  assert.is(await totalOf(small.benchmark), 3);
  await insertBehind(small, 1);
  assert.is(await totalOf(small.benchmark), 4, 'a small total is counted each time');

  assert.is(await totalOf(big.benchmark), 1_507);
  await insertBehind(big, 2);
  assert.is(await totalOf(big.benchmark), 1_507);
  await new Promise((r) => setTimeout(r, 2_100));
  assert.is(await totalOf(big.benchmark), 1_509, 'written behind the server: shown after TOTALS_CACHE_SECONDS');
});

test('TOTALS_CACHE_SECONDS is checked', async () => {
  const { buildConfig } = await import('../src/config.ts');
  assert.is(buildConfig({}).totalsCacheSeconds, 30);
  assert.is(buildConfig({ totalsCacheSeconds: '0' }).totalsCacheSeconds, 0);
  for (const bad of ['-1', 'soon', '7200']) {
    assert.throws(() => buildConfig({ totalsCacheSeconds: bad }), /TOTALS_CACHE_SECONDS must be/, bad);
  }
});

test.run();
