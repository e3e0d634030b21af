/**
 * Every input limit is refused with a clear 413 or 422 naming it, and the limits the contract
 * declares show in the OpenAPI document. docs/security.md lists them.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { problemDefect, seedCatalogue, type Catalogue } from './support/hardening.ts';
import { MAX_JSON_DEPTH } from '../src/http/limits.ts';

let t: TestServer;
let c: Catalogue;
let user: string;

test.before(async () => {
  t = await startTestServer({ bodyLimit: String(64 * 1024) }, 'limits');
  c = await seedCatalogue(t, await t.admin('limits-admin'));
  user = await t.user('limits-user');
});
test.after(async () => {
  await t.close();
});

function refused(res: { status: number; headers: Headers; text: string; body: any }, status: number, code: string, mention: RegExp): void {
  assert.is(res.status, status, res.text);
  assert.is(res.body.code, code, res.text);
  assert.is(problemDefect(res.status, res.headers.get('content-type'), res.text), null);
  assert.match(`${res.body.detail} ${JSON.stringify(res.body.errors ?? [])}`, mention);
}

const nested = (depth: number) => JSON.parse(`${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`);
const upload = (body: unknown, tags: string[] = []) =>
  t.request('POST', '/results', {
    token: user,
    query: { benchmark_id: c.benchmark, flavor_id: c.flavor, execution_datetime: '2024-05-01T12:00:00Z', tags_ids: tags },
    body,
  });

test(`JSON nesting: ${MAX_JSON_DEPTH} levels accepted, one more is 422 TOO_DEEP (10,000 too, without recursion)`, async () => {
  assert.is((await upload(nested(MAX_JSON_DEPTH))).status, 201);
  refused(await upload(nested(MAX_JSON_DEPTH + 1)), 422, 'TOO_DEEP', /64 levels/);
  const deep = '['.repeat(10_000) + ']'.repeat(10_000);
  refused(
    await t.request('POST', '/results', {
      token: user,
      query: { benchmark_id: c.benchmark, flavor_id: c.flavor, execution_datetime: '2024-05-01T12:00:00Z' },
      rawBody: `{"a":${deep}}`,
    }),
    422,
    'TOO_DEEP',
    /deeper/,
  );
  refused(
    await t.request('POST', '/benchmarks', { token: user, body: { container_image: 'a/b', container_tag: '1', json_schema: nested(200) } }),
    422,
    'TOO_DEEP',
    /deeper/,
  );
});

test('body size: over BODY_LIMIT is 413 BODY_TOO_LARGE', async () => {
  refused(await upload({ blob: 'x'.repeat(70 * 1024) }), 413, 'BODY_TOO_LARGE', /larger than 65536 bytes/);
});

test('tags per result: at most 20 (upload and replace)', async () => {
  const tags = Array.from({ length: 21 }, () => crypto.randomUUID());
  refused(await upload({}, tags), 422, 'INVALID_QUERY', /tags_ids.*(more than 20|fewer than 21|NOT have more than 20)/i);
  const id = (await upload({})).body.id;
  refused(await t.request('PUT', `/results/${id}/tags`, { token: user, body: { tags_ids: tags } }), 422, 'INVALID_BODY', /20/);
});

test('filters: at most 20, each at most 500 characters; sort_by at most 8 terms (1000 characters); search terms 20 × 200', async () => {
  refused(
    await t.request('GET', '/results', { query: { filters: Array.from({ length: 21 }, () => 'a == 1') } }),
    422,
    'INVALID_QUERY',
    /filters/,
  );
  refused(await t.request('GET', '/results', { query: { filters: `a == ${'x'.repeat(500)}` } }), 422, 'INVALID_QUERY', /filters.*500/);
  refused(
    await t.request('GET', '/results', { query: { sort_by: Array.from({ length: 9 }, (_, i) => `+json.k${i}`).join(',') } }),
    422,
    'INVALID_SORT',
    /at most 8/,
  );
  refused(await t.request('GET', '/sites', { query: { sort_by: `+${'x'.repeat(1000)}` } }), 422, 'INVALID_QUERY', /sort_by/);
  refused(
    await t.request('GET', '/results:search', { query: { terms: Array.from({ length: 21 }, () => 'x') } }),
    422,
    'INVALID_QUERY',
    /terms/,
  );
  refused(await t.request('GET', '/sites:search', { query: { terms: 'x'.repeat(201) } }), 422, 'INVALID_QUERY', /terms/);
  const path = Array.from({ length: 21 }, (_, i) => `k${i}`).join('.');
  refused(await t.request('GET', '/results', { query: { filters: `${path} == 1` } }), 422, 'INVALID_FILTER', /20 segments/);
  assert.is(
    (await t.request('GET', '/results', { query: { filters: Array.from({ length: 20 }, () => 'a == 1') } })).status,
    200,
    '20 filters are fine',
  );
});

test('pages: per_page 1..100, page 1..1,000,000', async () => {
  for (const [name, value] of [
    ['per_page', '101'],
    ['per_page', '0'],
    ['page', '0'],
    ['page', '1000001'],
    ['page', '1e309'],
  ] as const) {
    refused(await t.request('GET', '/sites', { query: { [name]: value } }), 422, 'INVALID_QUERY', new RegExp(name));
  }
  const last = await t.request('GET', '/sites', { query: { page: 1_000_000, per_page: 100 } });
  assert.equal([last.status, last.body.items], [200, []]);
});

test('the limits show in the OpenAPI document', async () => {
  const doc = (await t.request('GET', '/api-spec.json')).body;
  const parameter = (path: string, name: string) => doc.paths[path].get.parameters.find((p: { name: string }) => p.name === name);
  const param = (path: string, name: string) => parameter(path, name).schema;
  assert.is(param('/results', 'filters').maxItems, 20);
  assert.is(param('/results', 'filters').items.maxLength, 500);
  assert.is(param('/results', 'tags_ids').maxItems, 20);
  assert.is(param('/results', 'per_page').maximum, 100);
  assert.is(param('/results', 'page').maximum, 1_000_000);
  assert.is(param('/results', 'sort_by').maxLength, 1000);
  assert.match(parameter('/results', 'sort_by').description, /at most 8/);
  assert.is(param('/results:search', 'terms').maxItems, 20);
  assert.is(doc.paths['/results/{id}/tags'].put.requestBody.content['application/json'].schema.properties.tags_ids.maxItems, 20);
});

test.run();
