/**
 * `benchmarks-server import-origin`: a database of the original service, created here from its
 * schema (test/support/origin-database.ts; docs/migrating.md maps its tables) and filled with the
 * awkward cases (test/support/origin-fixture.ts), imported into a real server's database: every row
 * with its id, the right statuses and hidden flags, shown by the API; a second run changes nothing;
 * an interrupted run resumes to the same end state; the real command in a child process.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { importOrigin, type ImportSummary, type ReportLine } from '../src/import-origin/import.ts';
import { resultVisibility, reviewStatus } from '../src/import-origin/mapping.ts';
import { ProgressView, progressLine } from '../src/import-origin/render.ts';
import { createMigratedTestDatabase, createTestDatabase as createDatabase, releaseTestDatabase } from './support/database.ts';
import { changedTables, fingerprint } from './support/hardening.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createOriginDatabase, generateCatalogue, generateResults, ORIGIN_ISSUER, withClient } from './support/origin-database.ts';
import { CLASHING_TAG_NAME, createOriginFixture, F, PLAIN_EXECUTION } from './support/origin-fixture.ts';
import { runServer } from './support/process.ts';

let t: TestServer;
let admin: string;
let source: string;
let first: ImportSummary;
const reported: ReportLine[] = [];
let dir: string;

/** Databases this file made on the test cluster: each is released once at the end (a cluster of its own then stops). */
let made = 0;
const counted = <T>(creating: Promise<T>): Promise<T> => {
  made++;
  return creating;
};
const createTestDatabase = (label: string) => counted(createDatabase(label));

/** The tables an import writes. */
const IMPORTED_TABLES = ['app_user', 'benchmark', 'site', 'flavor', 'tag', 'result', 'result_tag', 'claim'];

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'import-origin-'));
  source = await counted(createOriginFixture());
  t = await startTestServer({}, 'import_target');
  admin = await t.admin();
  // The target already has a tag of that name, under another id: the source's is refused.
  const clash = await t.request('POST', '/tags', { token: admin, body: { name: CLASHING_TAG_NAME } });
  assert.is(clash.status, 201, clash.text);
});
test.after(async () => {
  await t.close();
  for (; made > 0; made--) await releaseTestDatabase();
  await rm(dir, { recursive: true, force: true });
});

/** A fresh database of the test cluster with this service's schema. */
const migratedDatabase = (label: string) => counted(createMigratedTestDatabase(label));

async function query<Row extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<Row[]> {
  return withClient(url, async (c) => (await c.query<Row>(sql, params)).rows);
}

/** The fingerprint of the tables an import writes. */
async function importedFingerprint(url: string): Promise<Record<string, string>> {
  const all = await fingerprint(url);
  return Object.fromEntries(IMPORTED_TABLES.map((name) => [name, all[name]!]));
}

/** Fails unless `promise` rejects with a message matching `pattern`. */
async function rejects(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  try {
    await promise;
  } catch (err) {
    assert.match((err as Error).message, pattern);
    return;
  }
  assert.unreachable(`expected a rejection matching ${pattern}`);
}

function reasons(summary: ImportSummary, outcome: 'refused' | 'flagged') {
  return summary.reasons
    .filter((r) => r.outcome === outcome)
    .map((r) => `${r.kind} ${r.code} ${r.count}`)
    .sort();
}

