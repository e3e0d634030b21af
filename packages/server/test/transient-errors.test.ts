/**
 * What concurrent work does to a request. Transactions PostgreSQL aborts for a transient reason
 * (deadlock, serialization failure) run once more and, when that fails too, answer 503
 * DATABASE_BUSY with Retry-After; a catalogue row deleted between a page and the read of its text
 * gives the page as it is now (or 404 for one item), never a 500; a disk or memory PostgreSQL finds
 * exhausted answers 503 with nothing stored. Real PostgreSQL, real deadlocks:
 * the other side of each conflict is a plain pg connection.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { createSeeder, expectProblem, upload, type Seeder } from './support/seed.ts';
import { transaction, TRANSACTION_ATTEMPTS } from '../src/db/transaction.ts';
import { mapDatabaseError } from '../src/db/errors.ts';
import type { EmbedCache } from '../src/services/catalogue/embeds.ts';

let t: TestServer;
let seed: Seeder;
let admin: string;
let alice: string;
let databaseUrl: string;
let bench: { id: string };
let flavor: { id: string };

test.before(async () => {
  // The server's sessions look for a deadlock after waiting 3 s, the test's own sessions after 60 s:
  // with every cycle closed before the server's session starts its last wait, the server's
  // transaction is always the one PostgreSQL aborts, however slow the machine is.
  databaseUrl = await createMigratedTestDatabase('transient');
  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  const name = new URL(databaseUrl).pathname.slice(1);
  await setup.query(`alter database ${setup.escapeIdentifier(name)} set deadlock_timeout = '3s'`);
  await setup.end();
  t = await startTestServer({ databaseUrl }, 'transient');
  seed = await createSeeder(t);
  [admin, alice] = await Promise.all([t.admin(), t.user('alice')]);
  bench = await seed.benchmark();
  flavor = await seed.flavor((await seed.site()).id);
});
test.after(async () => {
  await t.close();
  await releaseTestDatabase();
});

/** A session of its own, as another client of the database would have. */
async function session(): Promise<pg.Client & { pid: number }> {
  const client = new pg.Client({ connectionString: databaseUrl }) as pg.Client & { pid: number };
  await client.connect();
  client.pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  return client;
}

