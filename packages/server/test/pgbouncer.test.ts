/**
 * The server behind PgBouncer in transaction mode (Debian's pgbouncer), set up as docs/deploy.md
 * ("PgBouncer") says: DATABASE_URL names PgBouncer, PREPARED_STATEMENTS=false, and
 * DATABASE_DIRECT_URL the database itself for what needs a session of its own (the migration
 * lock, metric index builds, change notifications). Reads, uploads, idempotent retries, compare
 * and export go through PgBouncer and answer as they do without it. Two server processes share
 * the PgBouncer, as replicas of a deployment do. Without pgbouncer installed the test fails.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { buildConfig } from '../src/config.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { exportResults, type ExportParams } from '../src/services/export/export.ts';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { ADMIN_ENTITLEMENT, startTestServer, type TestServer } from './support/harness.ts';
import { startPgBouncer, type PgBouncer } from './support/pgbouncer.ts';
import { createSeeder, type Seeder } from './support/seed.ts';

let direct: string | undefined;
let bouncer: PgBouncer | undefined;
let a: TestServer;
/** A second process of the deployment, through the same PgBouncer, remembering totals for an hour. */
let b: RunningServer;
let seed: Seeder;
let token: string;
let benchmarkId: string;
let bulkId: string;
let bulkIds: string[];
const flavors: { id: string; site_id: string }[] = [];

const SCHEMA = {
  type: 'object',
  properties: { result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true } } } },
};
/**
 * Six export batches (EXPORT_BATCH_ROWS, 500): more than a stalled reader's stream reads ahead (a
 * batch buffered, the next fetched), and enough for a remembered total (1,000 at least).
 */
const BULK = 3000;
const at = '2024-05-01T12:00:00Z';

async function setUp(): Promise<void> {
  direct = await createMigratedTestDatabase('pgbouncer_direct');
  bouncer = await startPgBouncer(direct);
  const common = { databaseUrl: bouncer.url, databaseDirectUrl: direct, preparedStatements: 'false' };
  a = await startTestServer(common, 'pgbouncer');
  seed = await createSeeder(a);
  benchmarkId = (await seed.benchmark({ schema: SCHEMA, image: 'ghcr.io/test/pgbouncer' })).id;
  bulkId = (await seed.benchmark()).id;
  const site = await seed.site();
  for (let i = 0; i < 2; i++) {
    const f = await seed.flavor(site.id, { name: `pgb-flavor-${i}` });
    flavors.push({ id: f.id, site_id: f.site_id });
  }
  token = await a.user('pgbouncer-uploader');
  bulkIds = await seed.results(
    Array.from({ length: BULK }, (_, i) => ({
      benchmark_id: bulkId,
      flavor_id: flavors[0]!.id,
      site_id: flavors[0]!.site_id,
      json: { i },
      execution_datetime: new Date(Date.UTC(2023, 0, 1, 0, 0, i)),
    })),
  );
  // Started once the benchmark with a suggested metric exists.
  b = await startServer(
    buildConfig({
      host: '127.0.0.1',
      port: '0',
      ...common,
      oidcIssuer: a.issuer.issuer,
      adminEntitlement: ADMIN_ENTITLEMENT,
      logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
      rateLimit: '0',
      readRateLimit: '0',
      totalsCacheSeconds: '3600',
    }),
  );
}

/**
 * Why the set-up failed (pgbouncer not installed, say): every test then fails with it, as uvu
 * reports nothing of an error thrown by a `before` hook.
 */
let setUpFailure: unknown;
test.before(async () => {
  try {
    await setUp();
  } catch (err) {
    setUpFailure = err;
  }
});
test.before.each(() => {
  if (setUpFailure) throw setUpFailure;
});

test.after(async () => {
  await b?.close();
  await a?.close();
  await bouncer?.close();
  if (direct) await releaseTestDatabase();
});

