/**
 * Bounded work per request (docs/security.md, "Abandoned expensive reads"): the statement timeout,
 * cancellation of the statements of a request whose client went away, `/ready` and `/health`
 * independent of the pool, the page depth cap, admission of expensive lists (they wait their turn
 * up to EXPENSIVE_LIST_WAIT), and the read limit.
 *
 * Slow statements are made deterministic in two ways: a statement waiting for a lock the test holds
 * (a plain pg session: `lock table result`, or a row `for update`) runs until it is cancelled, and
 * the search of the issue (terms and a JSON sort, deep page) over 60,000 results takes a few hundred
 * milliseconds, far above a statement timeout of 100 ms. Real server, real PostgreSQL.
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient } from '@benchmarks/sdk';
import { buildConfig, DEFAULTS, type RawConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { AppError } from '../src/core/errors.ts';
import { RequestAbandonedError } from '../src/db/request-scope.ts';
import { ExpensiveListAdmission } from '../src/services/runtime/admission.ts';
import { createLogger } from '../src/core/logger.ts';
import { ADMIN_ENTITLEMENT, queryString, startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { assertProblem } from './support/problem.ts';

const ROWS = 60_000;
/** The attack of the issue: two terms, a sort on a JSON path, a deep page. */
const ATTACK = { terms: ['bw-site', 'bw-flavor'], sort_by: '-json.pad', per_page: 100, page: 99 };

const lines: Record<string, unknown>[] = [];
const logger = createLogger('debug', (line) => lines.push(JSON.parse(line)));
let t: TestServer;
let seed: Seeder;
let db: pg.Client;
let target: { benchmark: string; site: string; flavor: string };
/** A benchmark of 5 results: a JSON filter on it is an expensive list that takes milliseconds. */
let few: string;
/** An expensive list (a JSON filter) of a few milliseconds. */
const quickExpensive = () => ({ benchmark_id: few, filters: 'json.n >= 2', per_page: 2 });

const ACTIVE =
  "from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend' and state = 'active'";

/** Client statements of the test database running now (not this session, not idle ones). */
async function running(): Promise<number> {
  return (await db.query(`select count(*)::int as n ${ACTIVE}`)).rows[0].n;
}

/**
 * How long a wait below may last before the test gives up: it ends waits that would never end (a
 * statement nobody cancels waits for the test's lock until the test releases it), and measures nothing.
 */
const HANG_MS = 60_000;

async function until<T>(label: string, ms: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Another server on the test database, with other settings. */
async function alongside(overrides: RawConfig, log = createLogger('silent')): Promise<{ server: RunningServer; api: string }> {
  const server = await startServer(
    buildConfig({
      host: '127.0.0.1',
      port: '0',
      databaseUrl: t.databaseUrl,
      oidcIssuer: t.issuer.issuer,
      adminEntitlement: ADMIN_ENTITLEMENT,
      logLevel: 'silent',
      rateLimit: '0',
      readRateLimit: '0',
      ...overrides,
    }),
    { logger: log },
  );
  return { server, api: `${server.url}/api/v1` };
}

/** A session of the test's own that holds a lock until released. */
async function holdLock(sql: string, params: unknown[] = []): Promise<{ release(): Promise<void> }> {
  const locker = new pg.Client({ connectionString: t.databaseUrl });
  await locker.connect();
  await locker.query('begin');
  await locker.query(sql, params);
  return {
    release: async () => {
      await locker.query('rollback');
      await locker.end();
    },
  };
}

const timed = async <T>(work: () => Promise<T>): Promise<T & { ms: number }> => {
  const started = Date.now();
  const out = await work();
  return Object.assign(out as object, { ms: Date.now() - started }) as T & { ms: number };
};

test.before(async () => {
  // One place, and a wait far longer than the few milliseconds of the quick expensive lists. No
  // statement timeout (the test's choice): a statement waiting for the test's lock then ends only
  // when the server cancels it, never by the clock, so the waits below can be generous and still
  // fail when a cancellation is missing.
  t = await startTestServer({ expensiveListConcurrency: '1', expensiveListWait: '15s', statementTimeout: '0' }, 'bounded_work', { logger });
  seed = await createSeeder(t);
  const site = await seed.site({ name: 'bw-site' });
  const flavor = await seed.flavor(site.id, { name: 'bw-flavor' });
  const benchmark = await seed.benchmark({ image: 'ghcr.io/test/bw-bench' });
  target = { benchmark: benchmark.id, site: site.id, flavor: flavor.id };
  db = new pg.Client({ connectionString: t.databaseUrl });
  await db.connect();
  await db.query(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), $1, $2, $3, jsonb_build_object('n', g, 'pad', md5(g::text) || md5((g + 1)::text)), now() - make_interval(secs => g), now(), $4, $5, false, false
     from generate_series(1, $6::int) g`,
    [target.benchmark, target.site, target.flavor, seed.owner.uploader_iss, seed.owner.uploader_sub, ROWS],
  );
  // Apart from the attack's site and flavor: the searches' totals stay ROWS.
  few = (await seed.benchmark({ image: 'ghcr.io/test/bw-few' })).id;
  const fewSite = await seed.site();
  const fewFlavor = await seed.flavor(fewSite.id);
  await db.query(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), $1, $2, $3, jsonb_build_object('n', g), now() - make_interval(secs => g), now(), $4, $5, false, false
     from generate_series(1, 5) g`,
    [few, fewSite.id, fewFlavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub],
  );
  await db.query('analyze result');
});

