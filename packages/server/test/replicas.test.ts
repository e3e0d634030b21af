/**
 * Read replicas against a real streaming standby (PostgreSQL 15 primary, standby made with
 * `pg_basebackup -R`): reads go to the replica, a caller reads its own writes, a replica beyond
 * the lag bound gets no reads, and with the primary stopped reads keep working while writes answer
 * 503. The standby's replay is paused (`pg_wal_replay_pause()`) to make it lag on purpose.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';
import { startReplication, type Replication } from './support/replication.ts';

let rep: Replication;
let t: TestServer;
let strict: TestServer;
let benchmarkId: string;
let flavorId: string;
let token: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** How long a wait below may last: it only ends waits that would never end. */
const HANG_MS = 60_000;

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Waits until the standby has replayed everything the primary has written so far. */
async function caughtUp(): Promise<void> {
  const [{ lsn }] = (await rep.primary.sql<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')) as [{ lsn: string }];
  await until('the standby to catch up', HANG_MS, async () => {
    const [row] = await rep.standby.sql<{ ok: boolean }>('select pg_last_wal_replay_lsn() >= $1::pg_lsn as ok', [lsn]);
    return row?.ok ? true : undefined;
  });
}

const upload = (server: TestServer, score: number, as = token) =>
  server.request('POST', '/results', {
    token: as,
    query: { benchmark_id: benchmarkId, flavor_id: flavorId, execution_datetime: '2024-05-01T00:00:00Z' },
    body: { score },
  });

const anonymous = (server: TestServer, path: string) =>
  fetch(`${server.api}${path}`).then(async (res) => ({ status: res.status, text: await res.text() }));

test.before(async () => {
  rep = await startReplication();
  const common = { databaseUrl: rep.primary.url, databaseReadUrl: rep.standby.url };
  // Lenient: 5 minutes, far longer than any test here keeps the replica paused, however slow the machine.
  t = await startTestServer({ ...common, maxReplicaLag: '5m' }, 'replicas');
  strict = await startTestServer({ ...common, maxReplicaLag: '1s' }, 'replicas_strict');
  const seed = await createSeeder(t);
  benchmarkId = (await seed.benchmark()).id;
  const site = await seed.site();
  flavorId = (await seed.flavor(site.id)).id;
  token = await t.user('writer');
  await caughtUp();
  await checked(); // both servers have checked the standby since
});

/**
 * Each server checks its replica (and the primary) as it does every second: awaited, not slept on.
 * Twice: a check already under way began before the caller's change; the second begins after it.
 */
async function checked(): Promise<void> {
  await Promise.all(
    [t, strict].map(async (s) => {
      await s.server.context.reads!.replicas.check();
      await s.server.context.reads!.replicas.check();
    }),
  );
}

test.after(async () => {
  await strict?.close();
  await t?.close();
  await rep?.close();
});

test('reads go to the replica; a caller reads its own writes at once (from the primary until the replica has them)', async () => {
  await rep.standby.sql('select pg_wal_replay_pause()');
  const created = await upload(t, 1);
  assert.is(created.status, 201, created.text);
  const id = created.body.id as string;
  // The writer reads it back at once, through the same server…
  const own = await t.request('GET', `/results/${id}`, { token });
  assert.is(own.status, 200, own.text);
  // …while an anonymous reader is served by the paused replica, which does not have it yet.
  assert.is((await anonymous(t, `/results/${id}`)).status, 404);
  await rep.standby.sql('select pg_wal_replay_resume()');
  await until('the replica to serve the result', HANG_MS, async () =>
    (await anonymous(t, `/results/${id}`)).status === 200 ? true : undefined,
  );
});

test('a replica further behind than MAX_REPLICA_LAG gets no reads: they go to the primary', async () => {
  await caughtUp();
  await rep.standby.sql('select pg_wal_replay_pause()');
  try {
    const created = await upload(strict, 2, await strict.user('strict-writer')); // strict trusts its own provider
    assert.is(created.status, 201, created.text);
    const id = created.body.id as string;
    // Within a second or two the replica counts as lagging (1 s bound): anonymous reads move to the primary.
    await until('reads to leave the lagging replica', HANG_MS, async () =>
      (await anonymous(strict, `/results/${id}`)).status === 200 ? true : undefined,
    );
    // The lenient server (5 minute bound) still reads from the paused replica.
    assert.is((await anonymous(t, `/results/${id}`)).status, 404);
  } finally {
    await rep.standby.sql('select pg_wal_replay_resume()');
  }
});

test('with the primary stopped, reads keep working from the replica and writes answer 503', async () => {
  await caughtUp();
  const before = await anonymous(t, `/results?benchmark_id=${benchmarkId}`);
  assert.is(before.status, 200);
  const total = JSON.parse(before.text).total as number;
  assert.ok(total >= 2, before.text);
  await rep.primary.stop('fast');
  await checked(); // a check has found the primary gone
  assert.is(t.server.context.reads!.replicas.primaryUp, false, 'the check found the primary gone');
  const list = await anonymous(t, `/results?benchmark_id=${benchmarkId}`);
  assert.is(list.status, 200, list.text);
  assert.is(JSON.parse(list.text).total, total);
  const search = await anonymous(t, `/results:search?terms=${encodeURIComponent('a')}`);
  assert.is(search.status, 200, search.text);
  const write = await upload(t, 3);
  assert.is(write.status, 503, write.text);
  assert.equal((await fetch(`${t.api}/health`)).status, 200);
});

test.run();
