/**
 * Result lists reading numeric filters and sorts from the metric values table
 * (services/metrics/metric-lookup.ts): the same pages as from the documents alone (rows, order, total,
 * next_cursor, cursors usable across both) over generated data with missing, null, non-numeric and
 * extreme values, hidden results, tags, sites, flavors, both scopes, pages by number and by cursor;
 * when the table cannot sort (a string at the path), the documents answer; and the plan of a
 * filtered sort walks the table's index.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder, type SeededResult } from './support/seed.ts';
import { prng } from './support/hardening.ts';
import { listResults, type ResultServices } from '../src/services/results/results.ts';
import {
  chooseSets,
  metricPlan,
  resultListSql,
  resultWalk,
  type ResultListQuery,
  type ResultScope,
} from '../src/services/results/result-query.ts';
import { withWorkMem } from '../src/db/work-mem.ts';
import { MetricTable, schemaForcesNumber } from '../src/services/metrics/metric-lookup.ts';
import { TotalCache } from '../src/services/results/total-cache.ts';
import { suggestedMetrics } from '../src/services/metrics/metric-values.ts';
import { EmbedCache } from '../src/services/catalogue/embeds.ts';

let t: TestServer;
let seed: Seeder;
let strict: string;
let loose: string;
const flavors: { id: string; site_id: string }[] = [];
const tags: string[] = [];

const SCHEMA = {
  type: 'object',
  properties: {
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer' } } } } },
    result: { $ref: '#/$defs/result' },
  },
  $defs: {
    result: {
      type: 'object',
      properties: {
        score: { type: 'number', suggestToUser: true },
        time: { allOf: [{ type: ['number', 'null'] }], 'x-better': 'lower' },
        mixed: { type: ['number', 'string'] },
      },
    },
  },
};

/** Numbers of every kind (ties on purpose), written into the JSON text as they are. */
const NUMBERS = [
  '0',
  '-0',
  '1',
  '1.0',
  '2.5',
  '-3',
  '0.1',
  '0.30000000000000004',
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '5e-324',
  '-5e-324',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789.123456789',
  '42',
  '42',
];
/** What the strict benchmark holds at result.score besides numbers (its schema allows no other). */
const NOT_THERE = ['missing', 'null'] as const;
/** What another benchmark of the same schema holds there too (stored without validation). */
const OTHERS = ['"12"', 'true', '{"v":1}', '[1]', '""'];

const services = (table: boolean, fewMatches?: number, probeEntries?: number): ResultServices => ({
  results: { totals: new TotalCache({ ttlMs: 0 }) },
  catalogue: { embeds: new EmbedCache() },
  ...(table ? { metrics: { table: new MetricTable({ fewMatches, probeEntries }) } } : {}),
});
const on = services(true);
/** Every filtered list sorted by the table walks the sorted path (none looks its few matches up by id), checking each entry by lookups first. */
const probing = services(true, -1);
/** The same walks against the filters' sets alone. */
const walking = services(true, -1, 0);
const off = services(false);
const fork = () => t.server.context.orm.em.fork();

/** Two answers are the same text; otherwise where they part (a diff of two pages would take minutes). */
function same(a: string, b: string, label: string): void {
  if (a === b) return;
  let i = 0;
  while (a[i] === b[i]) i++;
  assert.unreachable(
    `${label}: the answers part at ${i}: table …${a.slice(Math.max(0, i - 80), i + 80)}… documents …${b.slice(Math.max(0, i - 80), i + 80)}…`,
  );
}

async function page(s: ResultServices, query: ResultListQuery, scope: ResultScope): Promise<string> {
  try {
    return (await listResults(fork(), s, query, scope)).body.toString();
  } catch (err) {
    return `error ${(err as Error).message}`;
  }
}

function valueText(rng: ReturnType<typeof prng>, others: boolean): string | undefined {
  const r = rng.next();
  if (r < 0.55) return rng.pick(NUMBERS);
  if (r < 0.7) return String(rng.int(50) - 10);
  if (others && r < 0.8) return rng.pick(OTHERS);
  return rng.pick(NOT_THERE) === 'null' ? 'null' : undefined;
}