test.after(async () => {
  await db?.end();
  await t?.close();
});

test('configuration: STATEMENT_TIMEOUT, DB_POOL_SIZE, MAX_PAGE_DEPTH, EXPENSIVE_LIST_CONCURRENCY and _WAIT on; READ_RATE_LIMIT off by default', () => {
  const defaults = buildConfig({});
  assert.is(defaults.statementTimeoutMs, 15_000);
  assert.is(defaults.dbPoolSize, 10);
  assert.is(defaults.maxPageDepth, 10_000);
  assert.is(defaults.expensiveListConcurrency, DEFAULTS.expensiveListConcurrency);
  assert.ok(defaults.expensiveListConcurrency >= 2);
  assert.is(defaults.expensiveListWaitMs, 10_000);
  assert.is(defaults.readRateLimit, null, 'reads are not limited unless configured');
  assert.equal(buildConfig({ readRateLimit: '600/60s' }).readRateLimit, { max: 600, windowMs: 60_000 });
  assert.is(buildConfig({ expensiveListWait: '2s' }).expensiveListWaitMs, 2000);
  assert.is(buildConfig({ expensiveListWait: '0' }).expensiveListWaitMs, 0, '0: refused at once when every place is taken');
  assert.is(buildConfig({ expensiveListWait: '1m' }).expensiveListWaitMs, 15_000, 'at most the statement timeout');
  assert.is(buildConfig({ expensiveListWait: '1m', statementTimeout: '2m' }).expensiveListWaitMs, 60_000);
  assert.is(buildConfig({ expensiveListWait: '1m', statementTimeout: '0' }).expensiveListWaitMs, 60_000);
  assert.throws(() => buildConfig({ expensiveListWait: 'a while' }), /EXPENSIVE_LIST_WAIT must be/);
  assert.is(buildConfig({ statementTimeout: '500ms' }).statementTimeoutMs, 500);
  assert.is(buildConfig({ statementTimeout: '2m' }).statementTimeoutMs, 120_000);
  assert.is(buildConfig({ statementTimeout: '2500' }).statementTimeoutMs, 2500);
  assert.is(buildConfig({ statementTimeout: '0' }).statementTimeoutMs, 0);
  assert.is(buildConfig({ readRateLimit: '0' }).readRateLimit, null);
  for (const bad of ['fast', '-1s', '10h', '1.5.2s'])
    assert.throws(() => buildConfig({ statementTimeout: bad }), /STATEMENT_TIMEOUT must be/, bad);
  assert.throws(() => buildConfig({ dbPoolSize: '1' }), /DB_POOL_SIZE must be an integer from 2/);
  assert.throws(() => buildConfig({ maxPageDepth: 'deep' }), /MAX_PAGE_DEPTH must be/);
  assert.throws(() => buildConfig({ expensiveListConcurrency: '0' }), /EXPENSIVE_LIST_CONCURRENCY must be/);
  assert.throws(() => buildConfig({ readRateLimit: 'lots' }), /READ_RATE_LIMIT must be/);
});

