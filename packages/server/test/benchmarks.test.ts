/**
 * Benchmarks: what only they have, their container image and tag and the JSON Schema of their
 * results. What every reviewed resource does (create, review, update, delete, lists, search and
 * sorting) is in catalogue-review.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Benchmark } from '../src/entities/index.ts';

let t: TestServer;
let alice: string; // a registered user
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'benchmarks');
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
});
test.after(async () => {
  await t.close();
});

const body = (image: string, tag = '1.0', extra: Record<string, unknown> = {}) => ({
  container_image: image,
  container_tag: tag,
  json_schema: { type: 'object', properties: { time: { type: 'number' } } },
  ...extra,
});

async function create(image: string, tag = '1.0', token = admin) {
  const res = await t.request('POST', '/benchmarks', { token, body: body(image, tag) });
  assert.is(res.status, 201, res.text);
  return res.body;
}

test('POST /benchmarks: images of any registry, {} and annotated schemas are accepted', async () => {
  for (const image of ['ubuntu', 'ghcr.io/org/img', 'registry.example.org:5000/a/b', 'localhost:5000/x_y', 'docker.io/library/c-ray.v2']) {
    const res = await t.request('POST', '/benchmarks', { token: alice, body: { ...body(image, 'A_1.0-rc'), json_schema: {} } });
    assert.is(res.status, 201, `${image}: ${res.text}`);
    assert.is(res.body.container_image, image);
  }
  const annotated = {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { score: { type: 'number', suggestToUser: true } },
  };
  const res = await t.request('POST', '/benchmarks', { token: alice, body: { ...body('annotated'), json_schema: annotated } });
  assert.is(res.status, 201, res.text);
  assert.equal(res.body.json_schema, annotated);
});

test('POST /benchmarks: 422 for invalid images, tags, URLs and JSON Schemas', async () => {
  const cases: [unknown, string, string][] = [
    [{ ...body('a'), json_schema: { type: 'x' } }, 'INVALID_JSON_SCHEMA', '/json_schema/type'],
    [{ ...body('a'), json_schema: { $schema: 'https://example.org/unknown' } }, 'INVALID_JSON_SCHEMA', '/json_schema/$schema'],
    [{ ...body('a'), json_schema: 'text' }, 'INVALID_BODY', '/json_schema'],
    [body('Upper/Case'), 'INVALID_BODY', '/container_image'],
    [body('a//b'), 'INVALID_BODY', '/container_image'],
    [body('https://ghcr.io/a'), 'INVALID_BODY', '/container_image'],
    [body(''), 'INVALID_BODY', '/container_image'],
    [body('a', '.bad'), 'INVALID_BODY', '/container_tag'],
    [body('a', 'x'.repeat(129)), 'INVALID_BODY', '/container_tag'],
    [body('a', '1', { url: 'ftp://example.org/a' }), 'INVALID_BODY', '/url'],
    [body('a', '1', { url: 'not a url' }), 'INVALID_BODY', '/url'],
  ];
  for (const [payload, code, path] of cases) {
    const res = await t.request('POST', '/benchmarks', { token: alice, body: payload });
    assertProblem(res, 422, code);
    assert.ok(
      res.body.errors.some((e: any) => e.path === path),
      `${JSON.stringify(payload)} → ${JSON.stringify(res.body.errors)}`,
    );
  }
  const count = await t.server.context.orm.em.fork().count(Benchmark, { container_image: 'a' });
  assert.is(count, 0, 'nothing stored');
});

test('POST /benchmarks: another tag of a taken image is another benchmark', async () => {
  await create('dup/img', '1.0', alice);
  assertProblem(await t.request('POST', '/benchmarks', { token: alice, body: body('dup/img', '1.0') }), 409, 'DUPLICATE');
  const other = await create('dup/img', '2.0', alice);
  assert.is(other.name, 'dup/img:2.0');
});

test('PUT /benchmarks/{id}: 422 INVALID_JSON_SCHEMA for an invalid schema; nothing changes', async () => {
  const a = await create('put/schema', '1');
  const res = await t.request('PUT', `/benchmarks/${a.id}`, {
    token: admin,
    body: { ...body('put/schema', '1'), json_schema: { type: 1 } },
  });
  assertProblem(res, 422, 'INVALID_JSON_SCHEMA');
  assert.equal((await t.request('GET', `/benchmarks/${a.id}`)).body, a);
});

test.run();
