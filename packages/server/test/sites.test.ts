/** Sites: create, review (with their flavors), update, delete with cascade, lists, search and sorting. */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Flavor, Result, Site } from '../src/entities/index.ts';

let t: TestServer;
let alice: string;
let admin: string;
let benchmarkId: string;

test.before(async () => {
  t = await startTestServer({}, 'sites');
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
  const b = await t.request('POST', '/benchmarks', {
    token: admin,
    body: { container_image: 'site/bench', container_tag: '1', json_schema: {} },
  });
  benchmarkId = b.body.id;
});
test.after(async () => {
  await t.close();
});

async function create(name: string, token = admin, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/sites', { token, body: { name, address: `${name} street`, ...extra } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

async function addFlavor(siteId: string, name: string, token = admin) {
  const res = await t.request('POST', `/sites/${siteId}/flavors`, { token, body: { name } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

async function insertResult(siteId: string, flavorId: string): Promise<string> {
  const em = t.server.context.orm.em.fork();
  const id = randomUUID();
  em.create(Result, {
    id,
    benchmark_id: benchmarkId,
    site_id: siteId,
    flavor_id: flavorId,
    json: {},
    execution_datetime: new Date(),
    upload_datetime: new Date(),
    uploader_iss: t.issuer.issuer,
    uploader_sub: 'root',
  });
  await em.flush();
  return id;
}

test('POST /sites: a user submits a site on review; names are trimmed; read back by id', async () => {
  const res = await t.request('POST', '/sites', { token: alice, body: { name: '  CESGA ', address: 'Santiago', description: 'Galicia' } });
  assert.is(res.status, 201, res.text);
  assert.equal(Object.keys(res.body).sort(), ['address', 'description', 'id', 'name', 'status', 'upload_datetime']);
  assert.is(res.body.name, 'CESGA');
  assert.is(res.body.status, 'on_review');
  assert.equal((await t.request('GET', `/sites/${res.body.id}`)).body, res.body);
  const stored = await t.server.context.orm.em.fork().findOneOrFail(Site, { id: res.body.id });
  assert.is(stored.uploader_sub, 'alice');
  const byAdmin = await create('IFCA');
  assert.is(byAdmin.status, 'approved');
  assert.is(byAdmin.description, null);
});

test('POST /sites: 401, 403 unregistered, 422 for invalid bodies, 409 for a taken name (also racing)', async () => {
  assertProblem(await t.request('POST', '/sites', { body: { name: 'x', address: 'y' } }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('POST', '/sites', { token: await t.token('x'), body: { name: 'x', address: 'y' } }), 403, 'NOT_REGISTERED');
  for (const body of [
    { name: 'x' },
    { name: 'x', address: 3 },
    { name: 'x', address: 'y', extra: true },
    { name: '   ', address: 'y' },
    { name: '', address: 'y' },
    { name: 'n'.repeat(201), address: 'y' },
    { name: 'x', address: 'a'.repeat(501) },
  ]) {
    assertProblem(await t.request('POST', '/sites', { token: alice, body }), 422, 'INVALID_BODY');
  }
  await create('Taken');
  const dup = await t.request('POST', '/sites', { token: alice, body: { name: 'Taken', address: 'elsewhere' } });
  assertProblem(dup, 409, 'DUPLICATE');
  assert.is(dup.body.detail, 'Site Taken already exists.');
  const race = await Promise.all([0, 1].map(() => t.request('POST', '/sites', { token: alice, body: { name: 'Racing', address: 'a' } })));
  assert.equal(race.map((r) => r.status).sort(), [201, 409]);
  assert.is(await t.server.context.orm.em.fork().count(Site, { name: 'Racing' }), 1);
});

test('GET /sites/{id}: 404 for unknown and malformed ids', async () => {
  assertProblem(await t.request('GET', `/sites/${randomUUID()}`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', '/sites/not-a-uuid'), 404, 'NOT_FOUND');
});

test('review: a site on review is listed only with status=on_review; approve twice is 409', async () => {
  const s = await create('Pending Site', alice);
  const ids = async (status?: string) =>
    (await t.request('GET', '/sites', { query: { name: 'Pending Site', status } })).body.items.map((i: any) => i.id);
  assert.equal(await ids(), []);
  assert.equal(await ids('on_review'), [s.id]);
  assert.is((await t.request('POST', `/sites/${s.id}:approve`, { token: admin })).status, 204);
  assert.equal(await ids(), [s.id]);
  assertProblem(await t.request('POST', `/sites/${s.id}:approve`, { token: admin }), 409, 'ALREADY_APPROVED');
  assertProblem(await t.request('POST', `/sites/${s.id}:reject`, { token: admin }), 409, 'ALREADY_APPROVED');
  for (const verb of ['approve', 'reject']) {
    assertProblem(await t.request('POST', `/sites/${s.id}:${verb}`), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('POST', `/sites/${s.id}:${verb}`, { token: alice }), 403, 'NOT_ADMIN');
    assertProblem(await t.request('POST', `/sites/${randomUUID()}:${verb}`, { token: admin }), 404, 'NOT_FOUND');
    assertProblem(await t.request('POST', `/sites/bad:${verb}`, { token: admin }), 404, 'NOT_FOUND');
  }
});

test('POST /sites/{id}:reject deletes the site and its flavors on review; an approved flavor blocks it', async () => {
  const s = await create('Rejected Site', alice);
  const f = await addFlavor(s.id, 'small', alice);
  assert.is((await t.request('POST', `/sites/${s.id}:reject`, { token: admin })).status, 204);
  assertProblem(await t.request('GET', `/sites/${s.id}`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', `/flavors/${f.id}`), 404, 'NOT_FOUND');

  const kept = await create('Kept Site', alice);
  await addFlavor(kept.id, 'approved-flavor'); // by an admin: approved at once
  await addFlavor(kept.id, 'pending-flavor', alice);
  const refused = await t.request('POST', `/sites/${kept.id}:reject`, { token: admin });
  assertProblem(refused, 409, 'REFERENCED');
  assert.is(refused.body.flavors, 1);
  assert.is(refused.body.count, 0);
  assert.is(await t.server.context.orm.em.fork().count(Flavor, { site_id: kept.id }), 2, 'nothing deleted');
});

test('PUT /sites/{id}: admin replaces the fields (200); 409 on a taken name; 401, 403, 404, 422', async () => {
  const s = await create('Before', alice, { description: 'old' });
  const res = await t.request('PUT', `/sites/${s.id}`, { token: admin, body: { name: 'After', address: 'New address' } });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { ...s, name: 'After', address: 'New address', description: null });
  assert.equal((await t.request('GET', `/sites/${s.id}`)).body, res.body);
  await create('Occupied');
  const clash = await t.request('PUT', `/sites/${s.id}`, { token: admin, body: { name: 'Occupied', address: 'x' } });
  assertProblem(clash, 409, 'DUPLICATE');
  assert.is((await t.request('GET', `/sites/${s.id}`)).body.name, 'After');
  const body = { name: 'Z', address: 'z' };
  assertProblem(await t.request('PUT', `/sites/${s.id}`, { body }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('PUT', `/sites/${s.id}`, { token: alice, body }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('PUT', `/sites/${randomUUID()}`, { token: admin, body }), 404, 'NOT_FOUND');
  assertProblem(await t.request('PUT', `/sites/${s.id}`, { token: admin, body: { name: 'Z' } }), 422, 'INVALID_BODY');
  // Read-only fields may be echoed as read, not changed (compat-read-only.test.ts has the rest).
  assertProblem(await t.request('PUT', `/sites/${s.id}`, { token: admin, body: { ...body, id: randomUUID() } }), 422, 'INVALID_BODY');
  assertProblem(await t.request('PUT', `/sites/${s.id}`, { token: admin, body: { ...body, flavors: [] } }), 422, 'INVALID_BODY');
});

test('DELETE /sites/{id}: flavors and results block it (409 with counts); cascade deletes them all', async () => {
  const s = await create('Busy Site');
  const f1 = await addFlavor(s.id, 'f1');
  const f2 = await addFlavor(s.id, 'f2');
  const refusedFlavors = await t.request('DELETE', `/sites/${s.id}`, { token: admin });
  assertProblem(refusedFlavors, 409, 'REFERENCED');
  assert.equal([refusedFlavors.body.count, refusedFlavors.body.flavors], [0, 2]);
  const results = [await insertResult(s.id, f1.id), await insertResult(s.id, f1.id), await insertResult(s.id, f2.id)];
  const refused = await t.request('DELETE', `/sites/${s.id}`, { token: admin });
  assertProblem(refused, 409, 'REFERENCED');
  assert.equal([refused.body.count, refused.body.flavors], [3, 2]);
  assert.match(refused.body.detail, 'Site Busy Site is referenced by 3 results and 2 flavors');

  assert.is((await t.request('DELETE', `/sites/${s.id}`, { token: admin, query: { cascade: true } })).status, 204);
  assertProblem(await t.request('GET', `/sites/${s.id}`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', `/flavors/${f1.id}`), 404, 'NOT_FOUND');
  const em = t.server.context.orm.em.fork();
  assert.is(await em.count(Result, { id: { $in: results } }), 0);
  assert.is(await em.count(Flavor, { site_id: s.id }), 0);
});

test('DELETE /sites/{id}: an empty site goes; 401, 403, 404', async () => {
  const s = await create('Empty Site', alice);
  assertProblem(await t.request('DELETE', `/sites/${s.id}`), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('DELETE', `/sites/${s.id}`, { token: alice }), 403, 'NOT_ADMIN');
  assert.is((await t.request('DELETE', `/sites/${s.id}`, { token: admin })).status, 204);
  assertProblem(await t.request('DELETE', `/sites/${s.id}`, { token: admin }), 404, 'NOT_FOUND');
  assertProblem(await t.request('DELETE', '/sites/xyz', { token: admin }), 404, 'NOT_FOUND');
});

test('GET /sites: exact name and address filters, upload bounds; :search over name, address, description', async () => {
  const a = await create('Filter One', admin, { address: 'Main Road 1', description: 'Cloud in Spain' });
  const b = await create('Filter Two', admin, { address: 'Main Road 1', description: 'cloud in Czechia' });
  const ids = async (path: string, query: Record<string, string | string[]>) =>
    (await t.request('GET', path, { query })).body.items.map((i: any) => i.id);
  assert.equal(await ids('/sites', { address: 'Main Road 1' }), [a.id, b.id]);
  assert.equal(await ids('/sites', { address: 'Main Road 1', name: 'Filter Two' }), [b.id]);
  assert.equal(await ids('/sites', { name: 'filter two' }), [], 'exact and case-sensitive');
  assert.equal(await ids('/sites', { address: 'Main Road 1', upload_after: `${a.upload_datetime}Z` }), [b.id]);
  assert.equal(await ids('/sites', { address: 'Main Road 1', upload_before: '2999-01-01' }), [a.id, b.id]);
  assert.equal(await ids('/sites:search', { terms: ['CLOUD', 'main road'] }), [a.id, b.id]);
  assert.equal(await ids('/sites:search', { terms: ['cloud', 'spain'] }), [a.id]);
  assert.equal(await ids('/sites:search', { terms: ['two', 'Czech'] }), [b.id]);
  assert.equal(await ids('/sites:search', { terms: ['filter', 'nowhere'] }), []);
});

test('GET /sites: pagination and sort with ties broken by id', async () => {
  const made = [];
  for (const [name, address] of [
    ['pg-c', 'addr-1'],
    ['pg-a', 'addr-2'],
    ['pg-b', 'addr-1'],
    ['pg-d', 'addr-2'],
    ['pg-e', 'addr-1'],
  ]) {
    made.push(await create(name!, admin, { address, description: 'pagination set' }));
  }
  const get = async (query: Record<string, string | number>) =>
    (await t.request('GET', '/sites:search', { query: { terms: 'pagination set', ...query } })).body;
  assert.equal(
    (await get({})).items.map((s: any) => s.name),
    ['pg-a', 'pg-b', 'pg-c', 'pg-d', 'pg-e'],
  );
  assert.equal(
    (await get({ sort_by: '-address,+name' })).items.map((s: any) => s.name),
    ['pg-a', 'pg-d', 'pg-b', 'pg-c', 'pg-e'],
  );
  const byId = (list: any[]) => [...list].sort((x, y) => (x.id < y.id ? -1 : 1)).map((s) => s.name);
  const addr1 = made.filter((s) => s.address === 'addr-1');
  assert.equal(
    (await get({ sort_by: '+address' })).items.slice(0, 3).map((s: any) => s.name),
    byId(addr1),
  );
  const p2 = await get({ per_page: 2, page: 2, sort_by: '-name' });
  assert.equal(
    p2.items.map((s: any) => s.name),
    ['pg-c', 'pg-b'],
  );
  assert.equal([p2.total, p2.pages, p2.has_next, p2.has_prev, p2.next_num, p2.prev_num], [5, 3, true, true, 3, 1]);
  const p3 = await get({ per_page: 2, page: 3, sort_by: '-name' });
  assert.equal([p3.items.length, p3.has_next, p3.next_num], [1, false, null]);
  const past = await get({ per_page: 2, page: 9 });
  assert.equal([past.items.length, past.total], [0, 5]);
});

test('GET /sites and :search: 422 for unknown parameters, bad sort and per_page', async () => {
  for (const [path, query, code] of [
    ['/sites', { nam: 'x' }, 'INVALID_QUERY'],
    ['/sites', { sort_by: '+container_image' }, 'INVALID_SORT'],
    ['/sites', { per_page: 0 }, 'INVALID_QUERY'],
    ['/sites', { per_page: 101 }, 'INVALID_QUERY'],
    ['/sites:search', { name: 'x' }, 'INVALID_QUERY'],
    ['/sites:search', { sort_by: '*name' }, 'INVALID_SORT'],
    ['/sites:search', { upload_after: '2024-13-45' }, 'INVALID_QUERY'],
  ] as const) {
    assertProblem(await t.request('GET', path, { query }), 422, code);
  }
});

test.run();
