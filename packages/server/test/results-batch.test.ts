/**
 * POST /results:batch: many results in one request, all or none, every refused item reported with
 * its index. Real server, real PostgreSQL, real tokens.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let ids: {
  strict: string;
  open: string;
  pending: string;
  site: string;
  flavor: string;
  flavor2: string;
  tagA: string;
  tagB: string;
  pendingTag: string;
};

const STRICT = { type: 'object', required: ['score'], properties: { score: { type: 'number', minimum: 0 } } };
const at = '2024-05-01T12:00:00Z';

test.before(async () => {
  t = await startTestServer({}, 'batch');
  seed = await createSeeder(t);
  alice = await t.user('alice');
  const site = (await seed.site()).id;
  ids = {
    strict: (await seed.benchmark({ schema: STRICT })).id,
    open: (await seed.benchmark({ schema: {} })).id,
    pending: (await seed.benchmark({ status: 'on_review' })).id,
    site,
    flavor: (await seed.flavor(site)).id,
    flavor2: (await seed.flavor(site)).id,
    tagA: (await seed.tag({ name: 'batch-a' })).id,
    tagB: (await seed.tag({ name: 'batch-b' })).id,
    pendingTag: (await seed.tag({ status: 'on_review' })).id,
  };
});

test.after(async () => {
  await t.close();
});

const batch = (items: unknown[], token: string | undefined = alice) => t.request('POST', '/results:batch', { token, body: { items } });
const stored = async (benchmark: string) =>
  (await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ?', [benchmark]))[0]!.n;

test('stores every item, in order, with its tags, over several benchmarks and flavors', async () => {
  const items = [
    {
      benchmark_id: ids.strict,
      flavor_id: ids.flavor,
      execution_datetime: at,
      tags_ids: [ids.tagB, ids.tagA, ids.tagA],
      json: { score: 1 },
    },
    { benchmark_id: ids.open, flavor_id: ids.flavor2, execution_datetime: '2024-05-02T12:00:00+02:00', json: { anything: ['goes'] } },
    { benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: at, tags_ids: [ids.tagA, ids.tagB], json: { score: 3.5 } },
  ];
  const res = await batch(items);
  assert.is(res.status, 201, res.text);
  assert.is(res.body.ids.length, 3);
  for (const [i, id] of (res.body.ids as string[]).entries()) {
    const one = await t.request('GET', `/results/${id}`);
    assert.is(one.status, 200);
    assert.equal(one.body.json, items[i]!.json);
    assert.is(one.body.benchmark.id, items[i]!.benchmark_id);
    assert.is(one.body.flavor.id, items[i]!.flavor_id);
    assert.is(one.body.site.id, ids.site);
    assert.equal(
      one.body.tags.map((x: { name: string }) => x.name),
      i === 1 ? [] : ['batch-a', 'batch-b'],
    );
  }
  const second = await t.request('GET', `/results/${res.body.ids[1]}`);
  assert.is(second.body.execution_datetime, '2024-05-02T10:00:00.000');
});

test('all or none: every refused item is reported with its index and field; nothing is stored', async () => {
  const before = await stored(ids.strict);
  const res = await batch([
    { benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: at, json: { score: 1 } },
    { benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: at, json: { score: -1 } },
    { benchmark_id: ids.strict, flavor_id: crypto.randomUUID(), execution_datetime: at, json: { score: 1 } },
    { benchmark_id: ids.pending, flavor_id: ids.flavor, execution_datetime: at, json: {} },
    { benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: at, tags_ids: [ids.pendingTag], json: { score: 1 } },
    { benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: '2999-01-01T00:00:00Z', json: { score: 1 } },
    { benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: at, json: { score: 'x\u0000' } },
  ]);
  expectProblem(res, 422, 'BATCH_REFUSED');
  assert.match(res.body.detail, '6 of 7 results were refused; nothing was stored.');
  const paths = res.body.errors.map((e: { path: string }) => e.path);
  assert.ok(paths.includes('/items/1/json/score'), paths.join(' '));
  assert.ok(paths.includes('/items/2/flavor_id'), paths.join(' '));
  assert.ok(paths.includes('/items/3/benchmark_id'), paths.join(' '));
  assert.ok(paths.includes('/items/4/tags_ids'), paths.join(' '));
  assert.ok(paths.includes('/items/5/execution_datetime'), paths.join(' '));
  assert.ok(paths.includes('/items/6/json/score'), paths.join(' '));
  assert.not.ok(
    paths.some((p: string) => p.startsWith('/items/0/')),
    'the good item is not refused',
  );
  assert.ok(res.body.errors.every((e: { message: string; path: string }) => e.message.startsWith(`item ${e.path.split('/')[2]}: `)));
  assert.is(await stored(ids.strict), before, 'nothing stored');
});

test('404 when every refused item names something unknown', async () => {
  const res = await batch([
    { benchmark_id: crypto.randomUUID(), flavor_id: ids.flavor, execution_datetime: at, json: {} },
    { benchmark_id: ids.open, flavor_id: ids.flavor, execution_datetime: at, tags_ids: [crypto.randomUUID()], json: {} },
  ]);
  expectProblem(res, 404, 'BATCH_REFUSED');
  assert.equal(
    res.body.errors.map((e: { path: string }) => e.path),
    ['/items/0/benchmark_id', '/items/1/tags_ids'],
  );
});

test('the body: 1 to 500 items, nothing else; a token and a registration are needed', async () => {
  const one = { benchmark_id: ids.open, flavor_id: ids.flavor, execution_datetime: at, json: {} };
  expectProblem(await batch([]), 422, 'INVALID_BODY');
  expectProblem(await batch(Array.from({ length: 501 }, () => one)), 422, 'INVALID_BODY');
  expectProblem(await t.request('POST', '/results:batch', { token: alice, body: { items: [one], extra: 1 } }), 422, 'INVALID_BODY');
  expectProblem(await batch([{ ...one, json: [1] }]), 422, 'INVALID_BODY');
  expectProblem(await t.request('POST', '/results:batch', { body: { items: [one] } }), 401, 'MISSING_TOKEN');
  expectProblem(await batch([one], await t.token('stranger')), 403, 'NOT_REGISTERED');
  const full = await batch(Array.from({ length: 500 }, () => one));
  assert.is(full.status, 201, full.text);
  assert.is(new Set(full.body.ids).size, 500);
});

test('each refused item is placed under the field its error names: a site through flavor_id, a schema that does not compile', async () => {
  const s = (await seed.site()).id;
  const f = (await seed.flavor(s)).id;
  const broken = (await seed.benchmark({ schema: {} })).id;
  const item = { benchmark_id: ids.open, flavor_id: f, execution_datetime: at, json: {} };
  const elsewhere = { ...item, flavor_id: ids.flavor };
  assert.is((await batch([item, elsewhere])).status, 201, 'remembered');

  // Changed with plain SQL, as another server process would.
  await seed.sql("update site set status = 'on_review' where id = ?", [s]);
  await seed.sql('update benchmark set json_schema = ? where id = ?', [JSON.stringify({ type: 12 }), broken]);
  const refused = await batch([elsewhere, item]);
  expectProblem(refused, 422, 'BATCH_REFUSED');
  assert.equal(refused.body.errors, [
    { in: 'body', path: '/items/1/flavor_id', message: `item 1: Site ${s} is not approved yet: results need approved items.` },
  ]);
  const uncompiled = await batch([elsewhere, { ...elsewhere, benchmark_id: broken }]);
  expectProblem(uncompiled, 422, 'BATCH_REFUSED');
  assert.equal(
    uncompiled.body.errors.map((e: { in: string; path: string }) => [e.in, e.path]),
    [['body', '/items/1/benchmark_id']],
  );
  assert.match(uncompiled.body.errors[0].message, `item 1: The json_schema of benchmark ${broken} does not compile`);

  await seed.sql("update site set status = 'approved' where id = ?", [s]);
  assert.is((await batch([item])).status, 201, 'remembered again');
  await seed.sql('delete from result where flavor_id = ?', [f]);
  await seed.sql('delete from flavor where id = ?', [f]);
  await seed.sql('delete from site where id = ?', [s]);
  const gone = await batch([elsewhere, item]);
  expectProblem(gone, 404, 'BATCH_REFUSED');
  assert.equal(gone.body.errors, [{ in: 'body', path: '/items/1/flavor_id', message: `item 1: Flavor ${f} was not found.` }]);
});

test('checks the catalogue as it is now, also after changes made behind the server', async () => {
  const item = { benchmark_id: ids.strict, flavor_id: ids.flavor2, execution_datetime: at, tags_ids: [ids.tagA], json: { score: 1 } };
  assert.is((await batch([item])).status, 201);
  await seed.sql('update benchmark set json_schema = ? where id = ?', [JSON.stringify({ type: 'object', required: ['time'] }), ids.strict]);
  expectProblem(await batch([item]), 422, 'BATCH_REFUSED');
  assert.is((await batch([{ ...item, json: { time: 2 } }])).status, 201, 'validated against the new schema');
  await seed.sql("update tag set status = 'on_review' where id = ?", [ids.tagA]);
  const refused = await batch([{ ...item, json: { time: 3 } }]);
  expectProblem(refused, 422, 'BATCH_REFUSED');
  assert.equal(
    refused.body.errors.map((e: { path: string }) => e.path),
    ['/items/0/tags_ids'],
  );
  await seed.sql("update tag set status = 'approved' where id = ?", [ids.tagA]);
  await seed.sql('update benchmark set json_schema = ? where id = ?', [JSON.stringify(STRICT), ids.strict]);
});

test.run();