test('importOrigin: the summary counts every kind and names each refusal and note with its reason', async () => {
  first = await importOrigin({ from: source, to: t.databaseUrl, batchSize: 4, onReport: (line) => reported.push(line) });
  assert.ok(first.complete);
  const counts = Object.fromEntries(Object.entries(first.kinds).map(([k, c]) => [k, [c.source, c.imported, c.skipped, c.refused]]));
  assert.equal(counts, {
    users: [4, 4, 0, 0],
    tags: [3, 2, 0, 1],
    benchmarks: [3, 3, 0, 0],
    sites: [3, 3, 0, 0],
    flavors: [3, 3, 0, 0],
    results: [9, 9, 0, 0],
    result_tags: [4, 3, 0, 1],
    claims: [4, 3, 0, 1],
  });
  assert.equal(reasons(first, 'refused'), ['claims CLAIM_UNLINKED 1', 'result_tags PARENT_REFUSED 1', 'tags NAME_TAKEN 1']);
  assert.equal(reasons(first, 'flagged'), [
    'benchmarks SCHEMA_NOT_ACCEPTED 1',
    'benchmarks STATUS_NULL 1',
    'claims STATUS_NULL 1',
    'flavors STATUS_NULL 1',
    'results CLAIMED_BUT_LISTED 1',
    'results NOT_VALIDATED 1',
    'results SCHEMA_VIOLATION 1',
    'results SITE_FROM_FLAVOR 1',
    'sites STATUS_NULL 1',
    'users NO_EMAIL 2',
  ]);
  const byCode = (code: string) => first.reasons.find((r) => r.code === code)!.examples;
  assert.equal(byCode('SCHEMA_VIOLATION')[0]!.id, F.results.violating);
  assert.match(byCode('SCHEMA_VIOLATION')[0]!.reason, /\/time must be integer/);
  assert.equal(byCode('NAME_TAKEN')[0]!.id, F.tags.clash);
  assert.match(byCode('NAME_TAKEN')[0]!.reason, /a tag named "clash" is already here with another id/);
  assert.equal(byCode('CLAIM_UNLINKED')[0]!.id, F.claims.replaced);
  assert.match(byCode('SCHEMA_NOT_ACCEPTED')[0]!.reason, /unsupported \$schema/);
  assert.equal(
    byCode('NO_EMAIL')
      .map((e) => e.id)
      .sort(),
    [`${ORIGIN_ISSUER} ${F.users.bob}`, `${ORIGIN_ISSUER} ${F.users.carol}`],
  );
  // Every refused or flagged row reaches the report, with the summary's code.
  assert.is(reported.length, 3 + 11);
  assert.ok(reported.some((l) => l.outcome === 'refused' && l.kind === 'result_tags' && l.id === `${F.results.draft4}/${F.tags.clash}`));
});

test('importOrigin: rows keep their ids; statuses, deleted and hidden follow the decisions; docker_* become container_*', async () => {
  const db = t.databaseUrl;
  const status = async (table: string) =>
    Object.fromEntries((await query<{ id: string; status: string }>(db, `select id, status from ${table}`)).map((r) => [r.id, r.status]));
  const benchmarks = await status('benchmark');
  assert.equal(
    [benchmarks[F.benchmarks.time], benchmarks[F.benchmarks.nullStatus], benchmarks[F.benchmarks.draft4]],
    ['approved', 'on_review', 'approved'],
  );
  const sites = await status('site');
  assert.equal([sites[F.sites.cesga], sites[F.sites.nullStatus], sites[F.sites.onReview]], ['approved', 'on_review', 'on_review']);
  const flavors = await status('flavor');
  assert.equal([flavors[F.flavors.small], flavors[F.flavors.nullStatus], flavors[F.flavors.m1]], ['approved', 'on_review', 'approved']);
  const tags = await status('tag');
  assert.equal([tags[F.tags.cpu], tags[F.tags.gpu], tags[F.tags.clash]], ['approved', 'approved', undefined]);

  const [bench] = await query(db, 'select container_image, container_tag, url, json_schema from benchmark where id = $1', [
    F.benchmarks.time,
  ]);
  assert.equal(bench, {
    container_image: 'origin/time',
    container_tag: 'v1.0',
    url: 'https://hub.docker.com/r/origin/time',
    json_schema: { properties: { time: { type: 'integer' } } },
  });

  const results = await query<{ id: string; deleted: boolean; hidden: boolean; site_id: string }>(
    db,
    'select id, deleted, hidden, site_id from result',
  );
  const state = Object.fromEntries(results.map((r) => [r.id, `${r.deleted ? 'deleted' : '-'} ${r.hidden ? 'hidden' : 'visible'}`]));
  const R = F.results;
  assert.equal(state, {
    [R.plain]: '- visible',
    [R.violating]: '- visible',
    [R.deleted]: 'deleted hidden',
    [R.claimedDeleted]: '- hidden',
    [R.approvedClaim]: '- hidden',
    [R.claimedListed]: '- hidden',
    [R.draft4]: '- visible',
    [R.nullBenchmark]: '- visible',
    [R.wrongSite]: '- visible',
  });
  assert.is(results.find((r) => r.id === R.wrongSite)!.site_id, F.sites.cesga, "the flavor's site");
  // The service's own rule of hiding (services/catalogue/claims.ts, refreshHidden) holds for every row.
  const [broken] = await query<{ n: number }>(
    db,
    'select count(*)::int as n from result where hidden <> (deleted or exists (select 1 from claim c where c.resource_id = result.id))',
  );
  assert.is(broken!.n, 0);

  const claims = await query<{ id: string; resource_id: string; status: string; uploader_sub: string }>(
    db,
    'select id, resource_id, status, uploader_sub from claim',
  );
  assert.ok(claims.every((c) => c.uploader_sub === F.users.dave));
  assert.equal(
    claims.map((c) => `${c.id} ${c.resource_id} ${c.status}`).sort(),
    [
      `${F.claims.open} ${R.claimedDeleted} on_review`,
      `${F.claims.approved} ${R.approvedClaim} approved`,
      `${F.claims.nullStatus} ${R.claimedListed} on_review`,
    ].sort(),
  );
  const links = await query<{ result_id: string; tag_id: string }>(db, 'select result_id, tag_id from result_tag');
  assert.equal(
    links.map((l) => `${l.result_id} ${l.tag_id}`).sort(),
    [`${R.plain} ${F.tags.cpu}`, `${R.plain} ${F.tags.gpu}`, `${R.claimedDeleted} ${F.tags.cpu}`].sort(),
  );
  const users = await query<{ sub: string; email: string | null; terms_version: string }>(
    db,
    'select sub, email, terms_version from app_user where iss = $1 order by sub',
    [ORIGIN_ISSUER],
  );
  assert.equal(
    users.map((u) => [u.sub, u.email, u.terms_version]),
    [
      [F.users.alice, 'alice@example.org', 'origin'],
      [F.users.bob, null, 'origin'],
      [F.users.carol, null, 'origin'],
      [F.users.dave, 'dave@example.org', 'origin'],
    ],
  );
  // Naive timestamps read as UTC (the default), microseconds kept.
  const [plain] = await query<{ at: string }>(
    db,
    `select to_char(execution_datetime at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as at from result where id = $1`,
    [R.plain],
  );
  assert.is(plain!.at, PLAIN_EXECUTION);
});