test('GET /results:search past STATEMENT_TIMEOUT: cancelled by PostgreSQL, 503 DATABASE_TIMEOUT with Retry-After, logged at warn with the request id', async () => {
  const log: Record<string, unknown>[] = [];
  const { server, api } = await alongside(
    { statementTimeout: '100ms' },
    createLogger('debug', (line) => log.push(JSON.parse(line))),
  );
  try {
    const started = Date.now();
    const res = await fetch(
      `${api}/results:search?${new URLSearchParams([...ATTACK.terms.map((v) => ['terms', v]), ['sort_by', ATTACK.sort_by], ['per_page', '100'], ['page', '99']])}`,
    );
    const ms = Date.now() - started;
    const body = await res.json();
    assertProblem({ status: res.status, headers: res.headers, body }, 503, 'DATABASE_TIMEOUT');
    assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
    const requestId = res.headers.get('x-request-id');
    assert.match(requestId ?? '', /^[0-9a-f-]{36}$/);
    const warned = log.find((l) => l.level === 'warn' && l.requestId === requestId);
    assert.ok(warned, 'a warn line names the request');
    assert.is(warned!.code, 'DATABASE_TIMEOUT');
    assert.is(warned!.status, 503);
    // PostgreSQL ends the cancelled backend's statement just after the answer: seen, not assumed.
    await until('nothing left running', HANG_MS, async () => ((await running()) === 0 ? true : undefined));
    console.log(`the attack's search under a 100 ms statement timeout: 503 after ${ms} ms`);
  } finally {
    await server.close();
  }
  // The same search without the timeout completes: the timeout, not the query, made the 503.
  const full = await t.request('GET', '/results:search', { query: ATTACK });
  assert.is(full.status, 200, full.text);
  assert.is(full.body.total, ROWS);
});

test('a client that abandons a slow GET /results leaves no statement running; the server goes on serving', async () => {
  const lock = await holdLock('lock table result in access exclusive mode');
  const controller = new AbortController();
  let pending: Promise<unknown> | undefined;
  let backends: { pid: number; query_start: Date }[] = [];
  try {
    pending = fetch(`${t.api}/results?per_page=1`, { signal: controller.signal }).catch((err) => err);
    await until('the list waits for the lock', HANG_MS, async () => (await running()) >= 1);
    backends = (await db.query(`select pid, query_start ${ACTIVE}`)).rows;
    const abortedAt = Date.now();
    controller.abort();
    const ms = await until('the statements are cancelled', HANG_MS, async () =>
      (await running()) === 0 ? Date.now() - abortedAt : undefined,
    );
    console.log(`abandoned list: its statements gone ${ms} ms after the client left`);
  } finally {
    await lock.release();
  }
  await pending;
  const cancelled = await until('the cancellation is logged', HANG_MS, async () =>
    lines.find((l) => l.msg === 'client went away: statements of its request cancelled' && l.path === '/api/v1/results'),
  );
  assert.is(cancelled.level, 'info');
  assert.match(String(cancelled.requestId), /^[0-9a-f-]{36}$/);
  assert.ok(Number(cancelled.cancelled) >= 1);
  assert.ok(lines.some((l) => l.msg === 'request abandoned by its client' && l.requestId === cancelled.requestId));
  for (let i = 0; i < 15; i++)
    assert.is((await t.request('GET', '/results', { query: { per_page: 1 } })).status, 200, 'the pool is whole again');
  // A connection whose statement was cancelled is discarded, never handed to another request.
  const { rows: after } = await db.query('select pid, query_start from pg_stat_activity where pid = any($1::int[])', [
    backends.map((b) => b.pid),
  ]);
  for (const b of after)
    assert.equal(b.query_start, backends.find((x) => x.pid === b.pid)!.query_start, `backend ${b.pid} ran nothing more`);
});