/** Runs a statement on the database itself (not through PgBouncer), as its owner. */
async function directly<T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: direct });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Transactions PgBouncer has passed to the database so far. */
async function transactionsThroughBouncer(): Promise<number> {
  const row = (await bouncer!.admin('SHOW STATS')).find((r) => r.database === bouncer!.database);
  return Number(row?.total_xact_count ?? 0);
}

const upload = (flavor: number, score: number, key?: string) =>
  a.request('POST', '/results', {
    token,
    query: { benchmark_id: benchmarkId, flavor_id: flavors[flavor]!.id, execution_datetime: at },
    body: { result: { score } },
    headers: key ? { 'Idempotency-Key': key } : {},
  });

const batch = (items: { flavor: number; score: number }[], key?: string) =>
  a.request('POST', '/results:batch', {
    token,
    body: {
      items: items.map(({ flavor, score }) => ({
        benchmark_id: benchmarkId,
        flavor_id: flavors[flavor]!.id,
        execution_datetime: at,
        json: { result: { score } },
      })),
    },
    headers: key ? { 'Idempotency-Key': key } : {},
  });

const storedScores = async () =>
  (
    await directly<{ score: number }>("select (json->'result'->>'score')::float8 as score from result where benchmark_id = $1 order by 1", [
      benchmarkId,
    ])
  ).map((r) => r.score);

test('DATABASE_DIRECT_URL: after both starts the metric values are complete and no advisory lock is left (migrations, the values pass)', async () => {
  await b.context.metrics.values.idle();
  await a.server.context.metrics.values.idle();
  const complete = await directly<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = $1', [benchmarkId]);
  assert.equal(complete, [{ complete: true }]);
  const locks = await directly<{ n: number }>(
    "select count(*)::int as n from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())",
  );
  assert.is(locks[0]!.n, 0);
});

test('PgBouncer runs in transaction mode, and the servers’ statements reach the database through it', async () => {
  const config = await bouncer!.admin('SHOW CONFIG');
  assert.is(config.find((r) => r.key === 'pool_mode')?.value, 'transaction');
  // The pool's statement timeout, which PgBouncer does not take at connect, is PgBouncer's connect_query.
  const [timeout] = await a.server.context.orm.em.fork().execute<{ t: string }[]>("select current_setting('statement_timeout') as t");
  assert.is(timeout!.t, '15s');
  const before = await transactionsThroughBouncer();
  assert.is((await fetch(`${a.api}/ready`)).status, 200);
  assert.is((await fetch(`${b.url}/api/v1/ready`)).status, 200);
  const list = await a.request('GET', '/results', { query: { benchmark_id: bulkId, per_page: 1 } });
  assert.is(list.status, 200, list.text);
  assert.is(list.body.total, BULK);
  await until('PgBouncer to count the transactions', 60_000, async () =>
    (await transactionsThroughBouncer()) > before ? true : undefined,
  );
});

test('POST /results and POST /results:batch through PgBouncer store what they answer; GET /results/{id} reads it back', async () => {
  for (const [flavor, score] of [
    [0, 1],
    [0, 2],
    [0, 3],
  ] as const) {
    const created = await upload(flavor, score);
    assert.is(created.status, 201, created.text);
    const read = await a.request('GET', `/results/${created.body.id}`);
    assert.is(read.status, 200, read.text);
    assert.equal(read.body.json, { result: { score } });
    assert.is(read.body.benchmark.id, benchmarkId);
    assert.is(read.body.flavor.id, flavors[flavor]!.id);
  }
  const many = await batch([
    { flavor: 1, score: 10 },
    { flavor: 1, score: 20 },
    { flavor: 1, score: 30 },
    { flavor: 1, score: 40 },
  ]);
  assert.is(many.status, 201, many.text);
  assert.is(many.body.ids.length, 4);
  for (const [i, id] of (many.body.ids as string[]).entries()) {
    const read = await a.request('GET', `/results/${id}`);
    assert.equal(read.body.json, { result: { score: (i + 1) * 10 } });
  }
  assert.equal(await storedScores(), [1, 2, 3, 10, 20, 30, 40]);
});