test("importOrigin: the imported results' metric values are in their table, written as they were inserted", async () => {
  const db = t.databaseUrl;
  // The benchmarks' paths were chosen before their results came: complete, no pass needed.
  const benchmarks = await query<{ id: string; complete: boolean; paths: string[] }>(
    db,
    "select m.benchmark_id as id, m.complete, array(select array_to_string(p.path, '.') from metric_path p where p.benchmark_id = m.benchmark_id) as paths from metric_benchmark m",
  );
  const time = benchmarks.find((b) => b.id === F.benchmarks.time);
  assert.equal(time, { id: F.benchmarks.time, complete: true, paths: ['time'] });
  const [pass] = await query<{ benchmarks: string[] }>(db, 'select benchmarks::text[] as benchmarks from metric_backfill');
  assert.equal(pass!.benchmarks, []);
  const rows = await query<{ result_id: string; value: string | null; hidden: boolean; document: string | null; result_hidden: boolean }>(
    db,
    `select r.id as result_id, v.value::text as value, v.hidden, case when jsonb_typeof(r.json #> p.path) = 'number' then (r.json #> p.path)::numeric::text end as document, r.hidden as result_hidden
     from result r join metric_path p on p.benchmark_id = r.benchmark_id
     left join metric_value v on v.result_id = r.id and v.path_id = p.id
     where r.benchmark_id = $1 order by r.id`,
    [F.benchmarks.time],
  );
  assert.ok(rows.length > 0);
  for (const row of rows) {
    assert.is(row.value, row.document, row.result_id);
    assert.is(row.hidden, row.result_hidden, row.result_id);
  }
  assert.ok(rows.some((r) => r.value !== null && !r.hidden));
  assert.is(rows.find((r) => r.result_id === F.results.violating)?.value, null, 'a string where the schema says integer: no number');
});