/** Polls until `check` finds a row (a lock wait it looks for); no time is asserted. */
async function until(monitor: pg.Client, label: string, sql: string, params: unknown[]): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if ((await monitor.query(sql, params)).rows.length) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never happened: ${label}`);
}

/** Until one of the server's sessions (not in `own`) waits for a lock in a statement matching `pattern`. */
const serverWaitsFor = (monitor: pg.Client, own: number[], pattern: string) =>
  until(
    monitor,
    `a server session waits in ${pattern}`,
    `select 1 from pg_stat_activity where datname = current_database() and pid <> all($1::int[]) and wait_event_type = 'Lock' and query ilike $2`,
    [own, pattern],
  );

/** Until the session `pid` waits for a lock. */
const sessionWaits = (monitor: pg.Client, pid: number) =>
  until(monitor, `session ${pid} waits`, `select 1 from pg_stat_activity where pid = $1 and wait_event_type = 'Lock'`, [pid]);

const tagsOf = async (id: string) =>
  (await seed.sql<{ tag_id: string }>('select tag_id from result_tag where result_id = ? order by tag_id', [id])).map((r) => r.tag_id);

// ---------------------------------------------------------------------------------------------
// The transaction helper

/** A transaction that meets a serialization failure in each of its first `conflicts` attempts. */
async function conflicted(conflicts: number) {
  const tag = await seed.tag();
  const other = await session();
  let attempts = 0;
  const run = transaction(t.server.context.orm.em.fork(), async (tx) => {
    attempts++;
    await tx.execute('set transaction isolation level repeatable read');
    await tx.execute('select description from tag where id = ?', [tag.id]); // the snapshot
    if (attempts <= conflicts) await other.query('update tag set description = $1 where id = $2', [`outside ${attempts}`, tag.id]);
    await tx.execute('update tag set description = ? where id = ?', [`inside ${attempts}`, tag.id]);
  });
  const outcome = await run.then(
    () => null,
    (err: unknown) => err,
  );
  await other.end();
  const [row] = await seed.sql<{ description: string }>('select description from tag where id = ?', [tag.id]);
  return { outcome, attempts, description: row!.description };
}

test('transaction(): a serialization failure is retried once, and the retry succeeds', async () => {
  const { outcome, attempts, description } = await conflicted(1);
  assert.is(outcome, null);
  assert.is(attempts, 2);
  assert.is(description, 'inside 2');
});

test('transaction(): a failure that persists propagates after the retry, answered 503 DATABASE_BUSY with Retry-After', async () => {
  const { outcome, attempts, description } = await conflicted(5);
  assert.is(attempts, TRANSACTION_ATTEMPTS);
  assert.is((outcome as { code?: string }).code, '40001');
  assert.is(description, `outside ${TRANSACTION_ATTEMPTS}`, 'nothing of the failed attempts is kept');
  const answer = mapDatabaseError(outcome);
  assert.ok(answer);
  assert.equal([answer!.status, answer!.code, answer!.headers['Retry-After']], [503, 'DATABASE_BUSY', '1']);
});

// ---------------------------------------------------------------------------------------------
// A real deadlock through the API: PUT /results/{id}/tags locks the result, then its tags. Each
// deadlock is set up so that the cycle exists before the server's session starts its last wait: the
// server's session (deadlock_timeout 3 s) then always finds it and is aborted, however slow the
// machine; the test's sessions (60 s) never get there first.

/**
 * Makes the server's attempt wait for the result (held by `holder`), queues `other` for the result
 * behind it, then lets it through: the attempt takes the result and waits for a tag `other` holds,
 * while `other` waits for the attempt. `other` then holds the result.
 */
async function deadlockOnce(monitor: pg.Client, own: number[], result: string, holder: pg.Client, other: pg.Client & { pid: number }) {
  await serverWaitsFor(monitor, own, '%from result%for update%');
  const queued = other.query('select 1 from result where id = $1 for update', [result]);
  await sessionWaits(monitor, other.pid);
  await holder.query('rollback');
  await queued; // granted once PostgreSQL aborted the server's transaction
}

async function deadlockedPut(persistent: boolean) {
  const [t1, t2] = [await seed.tag(), await seed.tag()];
  const result = (await upload(t, alice, { benchmark_id: bench.id, flavor_id: flavor.id }, { deadlock: persistent })).body.id as string;
  const [c0, c1, c2, monitor] = [await session(), await session(), await session(), await session()];
  const own = [c0.pid, c1.pid, c2.pid, monitor.pid];
  try {
    for (const c of [c0, c1, c2]) await c.query("begin; set local deadlock_timeout = '60s'");
    await c0.query('select 1 from result where id = $1 for update', [result]);
    await c1.query('select 1 from tag where id = $1 for update', [t1.id]);
    const put = t.request('PUT', `/results/${result}/tags`, { token: alice, body: { tags_ids: [t1.id, t2.id] } });
    // Attempt 1 waits for c0's result, c1 queues behind it; attempt 1 then waits for t1 (c1): deadlock.
    await deadlockOnce(monitor, own, result, c0, c1);
    if (persistent) {
      // Attempt 2 cannot pass c1's result yet: c2 takes t2 first. Attempt 2 waits for the result,
      // c2 queues behind it; attempt 2 then waits for t2 (c2): deadlock again.
      await c2.query('select 1 from tag where id = $1 for update', [t2.id]);
      await deadlockOnce(monitor, own, result, c1, c2);
      const res = await put;
      await c2.query('rollback');
      return { res, result };
    }
    // Attempt 2 waits for c1's result and gets it, and every tag, once c1 is done.
    await serverWaitsFor(monitor, own, '%from result%for update%');
    await c1.query('rollback');
    return { res: await put, result, tags: [t1.id, t2.id].sort() };
  } finally {
    for (const c of [c0, c1, c2, monitor]) await c.end();
  }
}

test('PUT /results/{id}/tags: a deadlock is retried and the retry succeeds (204, the tags stored)', async () => {
  const { res, result, tags } = await deadlockedPut(false);
  assert.is(res.status, 204, res.text);
  assert.equal(await tagsOf(result), tags);
});

test('PUT /results/{id}/tags: a deadlock on the retry too gives 503 DATABASE_BUSY with Retry-After, nothing stored', async () => {
  const { res, result } = await deadlockedPut(true);
  expectProblem(res, 503, 'DATABASE_BUSY');
  assert.is(res.headers.get('retry-after'), '1');
  assert.equal(await tagsOf(result), []);
});

test('POST /results:batch: PostgreSQL out of disk (53100) or memory (53200) at its last item: 503 with its code and Retry-After, nothing stored', async () => {
  // The SQLSTATE as PostgreSQL raises it when a file cannot be extended (or memory is exhausted), from a trigger.
  await seed.sql(`create function exhaust() returns trigger language plpgsql as $$ begin
    if new.json->>'raise' is not null then raise exception 'could not extend file: No space left on device' using errcode = new.json->>'raise'; end if;
    return new; end $$`);
  await seed.sql('create trigger exhaust before insert on result for each row execute function exhaust()');
  try {
    for (const [sqlstate, code, retryAfter] of [
      ['53100', 'DATABASE_DISK_FULL', '60'],
      ['53200', 'DATABASE_INSUFFICIENT_RESOURCES', '5'],
    ]) {
      const marker = `exhausted-${sqlstate}`;
      const items = [1, 2, 3].map((n) => ({
        benchmark_id: bench.id,
        flavor_id: flavor.id,
        execution_datetime: '2024-05-01T12:00:00Z',
        json: n === 3 ? { marker, raise: sqlstate } : { marker, n },
      }));
      const res = await t.request('POST', '/results:batch', { token: alice, body: { items } });
      expectProblem(res, 503, code!);
      assert.is(res.headers.get('retry-after'), retryAfter);
      const [row] = await seed.sql<{ n: number }>(`select count(*)::int as n from result where json->>'marker' = ?`, [marker]);
      assert.is(row!.n, 0, 'nothing stored');
    }
  } finally {
    await seed.sql('drop trigger exhaust on result');
    await seed.sql('drop function exhaust');
  }
});

// ---------------------------------------------------------------------------------------------
// Rows deleted between a page and the read of their texts (services/catalogue/embeds.ts)

/** Runs `before` inside the server's embed read (after the page's statement), `times` times. */
async function duringEmbedRead<T>(before: (call: number) => Promise<void>, times: number, request: () => Promise<T>): Promise<T> {
  const embeds = t.server.context.catalogue.embeds as EmbedCache;
  const original = embeds.texts;
  let calls = 0;
  embeds.texts = async function (this: EmbedCache, ...args: Parameters<EmbedCache['texts']>) {
    if (calls < times) await before(++calls);
    return original.apply(this, args);
  };
  try {
    return await request();
  } finally {
    embeds.texts = original;
  }
}

test('GET /results: a benchmark deleted (with its results) between the page and its embed read: the page without them', async () => {
  const site = await seed.site();
  const f = await seed.flavor(site.id);
  const [keep, gone] = [await seed.benchmark(), await seed.benchmark()];
  const kept = (await upload(t, alice, { benchmark_id: keep.id, flavor_id: f.id }, { n: 1 })).body.id;
  for (const n of [2, 3]) assert.is((await upload(t, alice, { benchmark_id: gone.id, flavor_id: f.id }, { n })).status, 201);
  const res = await duringEmbedRead(
    async () => assert.is((await t.request('DELETE', `/benchmarks/${gone.id}`, { token: admin, query: { cascade: true } })).status, 204),
    1,
    () => t.request('GET', '/results', { query: { site_id: site.id } }),
  );
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.items.map((r: { id: string }) => r.id),
    [kept],
  );
  assert.is(res.body.total, 1);
});

test('GET /results/{id}: its benchmark deleted with it meanwhile is 404; a tag deleted meanwhile leaves the result without it', async () => {
  const gone = await seed.benchmark();
  const id = (await upload(t, alice, { benchmark_id: gone.id, flavor_id: flavor.id }, {})).body.id;
  const res = await duringEmbedRead(
    async () => void (await t.request('DELETE', `/benchmarks/${gone.id}`, { token: admin, query: { cascade: true } })),
    1,
    () => t.request('GET', `/results/${id}`),
  );
  expectProblem(res, 404, 'NOT_FOUND');

  const [stays, unlinked] = [await seed.tag(), await seed.tag()];
  const tagged = (await upload(t, alice, { benchmark_id: bench.id, flavor_id: flavor.id, tags_ids: [stays.id, unlinked.id] }, {})).body.id;
  const got = await duringEmbedRead(
    async () => void (await t.request('DELETE', `/tags/${unlinked.id}`, { token: admin, query: { cascade: true } })),
    1,
    () => t.request('GET', `/results/${tagged}`),
  );
  assert.is(got.status, 200, got.text);
  assert.equal(
    got.body.tags.map((x: { id: string }) => x.id),
    [stays.id],
  );
});

test('GET /tags: a tag deleted between the page and its text is left out; rows vanishing at every read give 503, never 500', async () => {
  const tags = async (prefix: string) => {
    const made: { id: string; name: string }[] = [];
    for (const n of [1, 2, 3, 4, 5]) made.push((await t.request('POST', '/tags', { token: admin, body: { name: `${prefix}-${n}` } })).body);
    return made;
  };
  const deleteTag = async (tag: { id: string }) => assert.is((await t.request('DELETE', `/tags/${tag.id}`, { token: admin })).status, 204);

  const some = await tags(`vanishing-${Date.now()}`);
  const once = await duringEmbedRead(
    () => deleteTag(some[0]!),
    1,
    () => t.request('GET', '/tags:search', { query: { terms: some[0]!.name.slice(0, -2) } }),
  );
  assert.is(once.status, 200, once.text);
  assert.equal(
    once.body.items.map((x: { name: string }) => x.name),
    some.slice(1).map((x) => x.name),
  );
  assert.is(once.body.total, 4);

  // One tag a page, each deleted as soon as its page was read: every read meets a deleted row.
  const more = await tags(`always-${Date.now()}`);
  const always = await duringEmbedRead(
    (call) => deleteTag(more[call - 1]!),
    5,
    () => t.request('GET', '/tags:search', { query: { terms: more[0]!.name.slice(0, -2), per_page: 1 } }),
  );
  expectProblem(always, 503, 'CATALOGUE_CHANGING');
  assert.ok(always.headers.get('retry-after'));
});

test.run();
