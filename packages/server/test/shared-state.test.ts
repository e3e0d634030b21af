/**
 * State shared by the server processes of one deployment: two servers on one database (each with
 * its own pool, caches and limiters, as two processes have). A write through one is counted at
 * once by the remembered totals of the other (PostgreSQL notifications); a client's write limit is
 * one budget across both (shared token buckets); RATE_LIMIT_STORE=memory keeps them apart.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig, type RawConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { ADMIN_ENTITLEMENT, startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { RATE_SYNC_MS } from '../src/rate-limit/shared.ts';

let a: TestServer;
let b: RunningServer;
let seed: Seeder;
let benchmarkId: string;
let flavor: { id: string; site_id: string };
const opened: RunningServer[] = [];

/** Another server on a's database, trusting a's provider. */
async function sibling(overrides: RawConfig = {}): Promise<RunningServer> {
  const server = await startServer(
    buildConfig({
      host: '127.0.0.1',
      port: '0',
      databaseUrl: a.databaseUrl,
      oidcIssuer: a.issuer.issuer,
      adminEntitlement: ADMIN_ENTITLEMENT,
      logLevel: 'silent',
      rateLimit: '0',
      readRateLimit: '0',
      ...overrides,
    }),
  );
  opened.push(server);
  return server;
}

// Chosen so that the clock decides nothing here: totals remembered for an hour (only a notification
// can make them change while a test runs), a write budget refilled over 10 minutes (no write comes
// back while a test runs).
test.before(async () => {
  a = await startTestServer({ rateLimit: '6/10m', totalsCacheSeconds: '3600' }, 'shared-state');
  b = await sibling({ rateLimit: '6/10m', totalsCacheSeconds: '3600' });
  seed = await createSeeder(a);
  benchmarkId = (await seed.benchmark()).id;
  const site = await seed.site();
  const f = await seed.flavor(site.id);
  flavor = { id: f.id, site_id: f.site_id };
  // Enough results for their total to be remembered (TotalCache minTotal: 1,000).
  await seed.results(
    Array.from({ length: 1000 }, (_, i) => ({
      benchmark_id: benchmarkId,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { i },
      execution_datetime: new Date(Date.UTC(2024, 0, 1, 0, 0, i)),
    })),
  );
});
test.after(async () => {
  for (const server of opened) await server.close();
  await a.close();
});

const totalAt = async (server: { url: string }) => {
  const res = await fetch(`${server.url}/api/v1/results?benchmark_id=${benchmarkId}&per_page=1`);
  assert.is(res.status, 200);
  return ((await res.json()) as { total: number }).total;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The total at `server` once it is `expected`. The notification takes a moment to arrive (more on a
 * loaded machine); without it the remembered total would stay for the hour of TOTALS_CACHE_SECONDS.
 */
const totalBecomes = async (server: { url: string }, expected: number) => {
  const deadline = Date.now() + 60_000;
  let total = await totalAt(server);
  while (total !== expected && Date.now() < deadline) {
    await sleep(20);
    total = await totalAt(server);
  }
  return total;
};

test('a result uploaded through one process is counted at once in the remembered total of the other', async () => {
  assert.is(await totalAt(b), 1000);
  assert.is(await totalAt(b), 1000); // remembered now: b would answer 1000 for an hour without notifications
  const token = await a.user('uploader');
  const uploaded = await a.request('POST', '/results', {
    token,
    query: { benchmark_id: benchmarkId, flavor_id: flavor.id, execution_datetime: '2024-06-01T00:00:00Z' },
    body: { i: -1 },
  });
  assert.is(uploaded.status, 201, uploaded.text);
  assert.is(await totalBecomes(b, 1001), 1001);
  // A delete through b shows in a's remembered total too.
  assert.is(await totalAt(a), 1001);
  assert.is(await totalAt(a), 1001);
  const admin = await a.admin();
  const deleted = await fetch(`${b.url}/api/v1/results/${uploaded.body.id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${admin}` },
  });
  assert.is(deleted.status, 204);
  assert.is(await totalBecomes(a, 1000), 1000);
});

const createTag = (server: { url: string }, token: string, name: string) =>
  fetch(`${server.url}/api/v1/tags`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, description: 'shared limit' }),
  }).then(async (res) => {
    await res.text();
    return res.status;
  });

/**
 * Waits until the shared bucket of 'writer' holds the charges of `writes` writes (each process
 * reports every RATE_SYNC_MS), then one RATE_SYNC_MS more: a process's view of the bucket older than
 * the report is then stale, and it learns the bucket again before deciding. Seen, not slept on.
 */
async function reported(writes: number): Promise<void> {
  const tokens = async () =>
    (await seed.sql<{ tokens: number }>("select tokens from rate_bucket where limiter = 'writes' and client like 'id:%writer'"))[0]?.tokens;
  // 6 per 10 minutes refills 0.01 a second: far less than a write while the test runs.
  const holds = (left: number | undefined) => left !== undefined && left < 6 - writes + 0.5;
  const deadline = Date.now() + 60_000;
  let left = await tokens();
  while (!holds(left) && Date.now() < deadline) {
    await sleep(20);
    left = await tokens();
  }
  assert.ok(holds(left), `the shared bucket holds ${writes} writes: ${left} tokens left`);
  await sleep(RATE_SYNC_MS);
}

test('a client has one write budget across both processes (RATE_LIMIT 6/10m): 6 writes pass in all, however they are spread', async () => {
  const token = await a.user('writer'); // registering is the first write
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push(await createTag(a, token, `through-a-${i}`));
  await reported(4); // a has reported its charges
  for (let i = 0; i < 2; i++) statuses.push(await createTag(b, token, `through-b-${i}`));
  await reported(6);
  statuses.push(await createTag(a, token, 'through-a-over'));
  statuses.push(await createTag(b, token, 'through-b-over'));
  assert.equal(statuses, [201, 201, 201, 201, 201, 429, 429]);
  const stored = await seed.sql<{ tokens: number }>("select tokens from rate_bucket where limiter = 'writes' and client like 'id:%writer'");
  assert.is(stored.length, 1);
  assert.ok(stored[0]!.tokens < 1, `the shared bucket is empty: ${stored[0]!.tokens}`);
});

test('RATE_LIMIT_STORE=memory: each process limits on its own (the budget is per process)', async () => {
  const c = await sibling({ rateLimit: '2/10m', rateLimitStore: 'memory' });
  const d = await sibling({ rateLimit: '2/10m', rateLimitStore: 'memory' });
  const token = await a.user('separate');
  const statuses = [
    await createTag(c, token, 'mem-c-1'),
    await createTag(c, token, 'mem-c-2'),
    await createTag(c, token, 'mem-c-3'),
    await createTag(d, token, 'mem-d-1'),
  ];
  assert.equal(statuses, [201, 201, 429, 201]);
});

test.run();