async function seedBenchmark(id: string, n: number, others: boolean, rng: ReturnType<typeof prng>): Promise<void> {
  const rows: SeededResult[] = [];
  const texts: { score?: string; time?: string; mixed?: string; count?: string }[] = [];
  for (let i = 0; i < n; i++) {
    const flavor = rng.pick(flavors);
    rows.push({
      benchmark_id: id,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { result: {} },
      execution_datetime: new Date(Date.UTC(2024, rng.int(12), 1 + rng.int(28))),
      uploader: rng.chance(0.3) ? 'other-uploader' : undefined,
      tags: rng.chance(0.3) ? [rng.pick(tags)] : [],
      hidden: rng.chance(0.08),
    });
    texts.push({
      score: valueText(rng, others),
      time: valueText(rng, false),
      mixed: rng.chance(0.2) ? rng.pick(['"a"', '"10"', '"Z"']) : valueText(rng, false),
      count: rng.chance(0.9) ? String(1 + rng.int(16)) : undefined,
    });
  }
  const ids = await seed.results(rows);
  // The JSON text as written (1e400, -0, 9007199254740993 are not JavaScript numbers).
  for (let i = 0; i < ids.length; i += 50) {
    const chunk = ids.slice(i, i + 50).map((rid, k) => {
      const v = texts[i + k]!;
      const result = Object.entries({ score: v.score, time: v.time, mixed: v.mixed })
        .filter(([, x]) => x !== undefined)
        .map(([key, x]) => `"${key}":${x}`)
        .join(',');
      const machine = v.count === undefined ? '' : `,"machine":{"cpu":{"count":${v.count}}}`;
      return { id: rid, json: `{"result":{${result}}${machine}}` };
    });
    await seed.sql(
      'update result r set json = c.json::jsonb from jsonb_to_recordset(?::jsonb) as c(id uuid, json text) where r.id = c.id',
      [JSON.stringify(chunk)],
    );
  }
}

test.before(async () => {
  t = await startTestServer({}, 'metric_list');
  seed = await createSeeder(t);
  await t.user('other-uploader');
  for (const name of ['North', 'South']) {
    const site = await seed.site({ name });
    for (const f of ['small', 'large', 'huge']) {
      const flavor = await seed.flavor(site.id, { name: `${name}-${f}` });
      flavors.push({ id: flavor.id, site_id: flavor.site_id });
    }
  }
  for (let i = 0; i < 3; i++) tags.push((await seed.tag()).id);
  strict = (await seed.benchmark({ schema: SCHEMA })).id;
  loose = (await seed.benchmark({ schema: SCHEMA })).id;
  const rng = prng(20261126);
  await seedBenchmark(strict, 420, false, rng);
  await seedBenchmark(loose, 160, true, rng);
  await t.server.context.metrics.values.reconcile(fork());
  await t.server.context.metrics.values.idle();
  const complete = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = any(?::uuid[])', [
    [strict, loose],
  ]);
  assert.equal(
    complete.map((c) => c.complete),
    [true, true],
  );
});
test.after(async () => {
  await t.close();
});

