/**
 * The metric indexes stay bounded (services/results/metric-indexes.ts, docs/security.md "Metric indexes"):
 * dropped with their benchmark or with a metric its schema no longer suggests, at most
 * MAX_METRIC_INDEXES of them (a deterministic choice), leftovers cleaned at start, and the index
 * still used where one exists. Several processes on one database (two MetricIndexes, each with its
 * own maintenance connection, as two processes have) build each index once, leave alone what another
 * session holds or builds, and mend what a crashed build left. What exists is read from pg_indexes.
 * Real servers, real PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig, DEFAULTS } from '../src/config.ts';
import { program } from '../src/program.ts';
import pg from 'pg';
import { createLogger } from '../src/core/logger.ts';
import { lockKeyOf } from '../src/db/advisory-lock.ts';
import { startServer } from '../src/server.ts';
import {
  chooseMetrics,
  MAX_METRICS_PER_BENCHMARK,
  MetricIndexes,
  metricIndexName,
  suggestedMetrics,
} from '../src/services/results/metric-indexes.ts';
import { resultListSql, type ResultListQuery } from '../src/services/results/result-query.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { within } from './support/process.ts';

/** A schema suggesting these numeric metrics (top-level properties), in this order. */
const schemaOf = (...metrics: string[]) => ({
  type: 'object',
  properties: Object.fromEntries(metrics.map((m) => [m, { type: 'number', suggestToUser: true }])),
});

/** The two index names of each (benchmark, metric), sorted. */
const namesOf = (...pairs: [string, string][]) =>
  pairs.flatMap(([b, m]) => [metricIndexName(b, [m]), `${metricIndexName(b, [m])}_x`]).sort();

async function metricIndexes(seed: Seeder): Promise<string[]> {
  const rows = await seed.sql<{ indexname: string }>(
    "select indexname from pg_indexes where schemaname = current_schema() and tablename = 'result' and indexname like 'result_metric\\_%' order by indexname",
  );
  return rows.map((r) => r.indexname);
}

test('at most 4 suggested metrics of a benchmark are indexed (8 indexes)', () => {
  assert.is(MAX_METRICS_PER_BENCHMARK, 4);
  assert.equal(suggestedMetrics(schemaOf('a', 'b', 'c', 'd', 'e', 'f')), [['a'], ['b'], ['c'], ['d']]);
});

test('the choice over the cap: every benchmark first metric (oldest benchmark first), then every second, …', () => {
  const benchmarks = [
    { id: 'b1', metrics: [['x'], ['y'], ['z']] },
    { id: 'b2', metrics: [['p']] },
    { id: 'b3', metrics: [['q'], ['r']] },
  ];
  const chosen = (cap: number) => chooseMetrics(benchmarks, cap).map((m) => `${m.benchmark}:${m.path.join('.')}`);
  assert.equal(chosen(200), ['b1:x', 'b2:p', 'b3:q', 'b1:y', 'b3:r', 'b1:z']);
  assert.equal(chosen(7), ['b1:x', 'b2:p', 'b3:q']); // two indexes per metric: 7 allows 3
  assert.equal(chosen(8), ['b1:x', 'b2:p', 'b3:q', 'b1:y']);
  assert.equal(chosen(1), []);
  assert.equal(chosen(0), []);
  assert.equal(chooseMetrics(benchmarks, 8)[0]!.name, metricIndexName('b1', ['x']));
});

test('MAX_METRIC_INDEXES: default 200, 0 turns them off, checked; --max-metric-indexes / MAX_METRIC_INDEXES on the command line', () => {
  assert.is(DEFAULTS.maxMetricIndexes, 200);
  assert.is(buildConfig({}).maxMetricIndexes, 200);
  assert.is(buildConfig({ maxMetricIndexes: '0' }).maxMetricIndexes, 0);
  assert.is(buildConfig({ maxMetricIndexes: '64' }).maxMetricIndexes, 64);
  for (const bad of ['-1', 'many', '2.5', '10001'])
    assert.throws(() => buildConfig({ maxMetricIndexes: bad }), /MAX_METRIC_INDEXES must be/, bad);
  const start = program().commands.find((c) => c.name() === 'start')!;
  const option = start.options.find((o) => o.long === '--max-metric-indexes');
  assert.ok(option, '--max-metric-indexes');
  assert.is(option!.envVar, 'MAX_METRIC_INDEXES');
});