test('importOrigin: the API serves the imported rows as the original did (ids, aliases, hidden results, review queue)', async () => {
  const R = F.results;
  const bench = await t.request('GET', `/benchmarks/${F.benchmarks.time}`);
  assert.is(bench.status, 200);
  assert.equal([bench.body.docker_image, bench.body.container_image, bench.body.status], ['origin/time', 'origin/time', 'approved']);

  const list = await t.request('GET', '/results', { query: { per_page: 100 } });
  assert.is(list.status, 200);
  assert.equal(
    list.body.items.map((r: { id: string }) => r.id).sort(),
    [R.plain, R.violating, R.draft4, R.nullBenchmark, R.wrongSite].sort(),
  );
  const plain = list.body.items.find((r: { id: string }) => r.id === R.plain);
  assert.equal(
    plain.tags.map((tag: { name: string }) => tag.name),
    ['cpu', 'gpu'],
  );
  assert.is(plain.execution_datetime, '2021-10-13T15:35:04.713');
  assert.equal([plain.site.id, plain.flavor.id], [F.sites.cesga, F.flavors.small]);
  const deleted = await t.request('GET', `/results/${R.deleted}`);
  assert.equal([deleted.status, deleted.body.hidden], [200, true]);

  const submits = await t.request('GET', '/reports/submits', { token: admin, query: { per_page: 100 } });
  assert.is(submits.status, 200, submits.text);
  assert.equal(
    submits.body.items.map((s: { resource_id: string }) => s.resource_id).sort(),
    [F.benchmarks.nullStatus, F.sites.nullStatus, F.sites.onReview, F.flavors.nullStatus].sort(),
  );
  const uploader = await t.request('GET', `/results/${R.draft4}/uploader`, { token: admin });
  assert.equal([uploader.status, uploader.body.sub, uploader.body.email], [200, F.users.carol, null]);

  // A claim on a result the original marked deleted: rejecting it brings the result back.
  const reject = await t.request('POST', `/reports/claims/${F.claims.open}:reject`, { token: admin });
  assert.is(reject.status, 204, reject.text);
  const after = await t.request('GET', '/results', { query: { per_page: 100 } });
  assert.ok(after.body.items.some((r: { id: string }) => r.id === R.claimedDeleted));
  // An upload to the draft-04 benchmark is refused until its schema is replaced.
  const user = await t.user('uploader');
  const upload = await t.request('POST', '/results', {
    token: user,
    query: { benchmark_id: F.benchmarks.draft4, flavor_id: F.flavors.small, execution_datetime: '2024-01-01T00:00:00Z' },
    body: { time: 1 },
  });
  assert.equal([upload.status, upload.body.code], [422, 'INVALID_BENCHMARK_SCHEMA']);
});

test('importOrigin: a second run changes nothing, not even a claim rejected here since, and refuses what it refused', async () => {
  const before = await fingerprint(t.databaseUrl);
  const again = await importOrigin({ from: source, to: t.databaseUrl, batchSize: 4 });
  assert.equal(changedTables(before, await fingerprint(t.databaseUrl)), []);
  assert.ok(again.complete);
  assert.equal(Object.fromEntries(Object.entries(again.kinds).map(([k, c]) => [k, [c.imported, c.skipped, c.refused, c.flagged]])), {
    users: [0, 4, 0, 0],
    tags: [0, 2, 1, 0],
    benchmarks: [0, 3, 0, 0],
    sites: [0, 3, 0, 0],
    flavors: [0, 3, 0, 0],
    results: [0, 9, 0, 0],
    result_tags: [0, 3, 1, 0],
    claims: [0, 3, 1, 0],
  });
  const [claim] = await query<{ n: number }>(t.databaseUrl, 'select count(*)::int as n from claim where id = $1', [F.claims.open]);
  assert.is(claim!.n, 0, 'the claim rejected here stays rejected');
});

test('importOrigin: an interrupted run (stopped, then crashed inside a batch) resumes to the end state of one uninterrupted run', async () => {
  const [once, resumed] = await Promise.all([migratedDatabase('import_once'), migratedDatabase('import_resumed')]);
  await importOrigin({ from: source, to: once, batchSize: 2 });

  // Stopped between batches: the first batch of results is committed, the run says it is not complete.
  const stop = new AbortController();
  const stopped = await importOrigin({
    from: source,
    to: resumed,
    batchSize: 2,
    signal: stop.signal,
    onBatch: ({ kind }) => {
      if (kind === 'results') stop.abort();
    },
  });
  assert.is(stopped.complete, false);
  assert.is(stopped.kinds.results.imported, 2);
  // Crashed inside the third batch of results: that batch is rolled back, the second is kept.
  const crash = importOrigin({
    from: source,
    to: resumed,
    batchSize: 2,
    onBatch: ({ kind, batch }) => {
      if (kind === 'results' && batch === 3) throw new Error('killed');
    },
  });
  await rejects(crash, /killed/);
  const [partial] = await query<{ n: number }>(resumed, 'select count(*)::int as n from result');
  assert.is(partial!.n, 4);

  const finished = await importOrigin({ from: source, to: resumed, batchSize: 2 });
  assert.ok(finished.complete);
  assert.equal([finished.kinds.results.imported, finished.kinds.results.skipped], [5, 4]);
  assert.equal(await importedFingerprint(resumed), await importedFingerprint(once));
});

