/**
 * Bounded work per request (docs/security.md, "Abandoned expensive reads"): the statement timeout,
 * cancellation of the statements of a request whose client went away, `/ready` and `/health`
 * independent of the pool, the page depth cap, admission of expensive lists, and the read limit.
 *
 * Slow statements are made deterministic in two ways: a statement waiting for a lock the test holds
 * (a plain pg session: `lock table result`, or a row `for update`) runs until it is cancelled, and
 * the search of the issue (terms and a JSON sort, deep page) over 60,000 results takes a few hundred
 * milliseconds, far above a statement timeout of 100 ms. Real server, real PostgreSQL.
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, ValidationError } from '@benchmarks/sdk';
import { buildConfig, DEFAULTS, type RawConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { createLogger } from '../src/core/logger.ts';
import { ADMIN_ENTITLEMENT, startTestServer, type TestServer } from './support/harness.ts';
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
  // No statement timeout (the test's choice): a statement waiting for the test's lock then ends only
  // when the server cancels it, never by the clock, so the waits below can be generous and still
  // fail when a cancellation is missing.
  t = await startTestServer({ expensiveListConcurrency: '1', statementTimeout: '0' }, 'bounded_work', { logger });
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
  await db.query('analyze result');
});

test.after(async () => {
  await db?.end();
  await t?.close();
});

test('configuration: STATEMENT_TIMEOUT, DB_POOL_SIZE, MAX_PAGE_DEPTH, EXPENSIVE_LIST_CONCURRENCY and READ_RATE_LIMIT, defaults on', () => {
  const defaults = buildConfig({});
  assert.is(defaults.statementTimeoutMs, 15_000);
  assert.is(defaults.dbPoolSize, 10);
  assert.is(defaults.maxPageDepth, 10_000);
  assert.is(defaults.expensiveListConcurrency, DEFAULTS.expensiveListConcurrency);
  assert.ok(defaults.expensiveListConcurrency >= 2);
  assert.equal(defaults.readRateLimit, { max: 600, windowMs: 60_000 });
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
    assert.is(await running(), 0, 'nothing left running');
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

test('SDK auto-pagination walks the first 10,000 results, then throws ValidationError PAGE_TOO_DEEP', async () => {
  const client = createClient({ baseUrl: t.url });
  let seen = 0;
  try {
    for await (const _ of client.results.list({ benchmark_id: target.benchmark })) seen++;
    assert.unreachable('the iterator stops at the cap');
  } catch (err) {
    assert.instance(err, ValidationError);
    assert.is((err as ValidationError).code, 'PAGE_TOO_DEEP');
  } finally {
    await client.close();
  }
  assert.is(seen, 10_000);
});

test('expensive lists beyond the admission limit: 503 EXPENSIVE_LIST_BUSY with Retry-After at once, while cheap lists still answer', async () => {
  const started = Date.now();
  let answers = 0;
  const search = () =>
    t.request('GET', '/results:search', { query: ATTACK }).then((res) => ({ res, at: Date.now() - started, order: answers++ }));
  const searches = Array.from({ length: 10 }, search);
  // Sent once searches hold the place and wait for it (seen, not slept on).
  const admission = t.server.context.expensiveLists;
  await until('searches to run and wait', HANG_MS, async () => admission.load.active === 1 && admission.load.waiting >= 1);
  const cheap = await timed(() => t.request('GET', '/results', { query: { per_page: 1 } }).then((res) => ({ ...res, order: answers++ })));
  const done = await Promise.all(searches);
  const busy = done.filter((d) => d.res.status === 503);
  const ok = done.filter((d) => d.res.status === 200);
  const lastSearch = Math.max(...ok.map((d) => d.at));
  console.log(
    `10 searches at once, 1 place and 4 waiting: ${ok.length} × 200 (last after ${lastSearch} ms), ${busy.length} × 503 (after at most ${Math.max(...busy.map((d) => d.at))} ms); a cheap list meanwhile: ${cheap.ms} ms`,
  );
  assert.is(ok.length + busy.length, 10, done.map((d) => d.res.status).join(','));
  assert.ok(busy.length >= 1, 'some refused');
  assert.ok(ok.length >= 5, 'the admitted and the waiting ones are answered');
  for (const { res } of busy) {
    assertProblem(res, 503, 'EXPENSIVE_LIST_BUSY');
    assert.ok(Number(res.headers.get('retry-after')) >= 1);
  }
  assert.is(cheap.status, 200);
  // An ordering, not a duration: the cheap list, sent while searches waited for the one place, was
  // answered before the last admitted search.
  const lastOrder = Math.max(...ok.map((d) => d.order));
  assert.ok(cheap.order < lastOrder, `the cheap list (${cheap.ms} ms) did not wait for the searches (${lastSearch} ms)`);
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
