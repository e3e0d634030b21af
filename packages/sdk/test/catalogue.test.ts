import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asc, ConflictError, createClient, desc, NotFoundError, PermissionError, ValidationError, type Client } from '../src/index.ts';
import { PageRequest } from '../src/pagination.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { listen, proxy } from './support/http.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let admin: Client;
let user: Client;
let anonymous: Client;

test.before(async () => {
  t = await startTestServer('sdk_catalogue');
  admin = createClient({ baseUrl: t.url, token: await t.admin('cat-admin') });
  user = createClient({ baseUrl: t.api, token: await t.user('cat-user') });
  anonymous = createClient({ baseUrl: t.url });
});
test.after(async () => {
  await Promise.all([admin, user, anonymous].map((c) => c.close()));
  await t.close();
});

const image = (n: number) => `ghcr.io/sdk-test/bench-${n}`;

test('GET /benchmarks: list() is the first page and iterates every item across pages, none repeated or missed', async () => {
  const created = [];
  for (let n = 0; n < 5; n++) {
    created.push(await admin.benchmarks.create({ container_image: image(n), container_tag: '1.0', json_schema: {}, url: null }));
  }
  const request = anonymous.benchmarks.list({ per_page: 2, sort_by: [asc('container_image')] });
  assert.instance(request, PageRequest);

  const first = await request;
  assert.is(first.total, 5);
  assert.is(first.pages, 3);
  assert.is(first.items.length, 2);
  assert.is(first.next_num, 2);

  const seen: string[] = [];
  for await (const b of request) seen.push(b.id);
  assert.equal(
    seen,
    created.map((b) => b.id),
    'every benchmark once, in order',
  );

  const pages = [];
  for await (const page of anonymous.benchmarks.list({ per_page: 2 }).pages()) pages.push(page.items.length);
  assert.equal(pages, [2, 2, 1]);

  const reversed = await anonymous.benchmarks.list({ per_page: 2, sort_by: [desc('container_image')] }).toArray({ max: 100 });
  assert.equal(
    reversed.map((b) => b.id),
    created.map((b) => b.id).reverse(),
  );

  const three = await anonymous.benchmarks.list({ per_page: 2 }).toArray({ max: 3 });
  assert.is(three.length, 3);
  await anonymous.benchmarks
    .list()
    // @ts-expect-error max is required
    .toArray({})
    .then(
      () => assert.unreachable('no bound'),
      (err: Error) => assert.instance(err, TypeError),
    );

  const fromPage2: string[] = [];
  for await (const b of anonymous.benchmarks.list({ per_page: 2, page: 2, sort_by: '+container_image' })) fromPage2.push(b.id);
  assert.equal(
    fromPage2,
    created.slice(2).map((b) => b.id),
    'iteration starts at the page asked for',
  );
});

test('benchmarks: a user upload is on review until approved; get, update, search, approve, reject, delete', async () => {
  const b = await user.benchmarks.create({
    container_image: 'ghcr.io/sdk-test/review',
    container_tag: '2.0',
    json_schema: {},
    description: 'needle in haystack',
  });
  assert.is(b.status, 'on_review');
  assert.is(b.name, 'ghcr.io/sdk-test/review:2.0');
  const approvedIds = (await anonymous.benchmarks.list().toArray({ max: 100 })).map((x) => x.id);
  assert.not.ok(approvedIds.includes(b.id));
  const onReview = await anonymous.benchmarks.list({ status: 'on_review' }).toArray({ max: 100 });
  assert.equal(
    onReview.map((x) => x.id),
    [b.id],
  );
  assert.equal(await anonymous.benchmarks.get(b.id), b);

  await rejects(() => user.benchmarks.approve(b.id), PermissionError);
  assert.is(await admin.benchmarks.approve(b.id), undefined);
  const again = await rejects(() => admin.benchmarks.approve(b.id), ConflictError);
  assert.is(again.code, 'ALREADY_APPROVED');

  const updated = await admin.benchmarks.update(b.id, {
    container_image: 'ghcr.io/sdk-test/review',
    container_tag: '2.0',
    json_schema: {},
    description: 'updated description',
    url: 'https://example.org/docs',
  });
  assert.is(updated.description, 'updated description');
  assert.is(updated.url, 'https://example.org/docs');

  const found = await anonymous.benchmarks.search({ terms: ['UPDATED', 'description'] }).toArray({ max: 10 });
  assert.equal(
    found.map((x) => x.id),
    [b.id],
  );

  const rejected = await user.benchmarks.create({ container_image: 'ghcr.io/sdk-test/rejected', container_tag: '1', json_schema: {} });
  await admin.benchmarks.reject(rejected.id);
  await rejects(() => anonymous.benchmarks.get(rejected.id), NotFoundError);

  assert.is(await admin.benchmarks.delete(b.id, { cascade: true }), undefined);
  const gone = await rejects(() => anonymous.benchmarks.get(b.id), NotFoundError);
  assert.is(gone.code, 'NOT_FOUND');
});