test('many clients abandoning at once: one cancel statement on the control connection, every statement gone, no queued pg queries', async () => {
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  const lock = await holdLock('lock table result in access exclusive mode');
  const controllers = Array.from({ length: 4 }, () => new AbortController());
  const before = lines.length;
  let pending: Promise<unknown>[] = [];
  let statements = 0;
  try {
    // Each cheap list reads its page and its total in parallel (the total of the same list once).
    pending = controllers.map((c, i) => fetch(`${t.api}/results?per_page=${i + 1}`, { signal: c.signal }).catch((err) => err));
    statements = await until('the lists wait for the lock', HANG_MS, async () => {
      const n = await running();
      return n >= 4 ? n : undefined;
    });
    // The lists' totals may arrive after their pages (and may be shared): count once nothing more arrives.
    for (let unchanged = 0; unchanged < 10; ) {
      await new Promise((r) => setTimeout(r, 20));
      const n = await running();
      if (n === statements) unchanged++;
      else [statements, unchanged] = [n, 0];
    }
    console.log(`4 lists waiting: ${statements} statements`);
    for (const c of controllers) c.abort();
    await until('the statements are cancelled', HANG_MS, async () => (await running()) === 0);
  } finally {
    await lock.release();
  }
  await Promise.all(pending);
  const logged = await until('four cancellations logged', HANG_MS, async () => {
    const found = lines.slice(before).filter((l) => l.msg === 'client went away: statements of its request cancelled');
    return found.length === 4 ? found : undefined;
  });
  assert.is(
    logged.reduce((n, l) => n + Number(l.cancelled), 0),
    statements,
    'each request counts the backends of its own',
  );
  await new Promise((r) => setImmediate(r));
  process.off('warning', onWarning);
  assert.equal(
    warnings.filter((w) => /already executing a query/.test(w.message)).map((w) => w.message),
    [],
    'no statement queued inside pg',
  );
});

test('an expensive list on a quiet pool reads its page and its total in parallel', async () => {
  const lock = await holdLock('lock table result in access exclusive mode');
  let pending: Promise<unknown> | undefined;
  try {
    pending = t.request('GET', '/results:search', { query: { terms: ['bw-site'], sort_by: '-json.n', per_page: 3 } });
    const both = await until('the page and the total both wait for the lock', HANG_MS, async () => (await running()) === 2);
    assert.ok(both);
  } finally {
    await lock.release();
  }
  const res = (await pending) as Response;
  assert.is(res.status, 200);
});

test('a write abandoned while it waits for a lock: cancelled, not retried, nothing stored', async () => {
  const token = await t.token('catalogue-owner');
  const tag = await seed.tag();
  const { rows } = await db.query('select id from result where benchmark_id = $1 limit 1', [target.benchmark]);
  const resultId = rows[0].id as string;
  const lock = await holdLock('select id from result where id = $1 for update', [resultId]);
  const controller = new AbortController();
  let pending: Promise<unknown> | undefined;
  try {
    pending = fetch(`${t.api}/results/${resultId}/tags`, {
      method: 'PUT',
      signal: controller.signal,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tags_ids: [tag.id] }),
    }).catch((err) => err);
    await until('the tag replacement waits for the row', HANG_MS, async () => (await running()) >= 1);
    controller.abort();
    await until('its statement is cancelled', HANG_MS, async () => (await running()) === 0);
  } finally {
    await lock.release();
  }
  await pending;
  await new Promise((r) => setTimeout(r, 300)); // a retry would have run by now
  assert.is(await running(), 0, 'no retry runs');
  const stored = await db.query('select count(*)::int as n from result_tag where result_id = $1', [resultId]);
  assert.is(stored.rows[0].n, 0, 'nothing stored');
});

