/**
 * Compatibility with the origin service's frontend (docs/decisions.md): an update (PUT) body may
 * carry the item's read-only fields as a GET showed them (the frontend's site and flavor editors send
 * `id` and `upload_datetime` back). Equal to the stored values they are ignored; different, 422
 * naming the field, and nothing changes. Unknown fields stay refused. Real server, real PostgreSQL.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';

let t: TestServer;
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'compat_read_only');
  admin = await t.admin('root');
});
test.after(async () => {
  await t.close();
});

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}-${randomUUID().slice(0, 6)}`;

async function post(path: string, body: unknown, token = admin) {
  const res = await t.request('POST', path, { token, body });
  assert.is(res.status, 201, res.text);
  return res.body;
}

/** One item of each kind, its path, and an edit of one editable field. */
async function items() {
  const site = await post('/sites', { name: unique('site'), address: 'Here 1', description: 'a site' });
  const flavor = await post(`/sites/${site.id}/flavors`, {
    name: unique('flavor'),
    description: '4 vCPU',
    price_per_hour: 0.5,
    currency: 'EUR',
  });
  const benchmark = await post('/benchmarks', { container_image: `ghcr.io/compat/${unique('ro')}`, container_tag: '1', json_schema: {} });
  const tag = await post('/tags', { name: unique('tag'), description: 'a tag' });
  return [
    { kind: 'site', path: `/sites/${site.id}`, item: site },
    { kind: 'flavor', path: `/flavors/${flavor.id}`, item: flavor },
    { kind: 'benchmark', path: `/benchmarks/${benchmark.id}`, item: benchmark },
    { kind: 'tag', path: `/tags/${tag.id}`, item: tag },
  ];
}

const get = async (path: string) => (await t.request('GET', path)).body;
const put = (path: string, body: unknown) => t.request('PUT', path, { token: admin, body });

test("PUT /sites/{id}: the frontend's site editor body (id and upload_datetime echoed) updates the site (not 422 unknown field 'id')", async () => {
  const site = await post('/sites', { name: unique('editor'), address: 'Old street 1' });
  const res = await put(`/sites/${site.id}`, {
    name: site.name,
    description: 'edited in the site editor',
    address: 'New street 2',
    id: site.id,
    upload_datetime: site.upload_datetime,
  });
  assert.is(res.status, 200, res.text);
  assert.equal([res.body.address, res.body.description], ['New street 2', 'edited in the site editor']);
  assert.equal(await get(`/sites/${site.id}`), res.body);
  assert.is(res.body.upload_datetime, site.upload_datetime, 'read-only fields are never stored');
});

test("PUT /flavors/{id}: the frontend's flavor editor body (id and upload_datetime echoed) updates the flavor", async () => {
  const site = await post('/sites', { name: unique('flavor-site'), address: 'x' });
  const flavor = await post(`/sites/${site.id}/flavors`, { name: 'small' });
  const res = await put(`/flavors/${flavor.id}`, { name: 'small-renamed', id: flavor.id, upload_datetime: flavor.upload_datetime });
  assert.is(res.status, 200, res.text);
  assert.equal([res.body.name, res.body.site_id], ['small-renamed', site.id]);
});

test('PUT /{benchmarks,sites,flavors,tags}/{id}: the whole GET answer sent back with an edit is accepted (200)', async () => {
  for (const { kind, path } of await items()) {
    const shown = await get(path);
    const res = await put(path, { ...shown, description: `edited ${kind}` });
    assert.is(res.status, 200, `${kind}: ${res.text}`);
    assert.is(res.body.description, `edited ${kind}`);
    const { description: _after, ...rest } = res.body;
    const { description: _before, ...was } = shown;
    assert.equal(rest, was, `${kind}: nothing else changed`);
  }
});