test('suggestedMetrics: the suggested numeric properties with plain names, at most four', () => {
  const schema = {
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
  assert.equal(suggestedMetrics(schema), [
    ['machine', 'cpu', 'count'],
    ['result', 'score'],
  ]);
  assert.equal(suggestedMetrics({ type: 'object' }), []);
  assert.equal(suggestedMetrics(true), []);
  assert.equal(suggestedMetrics({ properties: { a: { type: ['number', 'null'], suggestToUser: true } } }), [['a']]);
});

test('schemaForcesNumber: through properties, allOf and local $ref; never through a branch or a mixed type', () => {
  assert.ok(schemaForcesNumber(SCHEMA, ['result', 'score']));
  assert.ok(schemaForcesNumber(SCHEMA, ['result', 'time']), 'number or null');
  assert.ok(schemaForcesNumber(SCHEMA, ['machine', 'cpu', 'count']));
  assert.not.ok(schemaForcesNumber(SCHEMA, ['result', 'mixed']));
  assert.not.ok(schemaForcesNumber(SCHEMA, ['result', 'nothing']));
  assert.not.ok(schemaForcesNumber({ anyOf: [{ properties: { x: { type: 'number' } } }, {}] }, ['x']));
  assert.not.ok(schemaForcesNumber({ properties: { x: { type: ['null'] } } }, ['x']));
  assert.ok(schemaForcesNumber({ allOf: [{}, { properties: { x: { type: 'integer' } } }] }, ['x']));
  assert.not.ok(schemaForcesNumber(true, ['x']));
  const loop = { $ref: '#' };
  assert.not.ok(schemaForcesNumber(loop, ['x']), 'a reference to itself ends');
});

/** Queries of the strict benchmark (or the loose one): filters and sorts on its paths, with everything else a list takes. */
const FILTER_PATHS = ['result.score', 'result.time', 'result.mixed', 'machine.cpu.count', 'json.result.score'];
const filterArb = fc
  .tuple(
    fc.constantFrom(...FILTER_PATHS),
    fc.constantFrom('==', '>', '<', '>=', '<='),
    fc.oneof(
      fc.constantFrom(...NUMBERS.filter((n) => !n.includes('e4'))),
      fc.integer({ min: -10, max: 40 }).map(String),
      fc.constantFrom('a', 'true'),
    ),
  )
  .map(([p, op, v]) => `${p} ${op} ${v}`);
const queryArb = fc.record(
  {
    loose: fc.boolean(),
    filters: fc.array(filterArb, { maxLength: 3 }),
    sort: fc.constantFrom(
      '-json.result.score',
      '+json.result.score',
      '-json.result.time',
      '+json.machine.cpu.count',
      '-json.result.mixed',
      '-json.result.score,+id',
      '+json.result.score,-execution_datetime',
      '-execution_datetime',
      undefined,
    ),
    per_page: fc.constantFrom(1, 7, 25, 100),
    page: fc.integer({ min: 1, max: 6 }),
    site: fc.boolean(),
    flavor: fc.boolean(),
    tag: fc.boolean(),
    execution: fc.boolean(),
    uploader: fc.boolean(),
  },
  { requiredKeys: [] },
);

type Generated = typeof queryArb extends fc.Arbitrary<infer T> ? T : never;

function build(g: Generated): { query: ResultListQuery; scope: ResultScope } {
  const query: ResultListQuery = { benchmark_id: g.loose ? loose : strict, per_page: g.per_page ?? 25 };
  if (g.filters?.length) query.filters = g.filters;
  if (g.sort) query.sort_by = g.sort;
  if (g.page && g.page > 1) query.page = g.page;
  if (g.site) query.site_id = flavors[0]!.site_id;
  if (g.flavor) query.flavor_id = flavors[4]!.id;
  if (g.tag) query.tags_ids = [tags[0]!];
  if (g.execution) query.execution_after = '2024-03-01T00:00:00Z';
  const scope: ResultScope = g.uploader ? { uploader: { iss: t.issuer.issuer, sub: 'other-uploader' } } : { visible: true };
  return { query, scope };
}

const used = { lists: 0, filters: 0, sorts: 0 };

test('the same pages with the table and without it: rows, order, total, next_cursor, and cursors across both', async () => {
  await fc.assert(
    fc.asyncProperty(queryArb, async (g) => {
      const { query, scope } = build(g);
      const plan = await metricPlan(fork(), on.metrics!.table, query, scope);
      used.lists++;
      if (plan) used.filters++;
      if (plan?.sortPathId != null) used.sorts++;
      const a = await page(on, query, scope);
      const b = await page(off, query, scope);
      same(a, b, JSON.stringify({ query, scope }));
      same(await page(walking, query, scope), b, `walking ${JSON.stringify({ query, scope })}`);
      same(await page(probing, query, scope), b, `probing ${JSON.stringify({ query, scope })}`);
      // Walk on by cursor, each path continuing the other's cursor.
      let cursor = a.startsWith('{') ? (JSON.parse(a).next_cursor as string | null) : null;
      for (let step = 0; cursor && step < 3; step++) {
        const next = { ...query, page: undefined, cursor };
        const c = await page(on, next, scope);
        const d = await page(off, next, scope);
        same(c, d, JSON.stringify({ next, scope }));
        cursor = c.startsWith('{') ? (JSON.parse(c).next_cursor as string | null) : null;
      }
    }),
    { numRuns: 150, seed: 20261126, endOnFailure: true },
  );
  assert.ok(used.sorts >= 20, `the table sorted ${used.sorts} of ${used.lists} lists`);
  assert.ok(used.filters >= 60, `the table answered ${used.filters} of ${used.lists} lists`);
});

/** Every item id of a list: by page number, or by cursor with the services taking turns page by page. */
async function walkAll(query: ResultListQuery, how: 'number' | 'cursor', turns: ResultServices[]): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let n = 1; n < 100; n++) {
    const s = turns[n % turns.length]!;
    const next = how === 'number' ? { ...query, page: n } : cursor ? { ...query, cursor } : query;
    const body = JSON.parse(await page(s, next, { visible: true }));
    ids.push(...body.items.map((i: { id: string }) => i.id));
    cursor = body.next_cursor;
    if (!body.has_next) return ids;
  }
  throw new Error('the walk did not end');
}