let t: TestServer;
let seed: Seeder;
let admin: string;
let site: string;
let flavor: string;

test.before(async () => {
  t = await startTestServer({}, 'metricidx');
  seed = await createSeeder(t);
  admin = await t.admin();
  site = (await seed.site()).id;
  flavor = (await seed.flavor(site)).id;
});

test.after(async () => {
  await t?.close();
});

/** A benchmark on review, then approved through the API; returns its id once its indexes are built. */
async function approved(schema: Record<string, unknown>, server = t, s = seed): Promise<string> {
  const id = (await s.benchmark({ schema, status: 'on_review' })).id;
  const res = await server.request('POST', `/benchmarks/${id}:approve`, { token: await server.admin() });
  assert.ok(res.status < 300, res.text);
  await server.server.context.metrics.idle();
  return id;
}

async function addResults(s: Seeder, benchmark: string, n: number, on = { site, flavor }) {
  await s.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?, jsonb_build_object('a', g % 113, 'b', (g * 7) % 101, 'c', g % 7),
       now() - make_interval(mins => g), now(), ?, ?, false, false
     from generate_series(1, ?) g`,
    [benchmark, on.site, on.flavor, s.owner.uploader_iss, s.owner.uploader_sub, n],
  );
}

test('DELETE /benchmarks/{id}: its metric indexes are dropped, the others kept', async () => {
  const gone = await approved(schemaOf('a', 'b'));
  const kept = await approved(schemaOf('a'));
  await addResults(seed, gone, 20);
  assert.equal(await metricIndexes(seed), namesOf([gone, 'a'], [gone, 'b'], [kept, 'a']));
  const res = await t.request('DELETE', `/benchmarks/${gone}`, { token: admin, query: { cascade: true } });
  assert.is(res.status, 204, res.text);
  await t.server.context.metrics.idle();
  assert.equal(await metricIndexes(seed), namesOf([kept, 'a']));
  assert.is((await t.request('DELETE', `/benchmarks/${kept}`, { token: admin })).status, 204);
  await t.server.context.metrics.idle();
  assert.equal(await metricIndexes(seed), []);
});

test('PUT /benchmarks/{id}: a metric no longer suggested loses its indexes, a new one gets them, the rest stay', async () => {
  const id = await approved(schemaOf('a', 'b'));
  const before = await seed.sql<{ oid: number }>('select to_regclass(?)::oid as oid', [metricIndexName(id, ['a'])]);
  const current = (await t.request('GET', `/benchmarks/${id}`)).body;
  const res = await t.request('PUT', `/benchmarks/${id}`, {
    token: admin,
    body: {
      container_image: current.container_image,
      container_tag: current.container_tag,
      url: current.url,
      json_schema: schemaOf('a', 'c'),
    },
  });
  assert.is(res.status, 200, res.text);
  await t.server.context.metrics.idle();
  assert.equal(await metricIndexes(seed), namesOf([id, 'a'], [id, 'c']));
  const after = await seed.sql<{ oid: number }>('select to_regclass(?)::oid as oid', [metricIndexName(id, ['a'])]);
  assert.is(after[0]!.oid, before[0]!.oid, 'the unchanged metric keeps its index (not rebuilt)');
  // No suggested numeric metric any more (b became a string): nothing left.
  const res2 = await t.request('PUT', `/benchmarks/${id}`, {
    token: admin,
    body: {
      container_image: current.container_image,
      container_tag: current.container_tag,
      json_schema: { properties: { b: { type: 'string', suggestToUser: true } } },
    },
  });
  assert.is(res2.status, 200, res2.text);
  await t.server.context.metrics.idle();
  assert.equal(await metricIndexes(seed), []);
  await t.request('DELETE', `/benchmarks/${id}`, { token: admin });
  await t.server.context.metrics.idle();
});

test('MAX_METRIC_INDEXES holds however many benchmarks are approved: each first metric, oldest first; a deletion frees room', async () => {
  const capped = await startTestServer({ maxMetricIndexes: '6' }, 'metriccap');
  try {
    const s = await createSeeder(capped);
    for (let i = 0; i < 4; i++) {
      await approved(schemaOf('a', 'b', 'c'), capped, s);
      assert.ok((await metricIndexes(s)).length <= 6, `after ${i + 1} approvals`);
    }
    // Oldest first by upload time, then id (the seeder may give two the same millisecond).
    const order = (await s.sql<{ id: string }>('select id from benchmark order by upload_datetime, id')).map((r) => r.id);
    assert.equal(await metricIndexes(s), namesOf([order[0]!, 'a'], [order[1]!, 'a'], [order[2]!, 'a']));
    const res = await capped.request('DELETE', `/benchmarks/${order[0]}`, { token: await capped.admin() });
    assert.is(res.status, 204, res.text);
    await capped.server.context.metrics.idle();
    assert.equal(await metricIndexes(s), namesOf([order[1]!, 'a'], [order[2]!, 'a'], [order[3]!, 'a']));

    // Sorting by an indexed metric reads its index; by one over the cap, the general plan, same rows.
    const indexed = order[1]!;
    const capSite = (await s.site()).id;
    await addResults(s, indexed, 3000, { site: capSite, flavor: (await s.flavor(capSite)).id });
    await s.sql('analyze result');
    const em = capped.server.context.orm.em.fork();
    assert.ok(await capped.server.context.metrics.ready(em, indexed, ['a']));
    assert.not.ok(await capped.server.context.metrics.ready(em, indexed, ['b']), 'b is over the cap');
    const query: ResultListQuery = { benchmark_id: indexed, sort_by: '-json.a', per_page: 20 };
    const { page } = resultListSql(query, { visible: true }, { metricIndexed: true });
    const plan = (await s.sql<{ 'QUERY PLAN': string }>(`explain ${page.sql}`, page.params)).map((r) => r['QUERY PLAN']).join('\n');
    assert.match(plan, metricIndexName(indexed, ['a']), plan);
    for (const sort_by of ['-json.a', '+json.b']) {
      const q = { benchmark_id: indexed, sort_by, per_page: 50, page: 3 };
      const got = await capped.request('GET', '/results', { query: q });
      assert.is(got.status, 200, got.text);
      const plain = resultListSql(q, { visible: true }, { metricIndexed: false }).page;
      assert.equal(
        got.body.items.map((r: { id: string }) => r.id),
        (await s.sql<{ id: string }>(plain.sql, plain.params)).map((r) => r.id),
        sort_by,
      );
    }
  } finally {
    await capped.close();
  }
});

test('at start, indexes of benchmarks that no longer exist, of unapproved ones and broken ones are dropped; others kept', async () => {
  const kept = await approved(schemaOf('a'));
  const vanished = await approved(schemaOf('a', 'b'));
  const unapproved = await approved(schemaOf('c'));
  // Behind the server's back: rows deleted or changed in SQL, an index a crashed build left invalid.
  await seed.sql('delete from benchmark where id = ?', [vanished]);
  await seed.sql("update benchmark set status = 'on_review' where id = ?", [unapproved]);
  const orphan = metricIndexName('00000000-0000-4000-8000-000000000000', ['gone']);
  await seed.sql(`create index ${orphan} on result (id) where false`);
  await addResults(seed, kept, 5);
  const broken = `${metricIndexName(kept, ['a'])}_x`;
  await seed.sql(`drop index ${broken}`);
  await seed.sql(`create unique index concurrently ${broken} on result ((1))`).then(
    () => assert.unreachable('the build fails on duplicates'),
    (err) => assert.match(String(err), /duplicate|unique/i),
  );
  await seed.sql('create index result_metric_notes on result (id) where false'); // not one of ours: left alone
  assert.ok((await metricIndexes(seed)).length >= 8);

  const again = await startServer(buildConfig({ host: '127.0.0.1', port: '0', databaseUrl: t.databaseUrl, logLevel: 'silent' }));
  try {
    await again.context.metrics.idle();
  } finally {
    await again.close();
  }
  assert.equal(await metricIndexes(seed), [...namesOf([kept, 'a']), 'result_metric_notes'].sort());
  const invalid = await seed.sql(
    "select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname like 'result_metric%' and not i.indisvalid",
  );
  assert.equal(invalid, [], 'the broken index was built again');
  await seed.sql('drop index result_metric_notes');
});

/** A logger that keeps its lines (debug and up), parsed. */
function recorder() {
  const lines: Record<string, unknown>[] = [];
  return { lines, logger: createLogger('debug', (line) => lines.push(JSON.parse(line) as Record<string, unknown>)) };
}

/** This module's indexes of the database that are not valid, or still being built by some session. */
async function unfinished(s: Seeder): Promise<unknown[]> {
  return s.sql(
    "select c.relname from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname like 'result_metric%' and not (i.indisvalid and i.indisready) " +
      'union all select index_relid::regclass::text from pg_stat_progress_create_index',
  );
}

test('two processes reconciling at once: each index built once by one of them, all valid, a crashed build mended, nothing logged above debug', async () => {
  // Approvals build nothing here (cap 0): the two reconcilers below find every index missing.
  const quiet = await startTestServer({ maxMetricIndexes: '0' }, 'metrictwo');
  const a = recorder();
  const b = recorder();
  const first = new MetricIndexes(a.logger, { retryMs: 200 });
  const second = new MetricIndexes(b.logger, { retryMs: 200 });
  try {
    const s = await createSeeder(quiet);
    const benchmarks: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = (await s.benchmark({ schema: schemaOf('a', 'b'), status: 'approved' })).id;
      const siteId = (await s.site()).id;
      await addResults(s, id, 4000, { site: siteId, flavor: (await s.flavor(siteId)).id });
      benchmarks.push(id);
    }
    // What a build that crashed leaves behind: an invalid index of a wanted metric.
    const broken = metricIndexName(benchmarks[0]!, ['a']);
    await s.sql(`create unique index concurrently ${broken} on result ((1))`).catch(() => {});
    const em = () => quiet.server.context.orm.em.fork();
    await Promise.all([first.ensureAll(em()), second.ensureAll(em())]);
    const expected = namesOf(
      ...benchmarks.flatMap((id): [string, string][] => [
        [id, 'a'],
        [id, 'b'],
      ]),
    );
    const deadline = Date.now() + 120_000; // a hang guard: the builds take seconds, more on a loaded machine
    while ((await metricIndexes(s)).length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await first.idle();
    await second.idle();
    assert.equal(await metricIndexes(s), expected);
    assert.equal(await unfinished(s), [], 'every index valid, none being built');
    const lines = [...a.lines, ...b.lines];
    const loud = lines.filter((l) => l.level !== 'debug');
    assert.equal(loud, [], 'no warning, no error');
    const built = lines.filter((l) => l.msg === 'metric index ready').map((l) => `${l.benchmark}:${l.path}`);
    assert.is(built.length, 10, `each metric built once: ${built.join(', ')}`);
    assert.is(new Set(built).size, 10);
    assert.ok(a.lines.some((l) => l.msg === 'metric index ready') && b.lines.some((l) => l.msg === 'metric index ready'), 'both took part');
  } finally {
    await first.close();
    await second.close();
    await quiet.close();
  }
});

test('a metric whose lock another process holds is left to it, then built once the lock is free', async () => {
  const quiet = await startTestServer({ maxMetricIndexes: '0' }, 'metricbusy');
  const log = recorder();
  const indexes = new MetricIndexes(log.logger, { retryMs: 200 });
  const other = new pg.Client({ connectionString: quiet.databaseUrl });
  await other.connect();
  try {
    const s = await createSeeder(quiet);
    const held = (await s.benchmark({ schema: schemaOf('a'), status: 'approved' })).id;
    const free = (await s.benchmark({ schema: schemaOf('a'), status: 'approved' })).id;
    const [k1, k2] = lockKeyOf(metricIndexName(held, ['a']));
    await other.query('select pg_advisory_lock($1::int, $2::int)', [k1, k2]);
    await indexes.ensureAll(quiet.server.context.orm.em.fork());
    assert.equal(await metricIndexes(s), namesOf([free, 'a']), 'the other metric is built, the held one left alone');
    await other.query('select pg_advisory_unlock($1::int, $2::int)', [k1, k2]);
    const deadline = Date.now() + 60_000; // a hang guard: looked at again every 200 ms
    while ((await metricIndexes(s)).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await indexes.idle();
    assert.equal(await metricIndexes(s), namesOf([held, 'a'], [free, 'a']), 'built when looked at again');
    assert.equal(
      log.lines.filter((l) => l.level !== 'debug'),
      [],
    );
    assert.ok(log.lines.some((l) => l.msg === 'metric index busy in another process: looked at again later'));
  } finally {
    await indexes.close();
    await other.end();
    await quiet.close();
  }
});

test('an index another session is still building is not dropped, even when no benchmark wants it; dropped once built', async () => {
  const quiet = await startTestServer({ maxMetricIndexes: '0' }, 'metricbuilding');
  const log = recorder();
  const indexes = new MetricIndexes(log.logger, { retryMs: 200 });
  const snapshot = new pg.Client({ connectionString: quiet.databaseUrl });
  const builder = new pg.Client({ connectionString: quiet.databaseUrl });
  await snapshot.connect();
  await builder.connect();
  let building: Promise<unknown> | undefined;
  try {
    const s = await createSeeder(quiet);
    const orphan = metricIndexName('00000000-0000-4000-8000-000000000000', ['gone']);
    // An open transaction with a snapshot: a concurrent build waits for it to end before it completes.
    await snapshot.query('begin isolation level repeatable read');
    await snapshot.query('select count(*) from result');
    building = builder.query(`create index concurrently ${orphan} on result (id)`);
    // Under way, and its catalogue entry committed (the build's first step): the index is listed.
    const underWay = async () =>
      (await s.sql('select 1 from pg_stat_progress_create_index')).length > 0 && (await metricIndexes(s)).includes(orphan);
    const until = Date.now() + 60_000;
    while (!(await underWay()) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    assert.ok(await underWay(), 'the build is under way');
    // Waiting for the build, it would wait until the snapshot below ends, after this: a minute ends that wait.
    const checked = await within(
      indexes.ensureAll(quiet.server.context.orm.em.fork()).then(() => 'done'),
      60_000,
      'still waiting',
    );
    assert.is(checked, 'done', 'the reconciliation does not wait for the build');
    assert.equal(await metricIndexes(s), [orphan], 'not dropped while being built');
    await snapshot.query('commit');
    await building;
    const deadline = Date.now() + 60_000;
    while ((await metricIndexes(s)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await indexes.idle();
    assert.equal(await metricIndexes(s), [], 'dropped when looked at again, once built');
    assert.equal(
      log.lines.filter((l) => l.level !== 'debug'),
      [],
    );
  } finally {
    await snapshot.query('rollback').catch(() => {});
    await building?.catch(() => {});
    await indexes.close();
    await snapshot.end();
    await builder.end();
    await quiet.close();
  }
});

test.run();