test('importOrigin: --source-timezone reads naive timestamps in that zone (summer and winter offsets)', async () => {
  const target = await migratedDatabase('import_madrid');
  const summary = await importOrigin({ from: source, to: target, sourceTimezone: 'Europe/Madrid' });
  assert.is(summary.sourceTimezone, 'Europe/Madrid');
  const rows = await query<{ id: string; execution: string; upload: string }>(
    target,
    `select id, to_char(execution_datetime at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as execution,
       to_char(upload_datetime at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS.US') as upload from result where id = any($1::uuid[])`,
    [[F.results.plain, F.results.violating]],
  );
  const at = Object.fromEntries(rows.map((r) => [r.id, r]));
  assert.is(at[F.results.plain]!.execution, '2021-10-13 13:35:04.713245', 'CEST is UTC+2');
  assert.is(at[F.results.violating]!.upload, '2022-01-20 08:00:00.500000', 'CET is UTC+1');
});

test('importOrigin: refuses a source without the original schema, an unknown time zone, and a second import at once', async () => {
  const target = await migratedDatabase('import_refusals');
  await rejects(importOrigin({ from: target, to: target }), /does not hold the original service's schema: no table "user"/);
  await rejects(importOrigin({ from: source, to: target, sourceTimezone: 'Mars/Olympus' }), /not a time zone/);
  const unmigrated = await createTestDatabase('import_unmigrated');
  await rejects(importOrigin({ from: source, to: unmigrated }), /is not migrated: run benchmarks-server migrate first/);
  // Two imports into one database take turns: the second one is refused while the first runs.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const running = importOrigin({
    from: source,
    to: target,
    onBatch: async () => {
      entered();
      await held;
    },
  });
  await inside;
  await rejects(importOrigin({ from: source, to: target }), /Another import-origin is writing to/);
  release();
  assert.ok((await running).complete);
});

