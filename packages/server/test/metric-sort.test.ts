/**
 * Sorting a benchmark's results by a metric its schema suggests to users is served by two partial
 * indexes built when the benchmark is approved (services/results/metric-indexes.ts). The indexed plan must
 * give exactly the rows and order of the plain one, for numbers, other values and missing ones,
 * both directions, with filters and on every page. Real server, real PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { metricIndexName, suggestedMetrics } from '../src/services/results/metric-indexes.ts';
import { resultListSql, type ResultListQuery } from '../src/services/results/result-query.ts';

let t: TestServer;
let seed: Seeder;
let benchmark: string;
let plain: string;

const SCHEMA = {
  type: 'object',
  properties: {
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer', suggestToUser: true } } } } },
    result: {
      type: 'object',
      properties: {
        score: { type: 'number', suggestToUser: true },
        label: { type: 'string', suggestToUser: true },
        'bad name': { type: 'number', suggestToUser: true },
        time: { type: 'number' },
      },
    },
  },
};

test('the suggested numeric properties with plain names are the indexed metrics', () => {
  assert.equal(suggestedMetrics(SCHEMA), [
    ['machine', 'cpu', 'count'],
    ['result', 'score'],
  ]);
  assert.equal(suggestedMetrics({ type: 'object' }), []);
  assert.equal(suggestedMetrics(true), []);
  assert.equal(suggestedMetrics({ properties: { a: { type: ['number', 'null'], suggestToUser: true } } }), [['a']]);
  assert.match(metricIndexName('0b6f3c5e-1111-4222-8333-944445555666', ['result', 'score']), /^result_metric_[0-9a-f]{24}$/);
});

test.before(async () => {
  try {
    await before();
  } catch (e) {
    console.error(e);
    throw e;
  }
});
async function before() {
  t = await startTestServer({}, 'metricsort');
  seed = await createSeeder(t);
  const alice = await t.user('alice');
  const admin = await t.admin();
  const created = await t.request('POST', '/benchmarks', {
    token: alice,
    body: { container_image: 'ghcr.io/test/metric', container_tag: '1.0', json_schema: SCHEMA, url: 'https://example.org' },
  });
  assert.is(created.status, 201, created.text);
  benchmark = created.body.id;
  const approved = await t.request('POST', `/benchmarks/${benchmark}:approve`, { token: admin });
  assert.ok(approved.status < 300, approved.text);
  plain = (await seed.benchmark({ schema: SCHEMA, status: 'on_review' })).id; // approved below, in SQL: indexed at the next change or start only
  const site = (await seed.site()).id;
  const flavor = (await seed.flavor(site)).id;
  // 3,000 results: mostly numbers (with ties), some strings, booleans, nulls, missing values, hidden ones.
  await seed.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?,
       jsonb_build_object('machine', jsonb_build_object('cpu', jsonb_build_object('count', 1 + g % 16)),
         'result', case
           when g % 97 = 0 then jsonb_build_object('score', 'n/a')
           when g % 89 = 0 then jsonb_build_object('score', true)
           when g % 83 = 0 then jsonb_build_object('score', null)
           when g % 79 = 0 then '{}'::jsonb
           else jsonb_build_object('score', (g * 7919) % 500 / 4.0) end),
       now() - make_interval(mins => g), now(), ?, ?, false, g % 50 = 0
     from generate_series(1, 3000) g`,
    [benchmark, site, flavor, seed.owner.uploader_iss, seed.owner.uploader_sub],
  );
  await t.server.context.metrics.idle();
  await seed.sql("update benchmark set status = 'approved' where id = ?", [plain]);
  assert.ok(await t.server.context.metrics.ready(t.server.context.orm.em.fork(), benchmark, ['result', 'score']), 'built on approval');
  await seed.sql('analyze result');
}

test.after(async () => {
  await t.close();
});

async function apiIds(query: Record<string, unknown>): Promise<{ ids: string[]; total: number }> {
  const res = await t.request('GET', '/results', { query: query as never });
  assert.is(res.status, 200, res.text);
  return { ids: res.body.items.map((r: { id: string }) => r.id), total: res.body.total };
}

async function plainIds(query: ResultListQuery): Promise<string[]> {
  const { page } = resultListSql(query, { visible: true }, { metricIndexed: false });
  return (await seed.sql<{ id: string }>(page.sql, page.params)).map((r) => r.id);
}

test('both indexes are built on approval, and only for the approved benchmark', async () => {
  const names = await seed.sql<{ relname: string }>("select relname from pg_class where relname like 'result_metric_%' order by relname");
  const expected = [metricIndexName(benchmark, ['machine', 'cpu', 'count']), metricIndexName(benchmark, ['result', 'score'])];
  assert.equal(names.map((n) => n.relname).sort(), [...expected, ...expected.map((n) => `${n}_x`)].sort());
});

test('the indexed plan is used, and gives the rows and order of the plain plan', async () => {
  const query: ResultListQuery = { benchmark_id: benchmark, sort_by: '-json.result.score', per_page: 50 };
  const { page } = resultListSql(query, { visible: true }, { metricIndexed: true });
  const plan = (await seed.sql<{ 'QUERY PLAN': string }>(`explain ${page.sql}`, page.params)).map((r) => r['QUERY PLAN']).join('\n');
  assert.match(plan, metricIndexName(benchmark, ['result', 'score']), plan);
  for (const sort_by of ['-json.result.score', '+json.result.score', '+json.machine.cpu.count', '-json.machine.cpu.count,-id']) {
    for (const filters of [undefined, ['machine.cpu.count >= 4'], ['result.score > 20', 'machine.cpu.count < 9']]) {
      const pages: string[][] = [];
      for (const page of [1, 2, 7, 30]) {
        const q = { benchmark_id: benchmark, sort_by, filters, page, per_page: 100 };
        const got = await apiIds(q);
        assert.equal(got.ids, await plainIds(q), `${sort_by} ${filters ?? ''} page ${page}`);
        pages.push(got.ids);
      }
      assert.ok(pages[0]!.length > 0, `${sort_by} ${filters ?? ''}: something listed`);
    }
  }
});

test('the last pages hold the strings, booleans, nulls and missing values in the full order', async () => {
  for (const sort_by of ['-json.result.score', '+json.result.score']) {
    const first = await apiIds({ benchmark_id: benchmark, sort_by, per_page: 100 });
    const pages = Math.ceil(first.total / 100);
    for (let page = Math.max(1, pages - 2); page <= pages + 1; page++) {
      const q = { benchmark_id: benchmark, sort_by, page, per_page: 100 };
      assert.equal((await apiIds(q)).ids, await plainIds(q), `${sort_by} page ${page}`);
    }
  }
});

test('other lists are not affected: no benchmark, another benchmark without indexes, own results', async () => {
  for (const q of [
    { sort_by: '-json.result.score', per_page: 30 },
    { benchmark_id: plain, sort_by: '-json.result.score', per_page: 30 },
    { benchmark_id: benchmark, sort_by: '-json.result.score,+execution_datetime', per_page: 30 },
  ]) {
    assert.equal((await apiIds(q)).ids, await plainIds(q));
  }
});

test.run();