test('GET /ready and /health answer at once while slow requests hold every pooled connection', async () => {
  const { server, api } = await alongside({ dbPoolSize: '2', statementTimeout: '0' });
  const lock = await holdLock('lock table result in access exclusive mode');
  let lists: Promise<number>[] = [];
  try {
    // One list: its page and its total (read in parallel) hold both pooled connections, and no
    // request waits for the pool, whose 5 s limit would end the setting before the lock does.
    lists = Array.from({ length: 1 }, () =>
      fetch(`${api}/results?per_page=1`).then(async (r) => {
        await r.arrayBuffer();
        return r.status;
      }),
    );
    await until('both pooled connections are busy', HANG_MS, async () => (await running()) >= 2);
    const ready = await timed(async () => {
      const r = await fetch(`${api}/ready`);
      return { status: r.status, body: await r.json() };
    });
    const health = await timed(async () => ({ status: (await fetch(`${api}/health`)).status }));
    console.log(`pool exhausted: /ready ${ready.status} in ${ready.ms} ms, /health ${health.status} in ${health.ms} ms`);
    // An ordering, not a duration: both answered while every pooled connection was still held by a
    // statement waiting for the lock. Through the pool /ready would have waited for a connection
    // that only the lock's release frees, and got 503 when the pool gave up (5 s).
    assert.ok((await running()) >= 2, 'the pooled connections were still held');
    assert.is(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body, { status: 'ready', database: 'ok', migrations: 'applied' });
    assert.is(health.status, 200);
  } finally {
    await lock.release();
  }
  for (const status of await Promise.all(lists)) assert.ok(status === 200 || status === 503, `list answered ${status}`);
  await server.close();
});

test('a page beyond MAX_PAGE_DEPTH: 422 PAGE_TOO_DEEP naming the limit, on every result list; catalogue lists are not capped', async () => {
  const owner = await t.token('catalogue-owner');
  const ok = await t.request('GET', '/results', { query: { page: 100, per_page: 100 } });
  assert.is(ok.status, 200);
  assert.is(ok.body.items.length, 100);
  const deep = await t.request('GET', '/results', { query: { page: 101, per_page: 100 } });
  assertProblem(deep, 422, 'PAGE_TOO_DEEP');
  assert.match(deep.body.detail, /10000/);
  assert.match(deep.body.detail, /last page is 100\b/);
  assert.is(deep.body.limit, 10_000);
  assert.equal(deep.body.errors, [{ in: 'query', path: 'page', message: 'page × per_page must be at most 10000' }]);
  assert.is((await t.request('GET', '/results:search', { query: { terms: 'bw-site', page: 333, per_page: 30 } })).status, 200);
  assertProblem(await t.request('GET', '/results:search', { query: { terms: 'bw-site', page: 334, per_page: 30 } }), 422, 'PAGE_TOO_DEEP');
  assertProblem(await t.request('GET', '/users/self/results', { token: owner, query: { page: 1_000_000 } }), 422, 'PAGE_TOO_DEEP');
  assert.is((await t.request('GET', '/sites', { query: { page: 1_000_000 } })).status, 200);
});

test('SDK auto-pagination goes past MAX_PAGE_DEPTH by cursor: no PAGE_TOO_DEEP, every result once', async () => {
  const client = createClient({ baseUrl: t.url });
  try {
    const items = await client.results.list({ benchmark_id: target.benchmark }).toArray({ max: 10_100 });
    assert.is(items.length, 10_100);
    assert.is(new Set(items.map((r) => r.id)).size, 10_100);
  } finally {
    await client.close();
  }
});

/** `n` expensive lists sent at once while the test holds the result table; resolves once all are admitted or waiting. */
async function expensiveBehindLock(
  n: number,
  admission: ExpensiveListAdmission,
  api = t.api,
): Promise<{ answers: Promise<Response>[]; release(): Promise<void> }> {
  const lock = await holdLock('lock table result in access exclusive mode');
  const { active, waiting } = admission.load;
  const get = () => fetch(`${api}/results${queryString(quickExpensive())}`);
  // The first takes the place and waits for the lock; the others arrive while it holds the place.
  const answers = [get()];
  try {
    await until(
      'the first holds the place, its statement waiting for the lock',
      5000,
      async () => admission.load.active > active && (await running()) >= 1,
    );
    for (let i = 1; i < n; i++) answers.push(get());
    await until(`${n - 1} lists waiting or refused`, 10_000, async () => {
      const c = admission.counts;
      return admission.load.waiting - waiting + c.timedOut + c.full >= n - 1 || undefined;
    });
  } catch (err) {
    await lock.release();
    throw err;
  }
  return { answers, release: () => lock.release() };
}

