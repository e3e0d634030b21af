/**
 * Flavors belong to a site: created under one (of any status), unique within it, listed and searched
 * per site, and read with it. What every reviewed resource does (create, review, update, delete with
 * cascade, lists, search and sorting) is in catalogue-review.test.ts; prices in flavor-prices.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';

let t: TestServer;
let alice: string;
let admin: string;
let site: any; // approved
let pendingSite: any; // on review

test.before(async () => {
  t = await startTestServer({}, 'flavors');
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
  site = (await t.request('POST', '/sites', { token: admin, body: { name: 'Main', address: 'a' } })).body;
  pendingSite = (await t.request('POST', '/sites', { token: alice, body: { name: 'Pending', address: 'b' } })).body;
});
test.after(async () => {
  await t.close();
});

async function create(name: string, token = admin, siteId = site.id, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', `/sites/${siteId}/flavors`, { token, body: { name, ...extra } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

test('GET /flavors/{id}/site: the site of a flavor; 404 for unknown and malformed ids', async () => {
  const f = await create('m1.small', alice);
  const owner = await t.request('GET', `/flavors/${f.id}/site`);
  assert.is(owner.status, 200);
  assert.equal(owner.body, site);
  for (const path of [`/flavors/${randomUUID()}/site`, '/flavors/bad-id/site']) {
    assertProblem(await t.request('GET', path), 404, 'NOT_FOUND');
  }
});

test('POST /sites/{id}/flavors: allowed on a site on review; 404 for an unknown or malformed site', async () => {
  const f = await create('on-pending-site', alice, pendingSite.id);
  assert.is(f.site_id, pendingSite.id);
  assertProblem(await t.request('POST', `/sites/${randomUUID()}/flavors`, { token: alice, body: { name: 'x' } }), 404, 'NOT_FOUND');
  assertProblem(await t.request('POST', '/sites/nope/flavors', { token: alice, body: { name: 'x' } }), 404, 'NOT_FOUND');
});

test('POST /sites/{id}/flavors: a name is unique within its site only', async () => {
  await create('shared-name');
  assertProblem(await t.request('POST', `/sites/${site.id}/flavors`, { token: alice, body: { name: 'shared-name' } }), 409, 'DUPLICATE');
  const other = await create('shared-name', alice, pendingSite.id); // another site: fine
  assert.is(other.site_id, pendingSite.id);
});

test("GET /sites/{id}/flavors and :search: the site's flavors only; 404 for an unknown site", async () => {
  const s = (await t.request('POST', '/sites', { token: admin, body: { name: 'Listing', address: 'l' } })).body;
  const mine = await create('list-b', admin, s.id, { description: 'NVIDIA A100' });
  const elsewhere = await create('list-b', admin, pendingSite.id, { description: 'NVIDIA A100' });
  assert.equal(
    (await t.request('GET', `/sites/${s.id}/flavors`, { query: { name: 'list-b' } })).body.items.map((i: any) => i.id),
    [mine.id],
  );
  assert.equal(
    (await t.request('GET', `/sites/${pendingSite.id}/flavors`, { query: { name: 'list-b' } })).body.items.map((i: any) => i.id),
    [elsewhere.id],
  );
  assert.equal(
    (await t.request('GET', `/sites/${s.id}/flavors:search`, { query: { terms: 'nvidia' } })).body.items.map((i: any) => i.id),
    [mine.id],
  );
  assert.is((await t.request('GET', `/sites/${site.id}/flavors:search`, { query: { terms: 'nvidia' } })).body.total, 0, 'other sites only');
  assertProblem(await t.request('GET', `/sites/${randomUUID()}/flavors`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', `/sites/${randomUUID()}/flavors:search`), 404, 'NOT_FOUND');
});

test.run();