test('every page of a long walk: the whole list in the same order, by page number and by cursor', async () => {
  const [{ n: visible }] = (await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ? and not hidden', [
    strict,
  ])) as [{ n: number }];
  for (const sort_by of ['-json.result.score', '+json.result.score', '-json.result.time', '+json.machine.cpu.count']) {
    for (const filters of [[], ['machine.cpu.count > 4'], ['result.time <= 20', 'result.score >= -3']]) {
      const query: ResultListQuery = { benchmark_id: strict, sort_by, filters, per_page: 30 };
      const plan = await metricPlan(fork(), on.metrics!.table, query, { visible: true });
      assert.ok(plan?.sortPathId != null, `the table sorts ${sort_by}`);
      const label = `${sort_by} ${filters.join(' & ')}`;
      const reference = await walkAll(query, 'number', [off]);
      same((await walkAll(query, 'number', [on])).join(','), reference.join(','), label);
      same((await walkAll(query, 'cursor', [on])).join(','), reference.join(','), label);
      same((await walkAll(query, 'cursor', [on, off])).join(','), reference.join(','), label);
      same((await walkAll(query, 'cursor', [walking, on])).join(','), reference.join(','), label);
      if (filters.length === 0) assert.is(reference.length, visible, 'every visible result');
      assert.is(new Set(reference).size, reference.length, 'no result twice');
    }
  }
});

test('a string at the sorted path: the documents sort; filters still look the table up', async () => {
  const query: ResultListQuery = { benchmark_id: loose, sort_by: '-json.result.score', filters: ['machine.cpu.count > 4'] };
  const plan = await metricPlan(fork(), on.metrics!.table, query, { visible: true });
  assert.ok(plan, 'the filter reads the table');
  assert.is(plan!.sortPathId, null, 'the sort reads the documents');
  const first = JSON.parse(await page(on, query, { visible: true }));
  assert.is.not(typeof first.items[0].json.result.score, 'number', 'descending: the other values first, as from the documents');
  same(await page(on, query, { visible: true }), await page(off, query, { visible: true }), 'loose');
});

