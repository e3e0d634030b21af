/**
 * Totals of large result lists are remembered for a few seconds (services/results/total-cache.ts): a write
 * served by this process forgets them at once; so does a write made behind its back (another server
 * process sharing the database, here plain SQL), through PostgreSQL's change notifications; one whose
 * notification was missed shows after the cache's lifetime; small totals are always counted. Real
 * server, real PostgreSQL.
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, upload, type Seeder } from './support/seed.ts';
import { TotalCache } from '../src/services/results/total-cache.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let big: { benchmark: string; flavor: string; site: string };
let small: { benchmark: string; flavor: string; site: string };

/**
 * Results inserted behind the server's back, as another server process or an SQL console would.
 * `silent`: without the change notification (triggers off for the transaction), as when the
 * server's listener was disconnected and missed it.
 */
async function insertBehind(
  target: { benchmark: string; flavor: string; site: string },
  n: number,
  options: { silent?: boolean } = {},
): Promise<void> {
  await t.server.context.orm.em.fork().transactional(async (em) => {
    if (options.silent) await em.execute('set local session_replication_role = replica');
    await em.execute(
      `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?, jsonb_build_object('n', g), now() - make_interval(secs => g), now(), ?, ?, false, false
     from generate_series(1, ?) g`,
      [target.benchmark, target.site, target.flavor, seed.owner.uploader_iss, seed.owner.uploader_sub, n],
    );
  });
}

const totalOf = async (benchmark: string, query: Record<string, string | number> = {}) => {
  const res = await t.request('GET', '/results', { query: { benchmark_id: benchmark, per_page: 1, ...query } });
  assert.is(res.status, 200, res.text);
  return res.body.total as number;
};

/**
 * The cache's lifetime here: long enough that a total read a few requests after it was counted is
 * still remembered on a loaded machine (a refresh ahead starts half way, a recount at the end).
 */
const TTL_SECONDS = 10;

test.before(async () => {
  t = await startTestServer({ totalsCacheSeconds: String(TTL_SECONDS) }, 'totals');
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
  let now = 1_000; // the cache's clock: set by the test, not read from a machine that may be slow
  const cache = new TotalCache({ ttlMs: 400, minTotal: 0, now: () => now });
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
  now = 1_250;
  assert.is(await cache.total('q', [], count), 1, 'old: still answered at once');
  await new Promise((r) => setImmediate(r));
  assert.is(calls, 2, 'and counted again behind');
  assert.is(await cache.total('q', [], count), 2, 'the new count is used');
  assert.is(calls, 2);
  next = 3;
  now = 1_250 + 450;
  assert.is(await cache.total('q', [], count), 3, 'expired: counted before answering');
});

test('a large total is remembered across pages; a write through this server shows at once', async () => {
  assert.is(await totalOf(big.benchmark), 1_500);
  await insertBehind(big, 5, { silent: true });
  assert.is(await totalOf(big.benchmark, { page: 2 }), 1_500, 'remembered: written behind the server, unnotified');
  // Another list (other WHERE) counts afresh.
  assert.is(await totalOf(big.benchmark, { site_id: big.site }), 1_505);
  const res = await upload(t, alice, { benchmark_id: big.benchmark, flavor_id: big.flavor }, { n: 0 });
  assert.is(res.status, 201, res.text);
  assert.is(await totalOf(big.benchmark), 1_506, 'the upload made every remembered total stale');
});

test('a failed write also forgets the totals (it may have changed something first)', async () => {
  assert.is(await totalOf(big.benchmark), 1_506);
  await insertBehind(big, 1, { silent: true });
  const res = await t.request('DELETE', `/results/${crypto.randomUUID()}`, { token: alice });
  assert.ok(res.status >= 400, res.text);
  assert.is(await totalOf(big.benchmark), 1_507);
});

test('small totals are always exact; large ones missed by the notifications catch up after the lifetime', async () => {
  assert.is(await totalOf(small.benchmark), 3);
  await insertBehind(small, 1, { silent: true });
  assert.is(await totalOf(small.benchmark), 4, 'a small total is counted each time');

  assert.is(await totalOf(big.benchmark), 1_507);
  await insertBehind(big, 2, { silent: true });
  assert.is(await totalOf(big.benchmark), 1_507);
  await new Promise((r) => setTimeout(r, TTL_SECONDS * 1000 + 100));
  assert.is(await totalOf(big.benchmark), 1_509, 'written behind the server, unnotified: shown after TOTALS_CACHE_SECONDS');
});

test('a write behind the server (another process, an SQL console) shows at once: PostgreSQL notifies every server', async () => {
  assert.is(await totalOf(big.benchmark), 1_509);
  assert.is(await totalOf(big.benchmark), 1_509);
  await insertBehind(big, 3);
  // The notification leaves PostgreSQL at commit and arrives milliseconds later, more on a loaded
  // machine. Awaited for less than half the lifetime: past it a refresh ahead would count the rows
  // anyway, notified or not.
  const deadline = Date.now() + (TTL_SECONDS * 1000) / 2 - 1000;
  let total = await totalOf(big.benchmark);
  while (total !== 1_512 && Date.now() < deadline) total = await totalOf(big.benchmark);
  assert.is(total, 1_512);
});

test('8 pages of one large list at once after a write: one count statement answers them all, with the write included', async () => {
  const res = await upload(t, alice, { benchmark_id: big.benchmark, flavor_id: big.flavor }, { n: 1 });
  assert.is(res.status, 201, res.text);
  const config = t.server.context.orm.config;
  const original = config.get('onQuery');
  let counts = 0;
  config.set('onQuery', (sql: string, params: readonly unknown[]) => {
    if (sql.startsWith('select count(*)::int as total from result r')) counts++;
    return original(sql, params as unknown[]);
  });
  const flights = t.server.context.results.totals.counting.counts;
  const joined = flights.joined;
  // The change listener may deliver the upload's notification only now: a count that was running then
  // is rightly not shared with the lists that follow, so each invalidation from here allows one more.
  const totals = t.server.context.results.totals;
  const invalidate = totals.invalidate.bind(totals);
  let invalidations = 0;
  totals.invalidate = () => {
    invalidations++;
    invalidate();
  };
  // A session of the test's own holds the result table, so that all eight lists arrive while the first count waits for it.
  const locker = new pg.Client({ connectionString: t.databaseUrl });
  await locker.connect();
  await locker.query('begin');
  await locker.query('lock table result in access exclusive mode');
  let pages: Promise<number>[] = [];
  try {
    pages = Array.from({ length: 8 }, (_, i) => totalOf(big.benchmark, { page: i + 1 }));
    const deadline = Date.now() + 10_000;
    while (counts + flights.joined - joined < 8) {
      if (Date.now() > deadline)
        throw new Error(`8 lists counting or awaiting a count: ${counts} counting, ${flights.joined - joined} awaiting`);
      await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await locker.query('rollback');
    await locker.end();
  }
  const answered = await Promise.all(pages);
  config.set('onQuery', original);
  totals.invalidate = invalidate;
  assert.equal(answered, Array(8).fill(1_513), 'every page has the total with the upload');
  assert.ok(counts >= 1 && counts <= 1 + invalidations, `counted once per generation: ${counts} counts, ${invalidations} invalidations`);
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