test('benchmarks: duplicate → ConflictError DUPLICATE; invalid body → ValidationError listing the field', async () => {
  await user.benchmarks.create({ container_image: 'ghcr.io/sdk-test/dup', container_tag: '1', json_schema: {} });
  const dup = await rejects(
    () => user.benchmarks.create({ container_image: 'ghcr.io/sdk-test/dup', container_tag: '1', json_schema: {} }),
    ConflictError,
  );
  assert.is(dup.code, 'DUPLICATE');
  const invalid = await rejects(
    () => user.benchmarks.create({ container_image: 'Not An Image!', container_tag: '1', json_schema: {} }),
    ValidationError,
  );
  assert.is(invalid.status, 422);
  assert.ok(
    invalid.errors.some((e) => e.in === 'body' && e.path.includes('container_image')),
    JSON.stringify(invalid.errors),
  );
});

test('404 for an unknown id and for a malformed one: NotFoundError', async () => {
  await rejects(() => anonymous.benchmarks.get('00000000-0000-4000-8000-000000000000'), NotFoundError);
  await rejects(() => anonymous.sites.get('not-a-uuid'), NotFoundError);
});

test('422 for an out-of-range query value: ValidationError with errors', async () => {
  const err = await rejects(() => anonymous.benchmarks.list({ per_page: 1000 }).then((p) => p), ValidationError);
  assert.is(err.code, 'INVALID_QUERY');
  assert.ok(
    err.errors.some((e) => e.in === 'query' && /per_page/.test(e.path)),
    JSON.stringify(err.errors),
  );
  // An unknown parameter, through the untyped core (the typed namespaces cannot send one).
  const unknown = await rejects(() => anonymous.core.invoke('listSites', { query: { filter: 'x' } }), ValidationError);
  assert.is(unknown.code, 'INVALID_QUERY');
});

test('sites and flavors: every verb; flavors are listed under their site', async () => {
  const site = await admin.sites.create({ name: 'SDK Site', address: 'Somewhere 1', description: 'test site' });
  assert.is(site.status, 'approved');
  assert.equal(await anonymous.sites.get(site.id), site);
  const small = await admin.flavors.create(site.id, { name: 'small', description: '2 vCPU' });
  const large = await user.flavors.create(site.id, { name: 'large', description: '64 vCPU' });
  assert.is(small.site_id, site.id);
  assert.is(large.status, 'on_review');

  assert.equal(
    (await anonymous.flavors.list(site.id).toArray({ max: 10 })).map((f) => f.name),
    ['small'],
  );
  assert.equal(
    (await anonymous.flavors.list(site.id, { status: 'on_review' }).toArray({ max: 10 })).map((f) => f.name),
    ['large'],
  );
  await admin.flavors.approve(large.id);
  assert.equal(
    (await anonymous.flavors.list(site.id, { sort_by: [desc('name')] }).toArray({ max: 10 })).map((f) => f.name),
    ['small', 'large'],
  );
  assert.equal(
    (await anonymous.flavors.search(site.id, { terms: ['64'] }).toArray({ max: 10 })).map((f) => f.id),
    [large.id],
  );
  assert.equal(await anonymous.flavors.get(small.id), small);
  assert.equal(await anonymous.flavors.site(small.id), site);
  assert.is((await admin.flavors.update(small.id, { name: 'small-2', description: null })).name, 'small-2');

  const extra = await user.flavors.create(site.id, { name: 'extra' });
  await admin.flavors.reject(extra.id);
  await rejects(() => anonymous.flavors.get(extra.id), NotFoundError);
  await admin.flavors.delete(large.id);
  await rejects(() => anonymous.flavors.get(large.id), NotFoundError);
  await rejects(() => anonymous.flavors.list('00000000-0000-4000-8000-000000000000').then((p) => p), NotFoundError);

  const other = await user.sites.create({ name: 'SDK Other', address: 'Elsewhere 2' });
  assert.equal(
    (await anonymous.sites.search({ terms: ['elsewhere'], status: 'on_review' }).toArray({ max: 10 })).map((s) => s.id),
    [other.id],
  );
  await admin.sites.approve(other.id);
  assert.is((await admin.sites.update(other.id, { name: 'SDK Other', address: 'Moved 3' })).address, 'Moved 3');
  const referenced = await rejects(() => admin.sites.delete(site.id), ConflictError);
  assert.is(referenced.code, 'REFERENCED');
  await admin.sites.delete(site.id, { cascade: true });
  await rejects(() => anonymous.flavors.get(small.id), NotFoundError);
  const rejectedSite = await user.sites.create({ name: 'SDK Rejected', address: 'x' });
  await admin.sites.reject(rejectedSite.id);
  await rejects(() => anonymous.sites.get(rejectedSite.id), NotFoundError);
});