test('32 expensive lists at once on one place: each waits its turn, first come, first served, and all answer 200', async () => {
  const admission = t.server.context.runtime.expensiveLists;
  const before = { ...admission.counts };
  // Counted before the release: a request answered early cannot make the others look as if they had waited.
  const held = await expensiveBehindLock(32, admission);
  const waitingBehind = admission.load.waiting;
  await held.release();
  const answers = await Promise.all(held.answers);
  const statuses = answers.map((r) => r.status);
  console.log(
    `32 expensive lists on 1 place (wait ${admission.maxWaitMs / 1000} s): ${statuses.filter((s) => s === 200).length} × 200, ${waitingBehind} waited`,
  );
  assert.equal(statuses, Array(32).fill(200));
  for (const r of answers) assert.equal(((await r.json()) as { items: unknown[] }).items.length, 2);
  assert.is(waitingBehind, 31, 'all but the first waited for the one place');
  assert.is(admission.counts.waited - before.waited, 31);
  assert.is(admission.counts.admitted - before.admitted, 32);
  assert.is(admission.counts.timedOut - before.timedOut, 0);
  assert.equal(admission.load, { active: 0, waiting: 0 });
});

test('expensive lists that wait longer than EXPENSIVE_LIST_WAIT: 503 EXPENSIVE_LIST_BUSY with Retry-After; the one running answers', async () => {
  // A wait much shorter than the lock the test holds: the lists behind the first cannot get the place in time.
  const { server, api } = await alongside({ expensiveListConcurrency: '1', expensiveListWait: '20ms' });
  try {
    const admission = server.context.runtime.expensiveLists;
    const held = await expensiveBehindLock(8, admission, api);
    const refused = await Promise.all(held.answers.slice(1));
    await held.release();
    const first = await held.answers[0]!;
    assert.is(first.status, 200);
    for (const res of refused) {
      const body = await res.json();
      assert.is(res.status, 503);
      assert.is(res.headers.get('content-type'), 'application/problem+json');
      assert.is(body.code, 'EXPENSIVE_LIST_BUSY');
      assert.match(body.detail, /none of 1 places came free within 0.02 s/);
      assert.is(res.headers.get('retry-after'), '1');
    }
    assert.is(admission.counts.timedOut, 7);
    assert.equal(admission.load, { active: 0, waiting: 0 });
  } finally {
    await server.close();
  }
});

test('a waiting expensive list whose client goes away leaves the line at once (counted); the next one gets the place', async () => {
  const admission = t.server.context.runtime.expensiveLists;
  const before = { ...admission.counts };
  const lock = await holdLock('lock table result in access exclusive mode');
  const leaving = new AbortController();
  let holder: Promise<Response> | undefined;
  let gone: Promise<unknown> | undefined;
  try {
    const url = `${t.api}/results${queryString(quickExpensive())}`;
    holder = fetch(url);
    await until('the first holds the place', HANG_MS, async () => admission.load.active === 1 && (await running()) >= 1);
    gone = fetch(url, { signal: leaving.signal }).catch((err) => err);
    await until('the second waits for the place', HANG_MS, async () => admission.load.waiting === 1);
    leaving.abort();
    await until('the abandoned request leaves the line', HANG_MS, async () => admission.load.waiting === 0);
    assert.is(admission.counts.abandoned - before.abandoned, 1);
    assert.is(admission.load.active, 1, 'the first keeps its place');
  } finally {
    await lock.release();
  }
  await gone;
  assert.is((await holder!).status, 200);
  assert.is((await t.request('GET', '/results', { query: quickExpensive() })).status, 200, 'the place is free for the next');
  assert.is(admission.counts.admitted - before.admitted, 2, 'the abandoned request never ran');
});