test('Idempotency-Key through PgBouncer: the same request twice gives the same answer and stores one row', async () => {
  const key = randomUUID();
  const first = await upload(0, 4, key);
  assert.is(first.status, 201, first.text);
  const again = await upload(0, 4, key);
  assert.is(again.status, 201, again.text);
  assert.is(again.headers.get('idempotent-replayed'), 'true');
  assert.is(again.text, first.text);
  const batchKey = randomUUID();
  const items = [{ flavor: 1, score: 50 }];
  const firstBatch = await batch(items, batchKey);
  assert.is(firstBatch.status, 201, firstBatch.text);
  const batchAgain = await batch(items, batchKey);
  assert.is(batchAgain.status, 201, batchAgain.text);
  assert.equal(batchAgain.body, firstBatch.body);
  assert.is(batchAgain.headers.get('idempotent-replayed'), 'true');
  assert.equal(await storedScores(), [1, 2, 3, 4, 10, 20, 30, 40, 50]);
  const keys = await directly<{ n: number }>('select count(*)::int as n from idempotency_key where key = any($1::text[])', [
    [key, batchKey],
  ]);
  assert.is(keys[0]!.n, 2);
});

test('GET /results through PgBouncer: filters, sort by a JSON path, paging and totals', async () => {
  const list = await a.request('GET', '/results', {
    query: { benchmark_id: benchmarkId, filters: 'result.score > 3', sort_by: '-json.result.score', per_page: 3 },
  });
  assert.is(list.status, 200, list.text);
  assert.is(list.body.total, 6);
  assert.equal(
    list.body.items.map((r: { json: { result: { score: number } } }) => r.json.result.score),
    [50, 40, 30],
  );
  const second = await a.request('GET', '/results', {
    query: { benchmark_id: benchmarkId, filters: 'result.score > 3', sort_by: '-json.result.score', per_page: 3, page: 2 },
  });
  assert.equal(
    second.body.items.map((r: { json: { result: { score: number } } }) => r.json.result.score),
    [20, 10, 4],
  );
  const byFlavor = await a.request('GET', '/results', {
    query: { flavor_id: flavors[0]!.id, benchmark_id: benchmarkId, sort_by: '+json.result.score' },
  });
  assert.equal(
    byFlavor.body.items.map((r: { json: { result: { score: number } } }) => r.json.result.score),
    [1, 2, 3, 4],
  );
});

test('GET /results:compare through PgBouncer: each flavor’s statistics are those of its scores', async () => {
  const res = await a.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.result.score' } });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.matched, 9);
  const group = (i: number) => res.body.groups.find((g: { flavor: { id: string } }) => g.flavor.id === flavors[i]!.id);
  const summary = (g: { n: number; mean: number; median: number; min: number; max: number }) => [g.n, g.mean, g.median, g.min, g.max];
  assert.equal(summary(group(0)), [4, 2.5, 2.5, 1, 4]);
  assert.equal(summary(group(1)), [5, 30, 30, 10, 50]);
  assert.equal(
    res.body.groups.map((g: { flavor: { id: string } }) => g.flavor.id),
    [flavors[1]!.id, flavors[0]!.id],
    'higher is better',
  );
});

test('GET /results:export through PgBouncer: every result as NDJSON, in order, over several cursor batches; CSV complete', async () => {
  const ndjson = await fetch(`${a.api}/results:export?benchmark_id=${bulkId}`);
  assert.is(ndjson.status, 200);
  const lines = (await ndjson.text())
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { id: string; json: { i: number } });
  assert.is(lines.length, BULK);
  assert.equal(
    lines.map((l) => l.json.i),
    Array.from({ length: BULK }, (_, i) => i),
  );
  assert.equal(new Set(lines.map((l) => l.id)), new Set(bulkIds));
  const csv = await fetch(`${a.api}/results:export?benchmark_id=${benchmarkId}&format=csv`);
  assert.is(csv.status, 200);
  const rows = (await csv.text()).split('\r\n');
  assert.is(rows[0], 'id,execution_datetime,benchmark_name,site_name,flavor_name,tags,json.result.score');
  assert.is(rows.at(-1), '', 'ends with CRLF');
  const scores = rows
    .slice(1, -1)
    .map((row) => Number(row.split(',').at(-1)))
    .sort((x, y) => x - y);
  assert.equal(scores, await storedScores());
});

