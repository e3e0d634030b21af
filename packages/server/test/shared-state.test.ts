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
import { RATE_SYNC_MS } from '../src/services/shared-rate-limit.ts';

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

test.before(async () => {
  a = await startTestServer({ rateLimit: '6/60s' }, 'shared-state');
  b = await sibling({ rateLimit: '6/60s' });
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

test('a result uploaded through one process is counted at once in the remembered total of the other', async () => {
  assert.is(await totalAt(b), 1000);
  assert.is(await totalAt(b), 1000); // remembered now: b would answer 1000 for 30 s without notifications
  const token = await a.user('uploader');
  const uploaded = await a.request('POST', '/results', {
    token,
    query: { benchmark_id: benchmarkId, flavor_id: flavor.id, execution_datetime: '2024-06-01T00:00:00Z' },
    body: { i: -1 },
  });
  assert.is(uploaded.status, 201, uploaded.text);
  assert.is(await totalAt(b), 1001);
  // A delete through b shows in a's remembered total too.
  assert.is(await totalAt(a), 1001);
  assert.is(await totalAt(a), 1001);
  const admin = await a.admin();
  const deleted = await fetch(`${b.url}/api/v1/results/${uploaded.body.id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${admin}` },
  });
  assert.is(deleted.status, 204);
  assert.is(await totalAt(a), 1000);
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

test('a client has one write budget across both processes (RATE_LIMIT 6/60s): 6 writes pass in all, however they are spread', async () => {
  const token = await a.user('writer'); // registering is the first write
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push(await createTag(a, token, `through-a-${i}`));
  await sleep(RATE_SYNC_MS * 2); // a has reported its charges
  for (let i = 0; i < 2; i++) statuses.push(await createTag(b, token, `through-b-${i}`));
  await sleep(RATE_SYNC_MS * 2);
  statuses.push(await createTag(a, token, 'through-a-over'));
  statuses.push(await createTag(b, token, 'through-b-over'));
  assert.equal(statuses, [201, 201, 201, 201, 201, 429, 429]);
  const stored = await seed.sql<{ tokens: number }>("select tokens from rate_bucket where limiter = 'writes' and client like 'id:%writer'");
  assert.is(stored.length, 1);
  assert.ok(stored[0]!.tokens < 1, `the shared bucket is empty: ${stored[0]!.tokens}`);
});

test('RATE_LIMIT_STORE=memory: each process limits on its own (the budget is per process)', async () => {
  const c = await sibling({ rateLimit: '2/60s', rateLimitStore: 'memory' });
  const d = await sibling({ rateLimit: '2/60s', rateLimitStore: 'memory' });
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
