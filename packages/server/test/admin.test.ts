/** Administrator views: submissions waiting for review, and users (list, search, remove). */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { User } from '../src/entities/index.ts';

let t: TestServer;
let alice: string;
let bob: string;
let admin: string;
const submitted: Record<string, any> = {};

test.before(async () => {
  t = await startTestServer({}, 'admin');
  alice = await t.user('alice');
  bob = await t.user('bob');
  admin = await t.admin('root');
  // One item of each kind on review, in this order, plus approved ones that are not submissions.
  submitted.benchmark = (
    await t.request('POST', '/benchmarks', { token: alice, body: { container_image: 'sub/b', container_tag: '1', json_schema: {} } })
  ).body;
  submitted.site = (await t.request('POST', '/sites', { token: bob, body: { name: 'Sub Site', address: 'x' } })).body;
  submitted.flavor = (await t.request('POST', `/sites/${submitted.site.id}/flavors`, { token: alice, body: { name: 'sub-f' } })).body;
  submitted.tag = (await t.request('POST', '/tags', { token: bob, body: { name: 'sub-tag' } })).body;
  await t.request('POST', '/tags', { token: admin, body: { name: 'approved-tag' } });
  await t.request('POST', '/sites', { token: admin, body: { name: 'Approved Site', address: 'y' } });
});
test.after(async () => {
  await t.close();
});

const submits = async (query: Record<string, string | number> = {}) => t.request('GET', '/reports/submits', { token: admin, query });

// ---------------------------------------------------------------------------------------------
// GET /reports/submits

test('GET /reports/submits: every item on review with its uploader as GET /users shows it (email included), oldest first', async () => {
  const res = await submits();
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.items.map((s: any) => [s.resource_type, s.resource_id]),
    [
      ['benchmark', submitted.benchmark.id],
      ['site', submitted.site.id],
      ['flavor', submitted.flavor.id],
      ['tag', submitted.tag.id],
    ],
  );
  const aliceUser = (await t.request('GET', '/users', { token: admin, query: { sub: 'alice' } })).body.items[0];
  assert.equal(res.body.items[0], {
    resource_type: 'benchmark',
    resource_id: submitted.benchmark.id,
    upload_datetime: submitted.benchmark.upload_datetime,
    uploader: aliceUser,
  });
  assert.is(res.body.items[0].uploader.email, 'alice@test.example');
  assert.equal([res.body.items[1].uploader.sub, res.body.items[1].uploader.email], ['bob', 'bob@test.example']);
  assert.is(res.body.total, 4);
});

test('GET /reports/submits: filter by resource_type and upload dates; sort; pages', async () => {
  assert.equal(
    (await submits({ resource_type: 'flavor' })).body.items.map((s: any) => s.resource_id),
    [submitted.flavor.id],
  );
  const after = await submits({ upload_after: `${submitted.site.upload_datetime}Z` });
  assert.equal(
    after.body.items.map((s: any) => s.resource_type),
    ['flavor', 'tag'],
  );
  const before = await submits({ upload_before: `${submitted.site.upload_datetime}Z` });
  assert.equal(
    before.body.items.map((s: any) => s.resource_type),
    ['benchmark'],
  );
  assert.equal(
    (await submits({ sort_by: '-upload_datetime' })).body.items.map((s: any) => s.resource_type),
    ['tag', 'flavor', 'site', 'benchmark'],
  );
  assert.equal(
    (await submits({ sort_by: '+resource_type' })).body.items.map((s: any) => s.resource_type),
    ['benchmark', 'flavor', 'site', 'tag'],
  );
  const ids = [submitted.benchmark, submitted.site, submitted.flavor, submitted.tag].map((x) => x.id).sort();
  assert.equal(
    (await submits({ sort_by: '+resource_id' })).body.items.map((s: any) => s.resource_id),
    ids,
  );
  const p2 = (await submits({ per_page: 3, page: 2 })).body;
  assert.equal([p2.items.length, p2.total, p2.pages, p2.has_next, p2.next_num, p2.prev_num], [1, 4, 2, false, null, 1]);
});