test('a cheap list does not wait behind expensive ones', async () => {
  const admission = t.server.context.runtime.expensiveLists;
  let settled = 0;
  const searches = Array.from({ length: 4 }, () =>
    t.request('GET', '/results:search', { query: ATTACK }).finally(() => {
      settled++;
    }),
  );
  await until('searches wait for the one place', 10_000, async () => admission.load.waiting >= 1);
  const cheap = await timed(() => t.request('GET', '/results', { query: { per_page: 1 } }));
  const pendingThen = searches.length - settled;
  const done = await Promise.all(searches);
  console.log(`a cheap list behind 4 searches on 1 place: ${cheap.ms} ms, answered while ${pendingThen} searches were not`);
  assert.is(cheap.status, 200);
  assert.ok(pendingThen >= 1, 'answered while searches were still waiting or running');
  assert.equal(
    done.map((d) => d.status),
    [200, 200, 200, 200],
  );
});

test('the admission: beyond its cap of waiting requests, refused at once; with no wait, refused at once; places passed on in order', async () => {
  const release: (() => void)[] = [];
  const work = (order: number[], n: number) => () =>
    new Promise<void>((resolve) => {
      order.push(n);
      release.push(resolve);
    });
  const capped = new ExpensiveListAdmission(1, 60_000, 2);
  const order: number[] = [];
  const runs = [1, 2, 3].map((n) => capped.run(work(order, n)));
  const refusal = await capped.run(work(order, 4)).then(
    () => null,
    (err) => err,
  );
  assert.instance(refusal, AppError);
  assert.is(refusal.code, 'EXPENSIVE_LIST_BUSY');
  assert.match(refusal.detail, /2 are already waiting for one of 1 places/);
  assert.equal(capped.counts, { admitted: 1, waited: 2, abandoned: 0, timedOut: 0, full: 1 });
  while (release.length) {
    release.shift()!();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(runs);
  assert.equal(order, [1, 2, 3], 'first come, first served');
  const none = new ExpensiveListAdmission(1, 0);
  const running = none.run(work(order, 5));
  assert.is(((await none.run(work(order, 6)).catch((err) => err)) as AppError).code, 'EXPENSIVE_LIST_BUSY');
  release.shift()!();
  await running;
  const leaving = new AbortController();
  const quitter = capped.run(work(order, 7));
  const waiter = capped.run(work(order, 8), leaving.signal);
  leaving.abort(new RequestAbandonedError());
  assert.instance(await waiter.catch((err) => err), RequestAbandonedError);
  assert.is(capped.counts.abandoned, 1);
  assert.equal(capped.load, { active: 1, waiting: 0 });
  release.shift()!();
  await quitter;
  assert.equal(capped.load, { active: 0, waiting: 0 });
});

test('anonymous reads beyond READ_RATE_LIMIT: 429 RATE_LIMITED with Retry-After; /health, /ready and a known token keep their own budget', async () => {
  // 20 per hour: no read comes back while the test runs, however slowly (20 per minute gave one back every 3 s).
  const limited = await startTestServer({ readRateLimit: '20/1h' }, 'bounded_reads');
  try {
    const user = await limited.user('reader');
    for (let i = 0; i < 20; i++) {
      const res = await limited.request('GET', '/sites');
      assert.is(res.status, 200, `read ${i + 1}`);
      assert.is(res.headers.get('ratelimit-limit'), '20');
    }
    const refused = await limited.request('GET', '/results', { query: { per_page: 1 } });
    assertProblem(refused, 429, 'RATE_LIMITED');
    assert.match(refused.body.detail, /Too many reads: at most 20 per 3600 s/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 180, `Retry-After ${retryAfter}: one read comes back every 180 s`);
    assert.is((await limited.request('GET', '/health')).status, 200);
    assert.is((await limited.request('GET', '/ready')).status, 200);
    assert.is((await limited.request('GET', '/sites', { token: user })).status, 200, 'a verified token reads on its own budget');
    assert.is((await limited.request('GET', '/sites')).status, 429, 'the address stays limited');
  } finally {
    await limited.close();
  }
});

test.run();