test('benchmarks-server import-origin: migrates the target, prints progress lines and the summary, writes the report, exits 1 on refusals', async () => {
  const target = await createTestDatabase('import_command');
  const report = join(dir, 'report.ndjson');
  const run = runServer(['import-origin', '--from', source, '--json', '--report', report, '--batch-size', '3'], {
    DATABASE_URL: target,
    LOG_LEVEL: 'warn',
  });
  assert.is(await run.exited, 1, run.stderr());
  const summary = JSON.parse(run.stdout()) as ImportSummary;
  assert.equal([summary.complete, summary.kinds.results.imported, summary.kinds.claims.refused], [true, 9, 1]);
  assert.ok(!summary.source.includes(new URL(source).password), 'the password is not printed');
  assert.match(run.stderr(), /import-origin: results done: 9\/9, [\d,]+\/s, 0 refused, 4 flagged/);
  assert.match(run.stderr(), /benchmarks-server: 1 row\(s\) refused, every other row imported/);
  const lines = (await readFile(report, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ReportLine);
  assert.ok(lines.some((l) => l.outcome === 'refused' && l.code === 'CLAIM_UNLINKED' && l.id === F.claims.replaced));
  assert.ok(lines.some((l) => l.outcome === 'flagged' && l.code === 'SCHEMA_VIOLATION' && l.id === F.results.violating));

  const again = runServer(['import-origin', '--from', source], { DATABASE_URL: target, LOG_LEVEL: 'warn' });
  assert.is(await again.exited, 1);
  // The lines of the summary docs/migrating.md shows.
  assert.match(again.stdout(), /^Import from postgresql:\/\/[^:]+:\*\*\*@\S+ \(timestamps read as UTC\): complete in [\d.]+ s\n\n/);
  assert.match(again.stdout(), /^kind {10}in source {3}imported {4}skipped {4}refused {4}flagged$/m);
  assert.match(again.stdout(), /^results\s+9\s+0\s+9\s+0\s+0$/m);
  assert.match(again.stdout(), /^Refused \(not imported\):$/m);
  assert.match(again.stdout(), new RegExp(`^ {2}claims CLAIM_UNLINKED: 1\n {4}${F.claims.replaced}: no result links to it`, 'm'));
});

test('benchmarks-server import-origin: exit 0 when every row is imported or already here; --batch-size is checked', async () => {
  const clean = await counted(createOriginDatabase('origin_clean'));
  await withClient(clean, async (c) => generateResults(c, await generateCatalogue(c), 25));
  const target = await createTestDatabase('import_clean');
  const run = runServer(['import-origin', '--from', clean, '--batch-size', '10'], { DATABASE_URL: target, LOG_LEVEL: 'warn' });
  assert.is(await run.exited, 0, run.stderr());
  assert.match(run.stdout(), /^results\s+25\s+25\s+0\s+0\s+0$/m);
  const bad = runServer(['import-origin', '--from', clean, '--batch-size', '0'], { DATABASE_URL: target });
  assert.is(await bad.exited, 1);
  assert.match(bad.plainErrorLines().join('\n'), /--batch-size must be an integer from 1 to 10000, not '0'/);
});

test('progress: a bar redrawn in place on a terminal, with results per second; plain lines otherwise', () => {
  let now = 0;
  const tty = { isTTY: true, columns: 120, out: '', write: (s: string) => (tty.out += s) };
  const view = new ProgressView(tty, () => now);
  view.onProgress({ kind: 'users', done: 4, total: 4, refused: 0, flagged: 2, finished: true });
  now = 2000;
  view.onProgress({ kind: 'results', done: 500, total: 1000, refused: 1, flagged: 0, finished: false });
  now = 2050; // within 100 ms: not redrawn
  view.onProgress({ kind: 'results', done: 600, total: 1000, refused: 1, flagged: 0, finished: false });
  view.end();
  const frames = tty.out.split('\r').filter(Boolean);
  assert.is(frames.length, 2);
  assert.is(frames[0], 'users 4\x1b[K');
  assert.is(frames[1], `users 4 | results [${'#'.repeat(12)}${'-'.repeat(12)}] 50% 500/1,000 250/s 1 refused\x1b[K\n`);

  // On a narrow terminal the kinds done make way for the current one.
  const event = { kind: 'results' as const, done: 500, total: 1000, refused: 0, flagged: 0, finished: false };
  const narrow = progressLine(['users 4', 'tags 3', 'benchmarks 1', 'sites 2', 'flavors 4'], event, 250, 60);
  assert.is(narrow, `results [${'#'.repeat(12)}${'-'.repeat(12)}] 50% 500/1,000 250/s`);
  assert.is(progressLine([], event, 250, 20), 'results [##########…');

  let clock = 0;
  const plain = { isTTY: false, out: '', write: (s: string) => (plain.out += s) };
  const lines = new ProgressView(plain, () => clock);
  clock = 1000; // within 5 s of the start: no line yet
  lines.onProgress({ kind: 'results', done: 10, total: 20, refused: 0, flagged: 0, finished: false });
  clock = 2000;
  lines.onProgress({ kind: 'results', done: 20, total: 20, refused: 0, flagged: 1, finished: true });
  assert.is(plain.out, 'import-origin: results done: 20/20, 10/s, 0 refused, 1 flagged\n');
});

test('mapping: null statuses go on review; a claimed result is hidden by its claim, not deleted', () => {
  assert.equal(reviewStatus(null), { status: 'on_review', nullStatus: true });
  assert.equal(reviewStatus('on_review'), { status: 'on_review', nullStatus: false });
  assert.equal(reviewStatus('approved'), { status: 'approved', nullStatus: false });
  assert.equal(resultVisibility(true, false), { deleted: true, hidden: true, claimedButListed: false });
  assert.equal(resultVisibility(true, true), { deleted: false, hidden: true, claimedButListed: false });
  assert.equal(resultVisibility(false, true), { deleted: false, hidden: true, claimedButListed: true });
  assert.equal(resultVisibility(false, false), { deleted: false, hidden: false, claimedButListed: false });
});

test.run();
