/**
 * Two real `benchmarks-server start` processes on one database, trusting one real OpenID
 * provider: a result uploaded through one is counted at once in the remembered total of the other
 * (PostgreSQL notifications), and a client's writes draw on one budget across both (shared rate
 * limit buckets). shared-state.test.ts checks the same in one process with two servers, in detail.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';
import { freePort } from '../src/db/embedded.ts';
import { RATE_SYNC_MS } from '../src/rate-limit/shared.ts';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { runServer, waitFor, type ServerProcess } from './support/process.ts';

let issuer: RunningIssuer;
let url: string;
let a: ServerProcess;
let b: ServerProcess;
let apiA: string;
let apiB: string;
let token: string;
let benchmarkId: string;
let flavorId: string;

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

async function start(port: number): Promise<ServerProcess> {
  // 8 writes per 10 minutes per client, shared (none comes back while the test runs, however slowly);
  // reads unlimited (the test reads totals often); totals remembered for an hour (only a
  // notification changes them while the test runs).
  const s = runServer(['start', '--port', String(port), '--database-url', url], {
    OIDC_ISSUERS: issuer.issuer,
    RATE_LIMIT: '8/10m',
    READ_RATE_LIMIT: '0',
    TOTALS_CACHE_SECONDS: '3600',
  });
  await waitFor(
    () => /serving on/.test(s.stderr()) || s.child.exitCode !== null,
    () => `serving (stderr: ${s.stderr()})`,
  );
  assert.is(s.child.exitCode, null, s.stderr());
  return s;
}

const call = async (api: string, method: string, path: string, body?: unknown) => {
  const res = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
};

const totalAt = async (api: string) => (await call(api, 'GET', `/results?benchmark_id=${benchmarkId}&per_page=1`)).body.total as number;

test.before(async () => {
  issuer = await startIssuer();
  issuer.addAccount({ sub: 'writer', email: 'writer@test.example', email_verified: true, entitlements: [] });
  token = await issuer.mintAccessToken({ sub: 'writer' });
  url = await createMigratedTestDatabase('shared_processes');
  const [p1, p2] = [await freePort(), await freePort()];
  a = await start(p1);
  b = await start(p2);
  apiA = `http://127.0.0.1:${p1}/api/v1`;
  apiB = `http://127.0.0.1:${p2}/api/v1`;
  assert.is((await call(apiA, 'POST', '/users/self')).status, 201); // write 1 of 8
  // A catalogue and 1,000 results written directly (their total is large enough to be remembered).
  const owner = [issuer.issuer, 'writer'];
  benchmarkId = crypto.randomUUID();
  const siteId = crypto.randomUUID();
  flavorId = crypto.randomUUID();
  await sql(
    `insert into benchmark (id, container_image, container_tag, json_schema, description, url, status, upload_datetime, uploader_iss, uploader_sub)
     values ($1, 'ghcr.io/test/processes', '1.0', '{}', 'two processes', null, 'approved', now(), $2, $3)`,
    [benchmarkId, ...owner],
  );
  await sql(
    `insert into site (id, name, address, description, status, upload_datetime, uploader_iss, uploader_sub)
     values ($1, 'two-processes', 'Here', null, 'approved', now(), $2, $3)`,
    [siteId, ...owner],
  );
  await sql(
    `insert into flavor (id, site_id, name, description, status, upload_datetime, uploader_iss, uploader_sub)
     values ($1, $2, 'small', null, 'approved', now(), $3, $4)`,
    [flavorId, siteId, ...owner],
  );
  await sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), $1, $2, $3, jsonb_build_object('n', g), now() - make_interval(secs => g), now(), $4, $5, false, false
     from generate_series(1, 1000) g`,
    [benchmarkId, siteId, flavorId, ...owner],
  );
});

test.after(async () => {
  for (const s of [a, b]) if (s && s.child.exitCode === null) s.child.kill('SIGTERM');
  await Promise.all([a?.exited, b?.exited]);
  await issuer?.close();
  await releaseTestDatabase();
});

test('a result uploaded through one process is counted at once in the remembered total of the other', async () => {
  assert.is(await totalAt(apiB), 1000);
  assert.is(await totalAt(apiB), 1000); // remembered by b
  const uploaded = await call(
    apiA,
    'POST',
    `/results?benchmark_id=${benchmarkId}&flavor_id=${flavorId}&execution_datetime=2024-01-01T00:00:00Z`,
    {
      n: -1,
    },
  ); // write 2 of 8
  assert.is(uploaded.status, 201, JSON.stringify(uploaded.body));
  // The notification takes a moment to reach b (more on a loaded machine): without it b would
  // answer 1000 for the hour of TOTALS_CACHE_SECONDS.
  const deadline = Date.now() + 60_000;
  let total = await totalAt(apiB);
  while (total !== 1001 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    total = await totalAt(apiB);
  }
  assert.is(total, 1001);
});

/**
 * Waits until the shared bucket holds the charges of `writes` writes (each process reports every
 * RATE_SYNC_MS), then one RATE_SYNC_MS more: a process's view of the bucket older than the report is
 * then stale, and it learns the bucket again before deciding. Seen, not slept on.
 */
async function reported(writes: number): Promise<void> {
  const tokens = async () =>
    (await sql<{ tokens: number }>("select tokens from rate_bucket where limiter = 'writes' and client like 'id:%writer'"))[0]?.tokens;
  // 8 per 10 minutes refills 0.013 a second: far less than a write while the test runs.
  const holds = (left: number | undefined) => left !== undefined && left < 8 - writes + 0.5;
  const deadline = Date.now() + 60_000;
  let left = await tokens();
  while (!holds(left) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
    left = await tokens();
  }
  assert.ok(holds(left), `the shared bucket holds ${writes} writes: ${left} tokens left`);
  await new Promise((r) => setTimeout(r, RATE_SYNC_MS));
}

test('a client has one write budget across both processes: 8 writes in all, then 429 from either', async () => {
  const tag = async (api: string, name: string) => (await call(api, 'POST', '/tags', { name, description: null })).status;
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push(await tag(apiA, `a-${i}`)); // writes 3–5
  await reported(5);
  for (let i = 0; i < 3; i++) statuses.push(await tag(apiB, `b-${i}`)); // writes 6–8
  await reported(8);
  statuses.push(await tag(apiA, 'a-over'), await tag(apiB, 'b-over'));
  assert.equal(statuses, [201, 201, 201, 201, 201, 201, 429, 429]);
});

test.run();