test('a path removed while its ids are remembered: the list reads the documents again', async () => {
  const table = new MetricTable({ pathsMs: 60_000 });
  const s = { ...on, metrics: { table } };
  const query: ResultListQuery = { benchmark_id: strict, sort_by: '-json.result.score', filters: ['machine.cpu.count > 4'] };
  const before = await page(s, query, { visible: true });
  const paths = await table.paths(fork(), strict);
  const id = [...paths!.ids.entries()].find(([k]) => k === '["machine","cpu","count"]')![1];
  // What a schema change that removes the path does to the table, in one transaction.
  await fork().transactional(async (tx) => {
    await tx.execute('delete from metric_value where path_id = ?', [id]);
    await tx.execute('delete from metric_path where id = ?', [id]);
  });
  try {
    same(await page(s, query, { visible: true }), before, 'the same page, from the documents');
    assert.is((await table.paths(fork(), strict))?.ids.has('["machine","cpu","count"]'), false, 'the ids are read again');
  } finally {
    // Put the path back as the next choice of paths would (a new id), and fill it in again.
    await seed.sql('delete from metric_benchmark where benchmark_id = ?', [strict]);
    await t.server.context.metrics.values.reconcile(fork());
    await t.server.context.metrics.values.idle();
  }
});

/** The plan (JSON) of a statement, planned in a transaction that first runs `settings`. */
async function planOf(f: { sql: string; params: unknown[] }, settings: string[] = [], em = fork()): Promise<string> {
  const rows = await em.transactional(async (tx) => {
    for (const setting of settings) await tx.execute(setting);
    return tx.execute<{ 'QUERY PLAN': unknown }[]>(`explain (format json) ${f.sql}`, f.params);
  });
  return JSON.stringify(rows[0]!['QUERY PLAN']);
}

test('the plan of a filtered sort on key paths: the walk checks the filter on the entry it stands on, no set, no lookup', async () => {
  const query: ResultListQuery = { benchmark_id: strict, sort_by: '-json.result.score', filters: ['machine.cpu.count > 4'], per_page: 10 };
  const scope: ResultScope = { visible: true };
  const plan = await metricPlan(fork(), new MetricTable(), query, scope);
  assert.ok(plan?.sortPathId != null);
  const { table, sets } = resultListSql(query, scope, { walk: resultWalk(query, scope), metric: plan! });
  const filter = { ...sets!.filters[0]!, complement: false };
  assert.ok(filter.slot !== undefined, 'machine.cpu.count has a key slot');
  // Small tables: PostgreSQL would rather read all of it; the shape is what is checked.
  const small = ['set local enable_seqscan = off', 'set local enable_sort = off', 'set local enable_bitmapscan = off'];
  const walked = await planOf(table!.sized!([filter], false).page, small);
  assert.match(walked, /"Index Name":"metric_value_path_idx"/);
  assert.match(walked, /"Scan Direction":"Backward"/);
  assert.match(walked, /"Node Type":"Index Only Scan"/);
  assert.match(walked, /k\d >/, 'the key column compared');
  assert.not.match(walked, /hashed SubPlan|metric_value_result_idx/, 'no set, no lookup');
  // The matches sorted: the driver's range, each match's number at the sorted path from its own entry.
  const few = await planOf(table!.sized!([filter], true).page, ['set local enable_seqscan = off', 'set local enable_bitmapscan = off']);
  assert.match(few, /"Index Name":"metric_value_path_idx"/);
  assert.match(few, /top-N heapsort|"Node Type":"Sort"/);
  assert.not.match(few, /metric_value_result_idx/, 'no lookup per match');
});

