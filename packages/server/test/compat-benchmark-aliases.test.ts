/**
 * Compatibility with the origin service's frontend (docs/decisions.md): benchmarks answer
 * `docker_image` and `docker_tag` beside SPEC.md's `container_image` and `container_tag`, wherever a
 * benchmark is shown (also embedded in results), and accept them as aliases in bodies, list filters
 * and sorts. Real server, real PostgreSQL, real OpenID provider.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, type Seeder, upload } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let admin: string;
let alice: string;

test.before(async () => {
  t = await startTestServer({}, 'compat_aliases');
  seed = await createSeeder(t);
  [admin, alice] = await Promise.all([t.admin('root'), t.user('alice')]);
});
test.after(async () => {
  await t.close();
});

const schema = { type: 'object', properties: { time: { type: 'number' } } };

/** A benchmark shows each alias with the value of its field. */
function assertAliases(b: any, image: string, tag: string): void {
  assert.equal(
    [b.container_image, b.docker_image, b.container_tag, b.docker_tag, b.name],
    [image, image, tag, tag, `${image}:${tag}`],
    JSON.stringify(b),
  );
}

async function created(image: string, tag: string, token = admin) {
  const res = await t.request('POST', '/benchmarks', { token, body: { container_image: image, container_tag: tag, json_schema: schema } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

// ---------------------------------------------------------------------------------------------
// Responses

test('GET /benchmarks, :search, /{id}: every benchmark carries docker_image and docker_tag (the frontend shows `undefined:undefined` without them)', async () => {
  const b = await created('ghcr.io/compat/shown', '1.0');
  assertAliases(b, 'ghcr.io/compat/shown', '1.0');
  assertAliases((await t.request('GET', `/benchmarks/${b.id}`)).body, 'ghcr.io/compat/shown', '1.0');
  const listed = (await t.request('GET', '/benchmarks', { query: { container_image: 'ghcr.io/compat/shown' } })).body.items;
  assert.is(listed.length, 1);
  assertAliases(listed[0], 'ghcr.io/compat/shown', '1.0');
  const found = (await t.request('GET', '/benchmarks:search', { query: { terms: 'compat/shown' } })).body.items;
  assert.is(found.length, 1);
  assertAliases(found[0], 'ghcr.io/compat/shown', '1.0');
});

test('GET /results, /results/{id}, POST /results, :export: embedded benchmarks carry the aliases, and follow an update', async () => {
  const benchmark = await created('ghcr.io/compat/embedded', '1.0');
  const site = await seed.site();
  const flavor = await seed.flavor(site.id);
  const posted = await upload(t, alice, { benchmark_id: benchmark.id, flavor_id: flavor.id }, { time: 1 });
  assert.is(posted.status, 201, posted.text);
  assertAliases(posted.body.benchmark, 'ghcr.io/compat/embedded', '1.0');
  const one = async () => (await t.request('GET', `/results/${posted.body.id}`)).body.benchmark;
  const listed = async () => (await t.request('GET', '/results', { query: { benchmark_id: benchmark.id } })).body.items[0].benchmark;
  assertAliases(await one(), 'ghcr.io/compat/embedded', '1.0');
  assertAliases(await listed(), 'ghcr.io/compat/embedded', '1.0');

  // The embedded text is remembered per row version: the aliases change with the row.
  const put = await t.request('PUT', `/benchmarks/${benchmark.id}`, {
    token: admin,
    body: { container_image: 'ghcr.io/compat/embedded', container_tag: '2.0', json_schema: schema },
  });
  assert.is(put.status, 200, put.text);
  assertAliases(await one(), 'ghcr.io/compat/embedded', '2.0');
  assertAliases(await listed(), 'ghcr.io/compat/embedded', '2.0');

  const exported = await t.request('GET', '/results:export', { query: { benchmark_id: benchmark.id } });
  assert.is(exported.status, 200, exported.text);
  assertAliases(JSON.parse(exported.text.trim()).benchmark, 'ghcr.io/compat/embedded', '2.0');
});

// ---------------------------------------------------------------------------------------------
// Bodies

test("POST /benchmarks: the frontend's body (docker_image, docker_tag) creates the benchmark under SPEC's names (not 422)", async () => {
  const res = await t.request('POST', '/benchmarks', {
    token: alice,
    body: {
      docker_image: 'ghcr.io/compat/frontend',
      docker_tag: 'v2.0',
      json_schema: schema,
      url: 'https://example.org/docs',
      description: 'from the frontend',
    },
  });
  assert.is(res.status, 201, res.text);
  assertAliases(res.body, 'ghcr.io/compat/frontend', 'v2.0');
  assert.is(res.body.status, 'on_review');
  const [stored] = await seed.sql<{ container_image: string; container_tag: string }>(
    'select container_image, container_tag from benchmark where id = ?',
    [res.body.id],
  );
  assert.equal(stored, { container_image: 'ghcr.io/compat/frontend', container_tag: 'v2.0' });
  // The alias names the same field: the same image and tag again is a duplicate.
  const again = await t.request('POST', '/benchmarks', {
    token: alice,
    body: { container_image: 'ghcr.io/compat/frontend', docker_tag: 'v2.0', json_schema: schema },
  });
  assertProblem(again, 409, 'DUPLICATE');
});

test('POST /benchmarks: both names with one value are accepted; with different values 422 INVALID_BODY naming both, nothing stored', async () => {
  const same = await t.request('POST', '/benchmarks', {
    token: alice,
    body: {
      container_image: 'ghcr.io/compat/both',
      docker_image: 'ghcr.io/compat/both',
      container_tag: '1',
      docker_tag: '1',
      json_schema: {},
    },
  });
  assert.is(same.status, 201, same.text);
  assertAliases(same.body, 'ghcr.io/compat/both', '1');

  const differ = await t.request('POST', '/benchmarks', {
    token: alice,
    body: {
      container_image: 'ghcr.io/compat/differ',
      docker_image: 'ghcr.io/compat/other',
      container_tag: '1',
      docker_tag: '2',
      json_schema: {},
    },
  });
  assertProblem(differ, 422, 'INVALID_BODY');
  assert.equal(
    differ.body.errors.map((e: any) => [e.in, e.path]),
    [
      ['body', '/docker_image'],
      ['body', '/docker_tag'],
    ],
  );
  assert.match(differ.body.errors[0].message, 'container_image');
  assert.match(differ.body.detail, 'container_image and docker_image');
  assert.match(differ.body.detail, 'container_tag and docker_tag');
  const stored = await seed.sql("select id from benchmark where container_image in ('ghcr.io/compat/differ', 'ghcr.io/compat/other')");
  assert.is(stored.length, 0);
});

test('POST /benchmarks: neither name of the image: one 422 error naming both names', async () => {
  const res = await t.request('POST', '/benchmarks', { token: alice, body: { container_tag: '1', json_schema: {} } });
  assertProblem(res, 422, 'INVALID_BODY');
  assert.equal(res.body.errors, [
    { in: 'body', path: '/container_image', message: "field 'container_image' or 'docker_image' is required" },
  ]);
  const noTag = await t.request('POST', '/benchmarks', { token: alice, body: { docker_image: 'ghcr.io/compat/notag', json_schema: {} } });
  assertProblem(noTag, 422, 'INVALID_BODY');
  assert.equal(noTag.body.errors, [{ in: 'body', path: '/container_tag', message: "field 'container_tag' or 'docker_tag' is required" }]);
  // The alias is checked as its field is.
  const bad = await t.request('POST', '/benchmarks', {
    token: alice,
    body: { docker_image: 'Not An Image', docker_tag: '1', json_schema: {} },
  });
  assertProblem(bad, 422, 'INVALID_BODY');
  assert.is(bad.body.errors[0].path, '/docker_image');
});

test('PUT /benchmarks/{id}: the aliases alone replace the image and tag; differing names 422, nothing changed', async () => {
  const b = await created('ghcr.io/compat/put', '1');
  const res = await t.request('PUT', `/benchmarks/${b.id}`, {
    token: admin,
    body: { docker_image: 'ghcr.io/compat/put-renamed', docker_tag: '1.1', json_schema: schema },
  });
  assert.is(res.status, 200, res.text);
  assertAliases(res.body, 'ghcr.io/compat/put-renamed', '1.1');

  const differ = await t.request('PUT', `/benchmarks/${b.id}`, {
    token: admin,
    body: { container_image: 'ghcr.io/compat/put-renamed', container_tag: '1.2', docker_tag: '1.3', json_schema: schema },
  });
  assertProblem(differ, 422, 'INVALID_BODY');
  assert.equal(
    differ.body.errors.map((e: any) => e.path),
    ['/docker_tag'],
  );
  assertAliases((await t.request('GET', `/benchmarks/${b.id}`)).body, 'ghcr.io/compat/put-renamed', '1.1');
});

// ---------------------------------------------------------------------------------------------
// Lists

test('GET /benchmarks: docker_image and docker_tag filter as their fields; both names differing 422 INVALID_QUERY naming them', async () => {
  const a = await created('ghcr.io/compat/filter', '1');
  const b = await created('ghcr.io/compat/filter', '2');
  await created('ghcr.io/compat/filter-other', '1');
  const ids = async (query: Record<string, string>) => {
    const res = await t.request('GET', '/benchmarks', { query });
    assert.is(res.status, 200, res.text);
    return res.body.items.map((x: any) => x.id);
  };
  assert.equal(await ids({ docker_image: 'ghcr.io/compat/filter' }), [a.id, b.id]);
  assert.equal(await ids({ docker_image: 'ghcr.io/compat/filter', docker_tag: '2' }), [b.id]);
  assert.equal(await ids({ container_image: 'ghcr.io/compat/filter', docker_tag: '1' }), [a.id]);
  assert.equal(await ids({ container_image: 'ghcr.io/compat/filter', docker_image: 'ghcr.io/compat/filter' }), [a.id, b.id]);

  const differ = await t.request('GET', '/benchmarks', { query: { container_image: 'ghcr.io/compat/filter', docker_image: 'x' } });
  assertProblem(differ, 422, 'INVALID_QUERY');
  assert.equal(
    differ.body.errors.map((e: any) => [e.in, e.path]),
    [['query', 'docker_image']],
  );
  assert.match(differ.body.detail, 'container_image and docker_image');
});

test('GET /benchmarks: sort_by accepts docker_image and docker_tag (the origin default was +docker_image)', async () => {
  const z = await created('ghcr.io/compat/sort-z', '1');
  const a2 = await created('ghcr.io/compat/sort-a', '2');
  const a1 = await created('ghcr.io/compat/sort-a', '1');
  const order = async (sort_by: string) => {
    const res = await t.request('GET', '/benchmarks:search', { query: { terms: 'compat/sort-', sort_by } });
    assert.is(res.status, 200, res.text);
    return res.body.items.map((x: any) => x.id);
  };
  assert.equal(await order('+docker_image,+docker_tag'), [a1.id, a2.id, z.id]);
  assert.equal(await order('-docker_image,-docker_tag'), [z.id, a2.id, a1.id]);
  assert.equal(await order('+docker_image,+docker_tag'), await order('+container_image,+container_tag'));
});

// ---------------------------------------------------------------------------------------------
// The description

test('GET /api-spec.json: docker_image and docker_tag are documented as deprecated, in responses, bodies and the list query', async () => {
  const doc = (await t.request('GET', '/api-spec.json')).body;
  const schemas = doc.components.schemas;
  for (const name of ['Benchmark', 'BenchmarkInput', 'BenchmarkUpdate']) {
    for (const alias of ['docker_image', 'docker_tag']) {
      assert.is(schemas[name].properties[alias].deprecated, true, `${name}.${alias}`);
    }
    assert.not.ok(schemas[name].properties.container_image.deprecated, `${name}.container_image is the primary name`);
  }
  assert.equal([...schemas.Benchmark.required].filter((f: string) => f.startsWith('docker_')).sort(), ['docker_image', 'docker_tag']);
  const params = doc.paths['/benchmarks'].get.parameters;
  for (const alias of ['docker_image', 'docker_tag']) {
    assert.is(params.find((p: any) => p.name === alias)?.schema.deprecated, true, alias);
  }
});

test.run();