test('export: a reader stalled past the idle timeout ends the cursor’s transaction (the timeout is set in the transaction, which PgBouncer lets through)', async () => {
  const exporting = () =>
    directly<{ n: number }>(
      "select count(*)::int as n from pg_stat_activity where datname = current_database() and state <> 'idle' and query like 'fetch % from export_rows'",
    );
  const stream = await exportResults(
    a.server.context.orm.em.fork(),
    { embeds: a.server.context.catalogue.embeds, statementTimeoutMs: 15_000, idleTimeoutMs: 500 },
    { benchmark_id: bulkId } as ExportParams,
    'ndjson',
  );
  const chunks = stream[Symbol.asyncIterator]();
  assert.not.ok((await chunks.next()).done);
  // Without the timeout the transaction would wait for its reader for 60 s: 40 s leaves a loaded
  // machine time for the 500 ms timeout and still tells the two apart.
  await until('the stalled export to end', 40_000, async () => ((await exporting())[0]!.n === 0 ? true : undefined));
  let failed: unknown;
  try {
    while (!(await chunks.next()).done);
  } catch (err) {
    failed = err;
  }
  assert.ok(failed, 'the rest of a stalled export is not read');
});

test('change notifications (DATABASE_DIRECT_URL): a result uploaded through one process is counted at once in the other’s remembered total', async () => {
  const totalAtB = async () => {
    const res = await fetch(`${b.url}/api/v1/results?benchmark_id=${bulkId}&per_page=1`);
    assert.is(res.status, 200);
    return ((await res.json()) as { total: number }).total;
  };
  assert.is(await totalAtB(), BULK);
  assert.is(await totalAtB(), BULK); // remembered now, for an hour without notifications
  const created = await a.request('POST', '/results', {
    token,
    query: { benchmark_id: bulkId, flavor_id: flavors[0]!.id, execution_datetime: at },
    body: { i: -1 },
  });
  assert.is(created.status, 201, created.text);
  await until('the other process to count the upload', 60_000, async () => ((await totalAtB()) === BULK + 1 ? true : undefined));
});

test('without ignore_startup_parameters = statement_timeout the server does not start, and says why at once', async () => {
  const strict = await startPgBouncer(direct!, { ignoreStartupParameters: '' });
  try {
    const config = buildConfig({ host: '127.0.0.1', port: '0', databaseUrl: strict.url, preparedStatements: 'false', logLevel: 'silent' });
    let message = '';
    await startServer(config).then(
      (server) => server.close(),
      (err: Error) => {
        message = err.message;
      },
    );
    assert.match(message, /^Cannot reach the database at postgresql:\/\/.*: unsupported startup parameter: statement_timeout$/);
    assert.not.match(message, /within/, 'not retried until DATABASE_CONNECT_TIMEOUT');
  } finally {
    await strict.close();
  }
});

test('DATABASE_DIRECT_URL needs DATABASE_URL, and must be a PostgreSQL URL', () => {
  assert.throws(() => buildConfig({ databaseDirectUrl: 'postgresql://db/benchmarks' }), /DATABASE_DIRECT_URL .*set DATABASE_URL too/);
  assert.throws(
    () => buildConfig({ databaseUrl: 'postgresql://pgbouncer:6432/benchmarks', databaseDirectUrl: 'http://db/benchmarks' }),
    /DATABASE_DIRECT_URL must use postgres: or postgresql:/,
  );
  const config = buildConfig({
    databaseUrl: 'postgresql://pgbouncer:6432/benchmarks',
    databaseDirectUrl: 'postgresql://db:5432/benchmarks',
  });
  assert.is(config.databaseDirectUrl, 'postgresql://db:5432/benchmarks');
  assert.is(buildConfig({ databaseUrl: 'postgresql://db/benchmarks' }).databaseDirectUrl, undefined);
});

test.run();
