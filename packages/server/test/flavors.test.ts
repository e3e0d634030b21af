/** Flavors: created under a site, reviewed, updated, deleted with cascade; lists and search per site. */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Flavor, Result } from '../src/entities/index.ts';

let t: TestServer;
let alice: string;
let admin: string;
let site: any; // approved
let pendingSite: any; // on review
let benchmarkId: string;

test.before(async () => {
  t = await startTestServer({}, 'flavors');
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
  site = (await t.request('POST', '/sites', { token: admin, body: { name: 'Main', address: 'a' } })).body;
  pendingSite = (await t.request('POST', '/sites', { token: alice, body: { name: 'Pending', address: 'b' } })).body;
  benchmarkId = (
    await t.request('POST', '/benchmarks', { token: admin, body: { container_image: 'f/b', container_tag: '1', json_schema: {} } })
  ).body.id;
});
test.after(async () => {
  await t.close();
});

async function create(name: string, token = admin, siteId = site.id, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', `/sites/${siteId}/flavors`, { token, body: { name, ...extra } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

async function insertResult(flavor: any): Promise<string> {
  const em = t.server.context.orm.em.fork();
  const id = randomUUID();
  em.create(Result, {
    id,
    benchmark_id: benchmarkId,
    site_id: flavor.site_id,
    flavor_id: flavor.id,
    json: {},
    execution_datetime: new Date(),
    upload_datetime: new Date(),
    uploader_iss: t.issuer.issuer,
    uploader_sub: 'root',
  });
  await em.flush();
  return id;
}

test('POST /sites/{id}/flavors: a user adds a flavor on review carrying site_id; readable by id and with its site', async () => {
  const res = await t.request('POST', `/sites/${site.id}/flavors`, { token: alice, body: { name: ' m1.small ', description: '1 vCPU' } });
  assert.is(res.status, 201, res.text);
  assert.equal(Object.keys(res.body).sort(), [
    'currency',
    'description',
    'id',
    'name',
    'price_per_hour',
    'site_id',
    'status',
    'upload_datetime',
  ]);
  assert.is(res.body.site_id, site.id);
  assert.is(res.body.name, 'm1.small');
  assert.is(res.body.status, 'on_review');
  assert.equal((await t.request('GET', `/flavors/${res.body.id}`)).body, res.body);
  const owner = await t.request('GET', `/flavors/${res.body.id}/site`);
  assert.is(owner.status, 200);
  assert.equal(owner.body, site);
  const stored = await t.server.context.orm.em.fork().findOneOrFail(Flavor, { id: res.body.id });
  assert.is(stored.uploader_sub, 'alice');
  assert.is((await create('by-admin')).status, 'approved');
});

test('POST /sites/{id}/flavors: allowed on a site on review; 404 for an unknown or malformed site', async () => {
  const f = await create('on-pending-site', alice, pendingSite.id);
  assert.is(f.site_id, pendingSite.id);
  assertProblem(await t.request('POST', `/sites/${randomUUID()}/flavors`, { token: alice, body: { name: 'x' } }), 404, 'NOT_FOUND');
  assertProblem(await t.request('POST', '/sites/nope/flavors', { token: alice, body: { name: 'x' } }), 404, 'NOT_FOUND');
});

test('POST /sites/{id}/flavors: 401, 403, 422; a name is unique within its site only (409, also racing)', async () => {
  assertProblem(await t.request('POST', `/sites/${site.id}/flavors`, { body: { name: 'x' } }), 401, 'MISSING_TOKEN');
  assertProblem(
    await t.request('POST', `/sites/${site.id}/flavors`, { token: await t.token('x'), body: { name: 'x' } }),
    403,
    'NOT_REGISTERED',
  );
  for (const body of [{}, { name: 3 }, { name: '  ' }, { name: 'x', site_id: site.id }, { name: 'x', description: 5 }]) {
    assertProblem(await t.request('POST', `/sites/${site.id}/flavors`, { token: alice, body }), 422, 'INVALID_BODY');
  }
  await create('shared-name');
  const dup = await t.request('POST', `/sites/${site.id}/flavors`, { token: alice, body: { name: 'shared-name' } });
  assertProblem(dup, 409, 'DUPLICATE');
  assert.match(dup.body.detail, 'Flavor shared-name already exists');
  await create('shared-name', alice, pendingSite.id); // another site: fine
  const race = await Promise.all(
    [0, 1].map(() => t.request('POST', `/sites/${site.id}/flavors`, { token: alice, body: { name: 'racing' } })),
  );
  assert.equal(race.map((r) => r.status).sort(), [201, 409]);
  assert.is(await t.server.context.orm.em.fork().count(Flavor, { name: 'racing' }), 1);
});

test('GET /flavors/{id} and /flavors/{id}/site: 404 for unknown and malformed ids', async () => {
  for (const path of [`/flavors/${randomUUID()}`, '/flavors/bad-id', `/flavors/${randomUUID()}/site`, '/flavors/bad-id/site']) {
    assertProblem(await t.request('GET', path), 404, 'NOT_FOUND');
  }
});

test("GET /sites/{id}/flavors: the site's approved flavors; status=on_review; name filter; 404 for an unknown site", async () => {
  const s = (await t.request('POST', '/sites', { token: admin, body: { name: 'Listing', address: 'l' } })).body;
  const approved = await create('list-b', admin, s.id);
  const pending = await create('list-a', alice, s.id);
  await create('list-b', admin, pendingSite.id); // another site
  const ids = async (query: Record<string, string> = {}) =>
    (await t.request('GET', `/sites/${s.id}/flavors`, { query })).body.items.map((i: any) => i.id);
  assert.equal(await ids(), [approved.id]);
  assert.equal(await ids({ status: 'on_review' }), [pending.id]);
  assert.equal(await ids({ name: 'list-b' }), [approved.id]);
  assert.equal(await ids({ name: 'list' }), []);
  assert.equal(await ids({ upload_before: `${approved.upload_datetime}Z` }), []);
  assert.is((await t.request('POST', `/flavors/${pending.id}:approve`, { token: admin })).status, 204);
  assert.equal(await ids(), [pending.id, approved.id], 'sorted by name');
  assertProblem(await t.request('GET', `/sites/${randomUUID()}/flavors`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', `/sites/${randomUUID()}/flavors:search`), 404, 'NOT_FOUND');
});

test('GET /sites/{id}/flavors:search, sort and pagination within the site', async () => {
  const s = (await t.request('POST', '/sites', { token: admin, body: { name: 'Searching', address: 's' } })).body;
  const made = [
    await create('gpu.large', admin, s.id, { description: 'NVIDIA A100' }),
    await create('gpu.small', admin, s.id, { description: 'nvidia T4' }),
    await create('cpu.large', admin, s.id, { description: 'AMD EPYC' }),
    await create('cpu.small', admin, s.id, { description: 'AMD EPYC' }),
  ];
  const search = async (query: Record<string, string | string[] | number>) =>
    (await t.request('GET', `/sites/${s.id}/flavors:search`, { query })).body;
  assert.equal(
    (await search({ terms: ['Nvidia'] })).items.map((f: any) => f.name),
    ['gpu.large', 'gpu.small'],
  );
  assert.equal(
    (await search({ terms: ['LARGE', 'epyc'] })).items.map((f: any) => f.name),
    ['cpu.large'],
  );
  assert.equal((await search({ terms: 'm1' })).total, 0);
  assert.is((await t.request('GET', `/sites/${site.id}/flavors:search`, { query: { terms: 'nvidia' } })).body.total, 0, 'other sites only');
  assert.equal(
    (await search({ sort_by: '-name' })).items.map((f: any) => f.name),
    ['gpu.small', 'gpu.large', 'cpu.small', 'cpu.large'],
  );
  const epyc = made
    .filter((f) => f.description === 'AMD EPYC')
    .sort((x, y) => (x.id < y.id ? -1 : 1))
    .map((f) => f.name);
  assert.equal(
    (await search({ sort_by: '+description' })).items.slice(0, 2).map((f: any) => f.name),
    epyc,
    'ties by id',
  );
  assert.equal(
    (await search({ sort_by: '+site_id,-description,+name' })).items.map((f: any) => f.name),
    ['gpu.small', 'gpu.large', 'cpu.large', 'cpu.small'],
  );
  const p = await search({ per_page: 3, page: 2 });
  assert.equal(
    [p.items.map((f: any) => f.name), p.total, p.pages, p.has_next, p.has_prev, p.next_num, p.prev_num],
    [['gpu.small'], 4, 2, false, true, null, 1],
  );
  for (const query of [{ sort_by: '+address' }, { per_page: 0 }, { per_page: 101 }, { name: 'x' }]) {
    const res = await t.request('GET', `/sites/${s.id}/flavors:search`, { query });
    assert.is(res.status, 422, JSON.stringify(query));
  }
  assertProblem(await t.request('GET', `/sites/${s.id}/flavors`, { query: { terms: 'x' } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('GET', `/sites/${s.id}/flavors`, { query: { sort_by: '+nope' } }), 422, 'INVALID_SORT');
});

test('approve and reject: 204 then 409 ALREADY_APPROVED; reject deletes; 401, 403, 404', async () => {
  const a = await create('to-approve', alice);
  const r = await create('to-reject', alice);
  assert.is((await t.request('POST', `/flavors/${a.id}:approve`, { token: admin })).status, 204);
  assert.is((await t.request('GET', `/flavors/${a.id}`)).body.status, 'approved');
  assertProblem(await t.request('POST', `/flavors/${a.id}:approve`, { token: admin }), 409, 'ALREADY_APPROVED');
  assertProblem(await t.request('POST', `/flavors/${a.id}:reject`, { token: admin }), 409, 'ALREADY_APPROVED');
  assert.is((await t.request('POST', `/flavors/${r.id}:reject`, { token: admin })).status, 204);
  assertProblem(await t.request('GET', `/flavors/${r.id}`), 404, 'NOT_FOUND');
  for (const verb of ['approve', 'reject']) {
    assertProblem(await t.request('POST', `/flavors/${a.id}:${verb}`), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('POST', `/flavors/${a.id}:${verb}`, { token: alice }), 403, 'NOT_ADMIN');
    assertProblem(await t.request('POST', `/flavors/${randomUUID()}:${verb}`, { token: admin }), 404, 'NOT_FOUND');
    assertProblem(await t.request('POST', `/flavors/zzz:${verb}`, { token: admin }), 404, 'NOT_FOUND');
  }
});

test('PUT /flavors/{id}: replaces name and description, keeps site and status; 409 within the site; 401, 403, 404, 422', async () => {
  const f = await create('put-me', alice, site.id, { description: 'old' });
  const res = await t.request('PUT', `/flavors/${f.id}`, { token: admin, body: { name: 'put-done' } });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { ...f, name: 'put-done', description: null });
  assert.equal((await t.request('GET', `/flavors/${f.id}`)).body, res.body);
  await create('put-taken');
  assertProblem(await t.request('PUT', `/flavors/${f.id}`, { token: admin, body: { name: 'put-taken' } }), 409, 'DUPLICATE');
  assertProblem(
    await t.request('PUT', `/flavors/${f.id}`, { token: admin, body: { name: 'x', site_id: pendingSite.id } }),
    422,
    'INVALID_BODY',
  );
  assertProblem(await t.request('PUT', `/flavors/${f.id}`, { body: { name: 'x' } }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('PUT', `/flavors/${f.id}`, { token: alice, body: { name: 'x' } }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('PUT', `/flavors/${randomUUID()}`, { token: admin, body: { name: 'x' } }), 404, 'NOT_FOUND');
  assert.is((await t.request('GET', `/flavors/${f.id}`)).body.name, 'put-done');
});

test('DELETE /flavors/{id}: 409 REFERENCED with the count of results; cascade deletes them; the site stays', async () => {
  const f = await create('del-used');
  const results = [await insertResult(f), await insertResult(f)];
  const refused = await t.request('DELETE', `/flavors/${f.id}`, { token: admin });
  assertProblem(refused, 409, 'REFERENCED');
  assert.is(refused.body.count, 2);
  assert.is((await t.request('DELETE', `/flavors/${f.id}`, { token: admin, query: { cascade: 'true' } })).status, 204);
  assertProblem(await t.request('GET', `/flavors/${f.id}`), 404, 'NOT_FOUND');
  assert.is(await t.server.context.orm.em.fork().count(Result, { id: { $in: results } }), 0);
  assert.is((await t.request('GET', `/sites/${site.id}`)).status, 200);

  const free = await create('del-free', alice);
  assertProblem(await t.request('DELETE', `/flavors/${free.id}`), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('DELETE', `/flavors/${free.id}`, { token: alice }), 403, 'NOT_ADMIN');
  assert.is((await t.request('DELETE', `/flavors/${free.id}`, { token: admin })).status, 204);
  assertProblem(await t.request('DELETE', `/flavors/${free.id}`, { token: admin }), 404, 'NOT_FOUND');
});

test('DELETE /flavors/{id} referenced by deleted results: 409 REFERENCED says how many of them are deleted', async () => {
  const f = await create('del-deleted');
  const results = [await insertResult(f), await insertResult(f), await insertResult(f)];
  const detail = async () => {
    const refused = await t.request('DELETE', `/flavors/${f.id}`, { token: admin });
    assertProblem(refused, 409, 'REFERENCED');
    assert.is(refused.body.count, 3);
    return refused.body.detail;
  };
  assert.match(await detail(), /is referenced by 3 results; add/);
  for (const id of results.slice(0, 2)) assert.is((await t.request('DELETE', `/results/${id}`, { token: admin })).status, 204);
  assert.match(await detail(), /is referenced by 3 results \(2 of them deleted\); add \?cascade=true/);
  assert.is((await t.request('DELETE', `/results/${results[2]}`, { token: admin })).status, 204);
  assert.match(await detail(), /is referenced by 3 results \(3 of them deleted\);/);
});

test.run();