test('tags: every verb', async () => {
  const tag = await user.tags.create({ name: 'sdk-gpu', description: 'uses a GPU' });
  assert.is(tag.status, 'on_review');
  await admin.tags.approve(tag.id);
  assert.equal(
    (await anonymous.tags.list({ name: 'sdk-gpu' }).toArray({ max: 10 })).map((x) => x.id),
    [tag.id],
  );
  assert.equal(
    (await anonymous.tags.search({ terms: ['GPU'] }).toArray({ max: 10 })).map((x) => x.id),
    [tag.id],
  );
  assert.is((await admin.tags.update(tag.id, { name: 'sdk-gpu', description: 'a GPU node' })).description, 'a GPU node');
  assert.is((await anonymous.tags.get(tag.id)).description, 'a GPU node');
  const spam = await user.tags.create({ name: 'sdk-spam' });
  await admin.tags.reject(spam.id);
  await admin.tags.delete(tag.id);
  await rejects(() => anonymous.tags.get(tag.id), NotFoundError);
});

test('GET /reports/submits: what waits for review, for administrators only', async () => {
  const waiting = await user.tags.create({ name: 'sdk-waiting' });
  const submits = await admin.submissions.list({ resource_type: 'tag' }).toArray({ max: 100 });
  assert.ok(submits.some((s) => s.resource_id === waiting.id && s.uploader.sub === 'cat-user'));
  await rejects(() => user.submissions.list().then((p) => p), PermissionError);
});

test('users: list, search, remove and restore, for administrators', async () => {
  await t.user('cat-removable');
  const listed = await admin.users.list({ sub: 'cat-removable' }).toArray({ max: 10 });
  assert.is(listed.length, 1);
  assert.is(listed[0]!.email, 'cat-removable@test.example');
  const found = await admin.users.search({ terms: ['cat-removable'] }).toArray({ max: 10 });
  assert.equal(
    found.map((u) => u.sub),
    ['cat-removable'],
  );
  assert.is(await admin.users.remove({ sub: 'cat-removable' }), undefined);
  const after = await admin.users.list({ sub: 'cat-removable' }).toArray({ max: 10 });
  assert.is(after[0]!.removed, true);
  assert.is(after[0]!.email, null);
  const none = await rejects(() => admin.users.remove({}), ValidationError);
  assert.is(none.status, 422);
  await rejects(() => user.users.list().then((p) => p), PermissionError);
  assert.is(await admin.users.restore({ sub: 'cat-removable' }), undefined);
  assert.is((await admin.users.list({ sub: 'cat-removable' }).toArray({ max: 10 }))[0]!.removed, false);
  await rejects(() => user.users.restore({ sub: 'cat-removable' }), PermissionError);
});

test('PUT and DELETE are retried on a real 503; the retried call reaches the real server once', async () => {
  const b = await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/retry', container_tag: '1', json_schema: {} });
  let failNext = true;
  const flaky = await listen((req, res) => {
    if (failNext) {
      failNext = false;
      res.writeHead(503, { 'retry-after': '0', 'content-type': 'application/problem+json' });
      res.end('{"status":503,"code":"DATABASE_UNAVAILABLE","title":"Service Unavailable","detail":"down","type":"urn:x"}');
    } else {
      failNext = true;
      proxy(t.url, req, res);
    }
  });
  try {
    const c = createClient({ baseUrl: flaky.url, token: await t.admin('cat-admin') });
    const body = { container_image: 'ghcr.io/sdk-test/retry', container_tag: '1', json_schema: {}, description: 'retried' };
    assert.is((await c.benchmarks.update(b.id, body)).description, 'retried');
    await c.benchmarks.delete(b.id);
    assert.equal(
      flaky.seen.map((s) => s.method),
      ['PUT', 'PUT', 'DELETE', 'DELETE'],
    );
    await rejects(() => anonymous.benchmarks.get(b.id), NotFoundError);
    await c.close();
  } finally {
    await flaky.close();
  }
});

test.run();