test("a set of ids is hashed however small the server's work_mem: the statement is planned with the work_mem its set needs", async () => {
  // Ten numeric paths: the last two have no key slot, and a filter on them is checked against a set.
  const props = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].map((k) => [k, { type: 'integer' }]));
  const wide = (await seed.benchmark({ schema: { type: 'object', properties: props } })).id;
  const flavor = flavors[0]!;
  // 200,000 metric values written by the triggers: on a busy machine longer than the server's statement timeout.
  await fork().transactional(async (tx) => {
    await tx.execute('set local statement_timeout = 0');
    await tx.execute(
      `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
       select gen_random_uuid(), ?, ?, ?, jsonb_build_object('a', g % 97, 'b', g % 89, 'c', g % 83, 'd', g % 79, 'e', g % 73, 'f', g % 71, 'g', g % 67, 'h', g % 61, 'i', g % 2, 'j', g), now(), now(), ?, ?, false, false
       from generate_series(1, 20000) g`,
      [wide, flavor.site_id, flavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub],
    );
  });
  await seed.sql('analyze metric_value');
  const query: ResultListQuery = { benchmark_id: wide, sort_by: '-json.a', filters: ['i == 1'], per_page: 10 };
  const scope: ResultScope = { visible: true };
  const plan = await metricPlan(fork(), new MetricTable(), query, scope);
  const { table, sets } = resultListSql(query, scope, { walk: resultWalk(query, scope), metric: plan! });
  assert.is(sets!.filters[0]!.slot, undefined, 'i has no key slot');
  const chosen = await chooseSets(fork(), sets!, async (f) => (await seed.sql<{ total: number }>(f.sql, f.params))[0]!.total);
  assert.equal([chosen.total, chosen.all], [10_000, 20_000]);
  const walkPage = table!.sized!(chosen.filters, false).page;
  const tiny = "set local work_mem = '64kB'";
  // The cliff: with 64 kB, PostgreSQL would scan the set again for every row of the walk.
  assert.match(await planOf(walkPage, [tiny]), /"Subplan Name":"SubPlan \d+"/);
  assert.not.match(await planOf(walkPage, [tiny]), /hashed SubPlan/);
  // As the list runs it: its own work_mem, whatever the server's.
  const planned = await fork().transactional(async (tx) => {
    await tx.execute(tiny);
    return withWorkMem(tx, chosen.workMemKb, (inner) =>
      inner.execute<{ 'QUERY PLAN': unknown }[]>(`explain (format json) ${walkPage.sql}`, walkPage.params),
    );
  });
  assert.match(JSON.stringify(planned[0]!['QUERY PLAN']), /hashed SubPlan/);
  assert.ok(chosen.workMemKb >= 4096);
  // And the answer is the documents'.
  same(await page(on, query, scope), await page(off, query, scope), 'wide');
});

test('a benchmark created through the API, by an administrator or by a user, is read from the table from its first upload', async () => {
  const admin = await t.admin();
  const alice = await t.user('alice-metric');
  const schema = {
    type: 'object',
    properties: {
      machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer', suggestToUser: true } } } } },
      result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true } } },
    },
  };
  const byAdmin = await t.request('POST', '/benchmarks', {
    token: admin,
    body: { container_image: 'ghcr.io/test/by-admin', container_tag: '1', json_schema: schema },
  });
  const byUser = await t.request('POST', '/benchmarks', {
    token: alice,
    body: { container_image: 'ghcr.io/test/by-user', container_tag: '1', json_schema: schema },
  });
  assert.is(byAdmin.status, 201, byAdmin.text);
  assert.is(byUser.status, 201, byUser.text);
  const approved = await t.request('POST', `/benchmarks/${byUser.body.id}:approve`, { token: admin });
  assert.ok(approved.status < 300, approved.text);
  const flavor = flavors[1]!;
  for (const id of [byAdmin.body.id as string, byUser.body.id as string]) {
    for (let i = 0; i < 6; i++) {
      const up = await t.request('POST', '/results', {
        token: admin,
        query: { benchmark_id: id, flavor_id: flavor.id, execution_datetime: `2024-02-0${i + 1}T00:00:00Z` },
        body: { machine: { cpu: { count: 2 ** i } }, result: { score: 100 - i } },
      });
      assert.is(up.status, 201, up.text);
    }
    // At once: no reconcile, no pass, no restart.
    const query: ResultListQuery = { benchmark_id: id, sort_by: '-json.result.score', filters: ['machine.cpu.count > 4'] };
    const plan = await metricPlan(fork(), new MetricTable(), query, { visible: true });
    assert.ok(plan?.sortPathId != null, 'the table sorts and filters');
    const res = await t.request('GET', '/results', { query: query as never });
    assert.equal(
      res.body.items.map((r: { json: { result: { score: number } } }) => r.json.result.score),
      [97, 96, 95],
    );
  }
});

test.run();