test('GET /reports/submits: 401, 403 for users, 422 for bad parameters', async () => {
  assertProblem(await t.request('GET', '/reports/submits'), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('GET', '/reports/submits', { token: alice }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('GET', '/reports/submits', { token: await t.token('x') }), 403, 'NOT_REGISTERED');
  assertProblem(await submits({ resource_type: 'claim' }), 422, 'INVALID_QUERY');
  assertProblem(await submits({ status: 'approved' }), 422, 'INVALID_QUERY');
  assertProblem(await submits({ sort_by: '+name' }), 422, 'INVALID_SORT');
  assertProblem(await submits({ per_page: 101 }), 422, 'INVALID_QUERY');
});

// ---------------------------------------------------------------------------------------------
// GET /users, /users:search

const users = async (path: string, query: Record<string, string | number | string[]> = {}) =>
  t.request('GET', path, { token: admin, query });

test('GET /users: every user with email and terms, sorted by iss then sub; exact filters', async () => {
  const res = await users('/users');
  assert.is(res.status, 200, res.text);
  assert.equal(
    res.body.items.map((u: any) => u.sub),
    ['alice', 'bob', 'root'],
  );
  const a = res.body.items[0];
  assert.equal(Object.keys(a).sort(), ['email', 'iss', 'registration_datetime', 'removed', 'sub', 'terms_version']);
  assert.equal([a.iss, a.email, a.removed], [t.issuer.issuer, 'alice@test.example', false]);
  assert.equal(
    (await users('/users', { email: 'bob@test.example' })).body.items.map((u: any) => u.sub),
    ['bob'],
  );
  assert.equal(
    (await users('/users', { sub: 'alice', iss: t.issuer.issuer })).body.items.map((u: any) => u.sub),
    ['alice'],
  );
  assert.equal((await users('/users', { iss: 'https://elsewhere.example' })).body.total, 0);
  assert.equal(
    (await users('/users', { sort_by: '-sub' })).body.items.map((u: any) => u.sub),
    ['root', 'bob', 'alice'],
  );
  assert.equal(
    (await users('/users', { sort_by: '-registration_datetime' })).body.items.map((u: any) => u.sub),
    ['root', 'bob', 'alice'],
  );
  const p = (await users('/users', { per_page: 2, page: 2 })).body;
  assert.equal([p.items.map((u: any) => u.sub), p.total, p.pages, p.has_prev, p.has_next, p.next_num], [['root'], 3, 2, true, false, null]);
});

test('GET /users:search: terms over email and sub, case-insensitively', async () => {
  assert.equal(
    (await users('/users:search', { terms: 'ALI' })).body.items.map((u: any) => u.sub),
    ['alice'],
  );
  assert.equal(
    (await users('/users:search', { terms: ['test.example', 'o'] })).body.items.map((u: any) => u.sub),
    ['bob', 'root'],
  );
  assert.equal((await users('/users:search', { terms: '' })).body.total, 3);
});

test('GET /users and /users:search: 401, 403, 422', async () => {
  for (const path of ['/users', '/users:search']) {
    assertProblem(await t.request('GET', path), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('GET', path, { token: alice }), 403, 'NOT_ADMIN');
    assertProblem(await users(path, { sort_by: '+name' }), 422, 'INVALID_SORT');
    assertProblem(await users(path, { per_page: 0 }), 422, 'INVALID_QUERY');
    assertProblem(await users(path, { uploader: 'x' }), 422, 'INVALID_QUERY');
  }
});

// ---------------------------------------------------------------------------------------------
// POST /users:remove (runs last: it removes alice)

test('POST /users:remove: 422 SELECTOR_REQUIRED without a selector; 401, 403; 204 when nothing matches', async () => {
  assertProblem(await t.request('POST', '/users:remove', { token: admin }), 422, 'SELECTOR_REQUIRED');
  assertProblem(await t.request('POST', '/users:remove', { token: admin, query: { name: 'alice' } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('POST', '/users:remove', { query: { sub: 'alice' } }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('POST', '/users:remove', { token: bob, query: { sub: 'alice' } }), 403, 'NOT_ADMIN');
  const none = await t.request('POST', '/users:remove', { token: admin, query: { email: 'nobody@test.example' } });
  assert.is(none.status, 204);
  assert.is((await users('/users', { sub: 'alice' })).body.items[0].removed, false);
});

test('POST /users:remove: erases the email, keeps the uploads (uploader shown as removed); the user cannot register again', async () => {
  const res = await t.request('POST', '/users:remove', { token: admin, query: { email: 'alice@test.example' } });
  assert.is(res.status, 204);
  const listed = (await users('/users', { sub: 'alice' })).body.items[0];
  assert.equal([listed.email, listed.removed], [null, true]);
  const stored = await t.server.context.orm.em.fork().findOneOrFail(User, { iss: t.issuer.issuer, sub: 'alice' });
  assert.is(stored.email, null);
  assert.ok(stored.removed_datetime instanceof Date);
  assert.is((await users('/users:search', { terms: 'alice@' })).body.total, 0, 'the email is gone');

  // What alice uploaded stays.
  assert.is((await t.request('GET', `/benchmarks/${submitted.benchmark.id}`)).status, 200);
  assert.is((await t.request('GET', `/flavors/${submitted.flavor.id}`)).status, 200);
  const mine = (await submits()).body.items.filter((s: any) => s.uploader.sub === 'alice');
  assert.equal(
    mine.map((s: any) => [s.resource_type, s.uploader.removed, s.uploader.email]),
    [
      ['benchmark', true, null],
      ['flavor', true, null],
    ],
  );
  assert.is((await users('/users', { sub: 'bob' })).body.items[0].removed, false, 'only the selected user');

  // Removed users are no longer registered, and cannot register again by themselves.
  assertProblem(await t.request('POST', '/tags', { token: alice, body: { name: 'after-removal' } }), 403, 'NOT_REGISTERED');
  assertProblem(await t.request('POST', '/users:register', { token: alice }), 403, 'USER_REMOVED');
  assertProblem(await t.request('POST', '/users/self', { token: alice }), 403, 'USER_REMOVED');
  assertProblem(await t.request('GET', '/users/self', { token: alice }), 404, 'NOT_REGISTERED');
  const still = (await users('/users', { sub: 'alice' })).body.items[0];
  assert.equal([still.email, still.removed], [null, true]);
  assertProblem(await t.request('POST', '/tags', { token: alice, body: { name: 'after-register' } }), 403, 'NOT_REGISTERED');
});

test('POST /users:restore: 422 without a selector or with email; 401, 403; 204 when nothing matches', async () => {
  assertProblem(await t.request('POST', '/users:restore', { token: admin }), 422, 'SELECTOR_REQUIRED');
  assertProblem(await t.request('POST', '/users:restore', { token: admin, query: { email: 'alice@test.example' } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('POST', '/users:restore', { query: { sub: 'alice' } }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('POST', '/users:restore', { token: bob, query: { sub: 'alice' } }), 403, 'NOT_ADMIN');
  assert.is((await t.request('POST', '/users:restore', { token: admin, query: { sub: 'nobody' } })).status, 204);
  assert.is((await t.request('POST', '/users:restore', { token: admin, query: { sub: 'bob' } })).status, 204, 'a user never removed');
  assert.is((await users('/users', { sub: 'alice' })).body.items[0].removed, true, 'alice is still removed');
});

test('POST /users:restore: the removed user is registered again (email back once refreshed), with the same uploads', async () => {
  const before = (await users('/users', { sub: 'alice' })).body.items[0];
  assert.is((await t.request('POST', '/users:restore', { token: admin, query: { iss: t.issuer.issuer, sub: 'alice' } })).status, 204);
  const restored = (await users('/users', { sub: 'alice' })).body.items[0];
  assert.equal(restored, { ...before, removed: false }, 'registration time and terms kept, no email yet');
  assert.is((await t.request('POST', '/tags', { token: alice, body: { name: 'after-restore' } })).status, 201);
  assertProblem(await t.request('POST', '/users:register', { token: alice }), 409, 'ALREADY_REGISTERED');
  assert.is((await t.request('POST', '/users/self:update', { token: alice })).status, 204);
  assert.is((await t.request('GET', '/users/self', { token: alice })).body.email, 'alice@test.example');
  const mine = (await submits()).body.items.filter((s: any) => s.uploader.sub === 'alice');
  assert.ok(mine.length >= 2 && mine.every((s: any) => s.uploader.removed === false));
});

test.run();
