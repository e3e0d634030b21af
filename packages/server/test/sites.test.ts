/**
 * Sites and their flavors: a reject takes the flavors on review along, an approved flavor blocks it,
 * and flavors alone block a delete. What every reviewed resource does (create, review, update,
 * delete with cascade, lists, search and sorting) is in catalogue-review.test.ts.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Flavor } from '../src/entities/index.ts';

let t: TestServer;
let alice: string;
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'sites');
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
});
test.after(async () => {
  await t.close();
});

async function create(name: string, token = admin) {
  const res = await t.request('POST', '/sites', { token, body: { name, address: `${name} street` } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

async function addFlavor(siteId: string, name: string, token = admin) {
  const res = await t.request('POST', `/sites/${siteId}/flavors`, { token, body: { name } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

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

test('DELETE /sites/{id}: flavors without results block it too (409 with counts); cascade deletes them', async () => {
  const s = await create('Busy Site');
  const f1 = await addFlavor(s.id, 'f1');
  await addFlavor(s.id, 'f2', alice);
  const refused = await t.request('DELETE', `/sites/${s.id}`, { token: admin });
  assertProblem(refused, 409, 'REFERENCED');
  assert.equal([refused.body.count, refused.body.flavors], [0, 2]);
  assert.match(refused.body.detail, 'Site Busy Site is referenced by 2 flavors; add ?cascade=true');
  assert.is((await t.request('DELETE', `/sites/${s.id}`, { token: admin, query: { cascade: true } })).status, 204);
  assertProblem(await t.request('GET', `/flavors/${f1.id}`), 404, 'NOT_FOUND');
  assert.is(await t.server.context.orm.em.fork().count(Flavor, { site_id: s.id }), 0);
});

test.run();