test('PUT: each read-only field that differs from the stored value is 422 INVALID_BODY naming it; nothing is stored', async () => {
  const other = randomUUID();
  const differing: Record<string, Record<string, unknown>> = {
    site: { id: other, status: 'on_review', upload_datetime: '2020-01-01T00:00:00.000' },
    flavor: { id: other, site_id: other, status: 'on_review', upload_datetime: '2020-01-01T00:00:00.000' },
    benchmark: { id: other, name: 'ghcr.io/compat/other:1', status: 'on_review', upload_datetime: '2020-01-01T00:00:00.000' },
    tag: { id: other, status: 'on_review' },
  };
  for (const { kind, path } of await items()) {
    const shown = await get(path);
    for (const [field, value] of Object.entries(differing[kind]!)) {
      const res = await put(path, { ...shown, description: 'must not be stored', [field]: value });
      assertProblem(res, 422, 'INVALID_BODY');
      assert.equal(
        res.body.errors.map((e: any) => [e.in, e.path]),
        [['body', `/${field}`]],
        `${kind}.${field}`,
      );
      assert.match(res.body.errors[0].message, 'read-only');
    }
    const all = await put(path, { ...shown, ...differing[kind] });
    assertProblem(all, 422, 'INVALID_BODY');
    assert.equal(
      all.body.errors.map((e: any) => e.path),
      Object.keys(differing[kind]!).map((f) => `/${f}`),
      `${kind}: every differing field is named`,
    );
    assert.equal(await get(path), shown, `${kind}: unchanged`);
  }
});

test('PUT: upload_datetime is compared as an instant (a zone designator or an offset is fine), an id in any case', async () => {
  const site = await post('/sites', { name: unique('instant'), address: 'x' });
  const at = site.upload_datetime as string;
  const utc = new Date(`${at}Z`);
  const plusTwo = new Date(utc.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
  for (const upload_datetime of [at, `${at}Z`, utc.toISOString(), plusTwo, `${at}000`]) {
    const res = await put(`/sites/${site.id}`, { name: site.name, address: 'x', upload_datetime, id: site.id.toUpperCase() });
    assert.is(res.status, 200, `${upload_datetime}: ${res.text}`);
  }
  for (const upload_datetime of [new Date(utc.getTime() + 1).toISOString(), 'yesterday', `${at}+02:00`]) {
    const res = await put(`/sites/${site.id}`, { name: site.name, address: 'x', upload_datetime });
    assertProblem(res, 422, 'INVALID_BODY');
    assert.is(res.body.errors[0].path, '/upload_datetime', upload_datetime);
  }
});

test('PUT: unknown fields stay refused (422 naming them), read-only fields of another kind too', async () => {
  const [site, flavor, , tag] = await items();
  for (const [path, field] of [
    [site!.path, 'flavors'],
    [site!.path, 'site_id'],
    [flavor!.path, 'uploader'],
    [tag!.path, 'upload_datetime'],
  ] as const) {
    const shown = await get(path);
    const res = await put(path, { ...shown, [field]: shown.id });
    assertProblem(res, 422, 'INVALID_BODY');
    assert.equal(res.body.errors[0].path, `/${field}`);
    assert.match(res.body.errors[0].message, `unknown field '${field}'`);
  }
});

test('POST: read-only fields are not accepted on creation (422 unknown field)', async () => {
  const res = await t.request('POST', '/sites', { token: admin, body: { name: unique('create'), address: 'x', id: randomUUID() } });
  assertProblem(res, 422, 'INVALID_BODY');
  assert.match(res.body.errors[0].message, "unknown field 'id'");
});

test('PUT: a read-only field of the wrong type is 422 before the item is looked up', async () => {
  const res = await put(`/tags/${randomUUID()}`, { name: 'x', id: 'not-a-uuid' });
  assertProblem(res, 422, 'INVALID_BODY');
  assert.equal(
    res.body.errors.map((e: any) => [e.path, e.message]),
    [['/id', 'must be a UUID']],
  );
  assertProblem(await put(`/tags/${randomUUID()}`, { name: 'x', id: randomUUID() }), 404, 'NOT_FOUND');
});

test.run();
