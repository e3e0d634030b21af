/**
 * Tags: reviewed like the other catalogue items (unless REVIEW_TAGS=false); deleting one unlinks it
 * from results, never deletes them.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Result, ResultTag, Tag } from '../src/entities/index.ts';
import { buildConfig } from '../src/config.ts';

let t: TestServer;
let alice: string;
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'tags');
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
});
test.after(async () => {
  await t.close();
});

async function create(name: string, token = admin, description?: string) {
  const res = await t.request('POST', '/tags', { token, body: { name, description } });
  assert.is(res.status, 201, res.text);
  return res.body;
}

/** Two results carrying the tag, inserted directly (results are another part of the API). */
async function tagResults(tagId: string): Promise<string[]> {
  const b = await t.request('POST', '/benchmarks', {
    token: admin,
    body: { container_image: `t/${randomUUID()}`, container_tag: '1', json_schema: {} },
  });
  const s = await t.request('POST', '/sites', { token: admin, body: { name: randomUUID(), address: 'a' } });
  const f = await t.request('POST', `/sites/${s.body.id}/flavors`, { token: admin, body: { name: 'f' } });
  const em = t.server.context.orm.em.fork();
  const ids = [randomUUID(), randomUUID()];
  for (const id of ids) {
    em.create(Result, {
      id,
      benchmark_id: b.body.id,
      site_id: s.body.id,
      flavor_id: f.body.id,
      json: {},
      execution_datetime: new Date(),
      upload_datetime: new Date(),
      uploader_iss: t.issuer.issuer,
      uploader_sub: 'root',
    });
  }
  await em.flush();
  for (const id of ids) em.create(ResultTag, { result_id: id, tag_id: tagId });
  await em.flush();
  return ids;
}

test('POST /tags: a user submits a tag on review (no upload_datetime in responses); read back by id', async () => {
  const res = await t.request('POST', '/tags', { token: alice, body: { name: ' gpu ', description: 'Uses a GPU' } });
  assert.is(res.status, 201, res.text);
  assert.equal(res.body, { id: res.body.id, name: 'gpu', description: 'Uses a GPU', status: 'on_review' });
  assert.equal((await t.request('GET', `/tags/${res.body.id}`)).body, res.body);
  const stored = await t.server.context.orm.em.fork().findOneOrFail(Tag, { id: res.body.id });
  assert.is(stored.uploader_sub, 'alice');
  assert.ok(stored.upload_datetime instanceof Date);
  const byAdmin = await create('approved-at-once');
  assert.equal([byAdmin.status, byAdmin.description], ['approved', null]);
});

test("POST /tags with REVIEW_TAGS=false: a user's tag is approved at once, listed, usable on a result; sites still reviewed", async () => {
  const open = await startTestServer({ reviewTags: 'false' }, 'tags-unreviewed');
  try {
    const [bob, root] = await Promise.all([open.user('bob'), open.admin('root')]);
    const tag = await open.request('POST', '/tags', { token: bob, body: { name: 'live-at-once' } });
    assert.is(tag.status, 201, tag.text);
    assert.equal(tag.body, { id: tag.body.id, name: 'live-at-once', description: null, status: 'approved' });
    const listed = await open.request('GET', '/tags', { query: { name: 'live-at-once' } });
    assert.equal(
      listed.body.items.map((i: any) => i.id),
      [tag.body.id],
      'in the default (approved) list',
    );
    const submits = await open.request('GET', '/reports/submits', { token: root, query: { resource_type: 'tag' } });
    assert.equal(submits.body.items, [], 'nothing to review');
    const b = await open.request('POST', '/benchmarks', {
      token: root,
      body: { container_image: 't/unreviewed', container_tag: '1', json_schema: {} },
    });
    const s = await open.request('POST', '/sites', { token: root, body: { name: 'unreviewed', address: 'a' } });
    const f = await open.request('POST', `/sites/${s.body.id}/flavors`, { token: root, body: { name: 'f' } });
    const result = await open.request('POST', '/results', {
      token: bob,
      query: { benchmark_id: b.body.id, flavor_id: f.body.id, execution_datetime: '2024-01-01T00:00:00Z', tags_ids: [tag.body.id] },
      body: {},
    });
    assert.is(result.status, 201, result.text);
    assert.equal(
      result.body.tags.map((x: any) => x.id),
      [tag.body.id],
    );
    const site = await open.request('POST', '/sites', { token: bob, body: { name: 'bob-site', address: 'a' } });
    assert.is(site.body.status, 'on_review', 'only tags skip the review');
  } finally {
    await open.close();
  }
});

test('REVIEW_TAGS: true by default; true/false/yes/no/1/0; anything else is one clear error', () => {
  const base = { oidcIssuer: 'http://127.0.0.1:1' };
  assert.is(buildConfig(base).reviewTags, true);
  for (const [given, expected] of [
    ['false', false],
    ['no', false],
    ['0', false],
    ['true', true],
    ['yes', true],
    ['1', true],
  ] as const) {
    assert.is(buildConfig({ ...base, reviewTags: given }).reviewTags, expected, given);
  }
  assert.throws(() => buildConfig({ ...base, reviewTags: 'sometimes' }), /REVIEW_TAGS must be true or false, not 'sometimes'/);
});

test('POST /tags: 401, 403, 422, and 409 DUPLICATE (also for racing creates)', async () => {
  assertProblem(await t.request('POST', '/tags', { body: { name: 'x' } }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('POST', '/tags', { token: await t.token('x'), body: { name: 'x' } }), 403, 'NOT_REGISTERED');
  for (const body of [{}, { name: null }, { name: '' }, { name: 'x', status: 'approved' }, { name: 'x'.repeat(201) }]) {
    assertProblem(await t.request('POST', '/tags', { token: alice, body }), 422, 'INVALID_BODY');
  }
  await create('taken');
  const dup = await t.request('POST', '/tags', { token: alice, body: { name: 'taken' } });
  assertProblem(dup, 409, 'DUPLICATE');
  assert.is(dup.body.detail, 'Tag taken already exists.');
  const race = await Promise.all([0, 1].map(() => t.request('POST', '/tags', { token: alice, body: { name: 'racing' } })));
  assert.equal(race.map((r) => r.status).sort(), [201, 409]);
  assert.is(await t.server.context.orm.em.fork().count(Tag, { name: 'racing' }), 1);
});

test('GET /tags/{id}: 404 for unknown and malformed ids', async () => {
  assertProblem(await t.request('GET', `/tags/${randomUUID()}`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', '/tags/not-a-uuid'), 404, 'NOT_FOUND');
});

test('review: a tag on review is listed only with status=on_review; approve, approve twice, reject', async () => {
  const a = await create('review-me', alice);
  const ids = async (status?: string) =>
    (await t.request('GET', '/tags', { query: { name: 'review-me', status } })).body.items.map((i: any) => i.id);
  assert.equal(await ids(), []);
  assert.equal(await ids('on_review'), [a.id]);
  assert.is((await t.request('POST', `/tags/${a.id}:approve`, { token: admin })).status, 204);
  assert.equal(await ids(), [a.id]);
  assertProblem(await t.request('POST', `/tags/${a.id}:approve`, { token: admin }), 409, 'ALREADY_APPROVED');
  assertProblem(await t.request('POST', `/tags/${a.id}:reject`, { token: admin }), 409, 'ALREADY_APPROVED');
  const r = await create('reject-me', alice);
  assert.is((await t.request('POST', `/tags/${r.id}:reject`, { token: admin })).status, 204);
  assertProblem(await t.request('GET', `/tags/${r.id}`), 404, 'NOT_FOUND');
  for (const verb of ['approve', 'reject']) {
    assertProblem(await t.request('POST', `/tags/${a.id}:${verb}`), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('POST', `/tags/${a.id}:${verb}`, { token: alice }), 403, 'NOT_ADMIN');
    assertProblem(await t.request('POST', `/tags/${randomUUID()}:${verb}`, { token: admin }), 404, 'NOT_FOUND');
    assertProblem(await t.request('POST', `/tags/1:${verb}`, { token: admin }), 404, 'NOT_FOUND');
  }
});

test('PUT /tags/{id}: replaces name and description; 409 on a taken name; 401, 403, 404, 422', async () => {
  const a = await create('put-old', alice, 'old');
  const res = await t.request('PUT', `/tags/${a.id}`, { token: admin, body: { name: 'put-new', description: 'new' } });
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { id: a.id, name: 'put-new', description: 'new', status: 'on_review' });
  assert.equal((await t.request('GET', `/tags/${a.id}`)).body, res.body);
  await create('put-taken');
  assertProblem(await t.request('PUT', `/tags/${a.id}`, { token: admin, body: { name: 'put-taken' } }), 409, 'DUPLICATE');
  assertProblem(await t.request('PUT', `/tags/${a.id}`, { token: admin, body: { description: 'x' } }), 422, 'INVALID_BODY');
  assertProblem(await t.request('PUT', `/tags/${a.id}`, { body: { name: 'x' } }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('PUT', `/tags/${a.id}`, { token: alice, body: { name: 'x' } }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('PUT', `/tags/${randomUUID()}`, { token: admin, body: { name: 'x' } }), 404, 'NOT_FOUND');
});

test('DELETE /tags/{id}: 409 REFERENCED with the count; cascade removes the tag from results, which stay', async () => {
  const tag = await create('in-use');
  const results = await tagResults(tag.id);
  const refused = await t.request('DELETE', `/tags/${tag.id}`, { token: admin });
  assertProblem(refused, 409, 'REFERENCED');
  assert.is(refused.body.count, 2);
  assert.match(refused.body.detail, 'remove the tag from them');
  assert.is((await t.request('DELETE', `/tags/${tag.id}`, { token: admin, query: { cascade: true } })).status, 204);
  assertProblem(await t.request('GET', `/tags/${tag.id}`), 404, 'NOT_FOUND');
  const em = t.server.context.orm.em.fork();
  assert.is(await em.count(Result, { id: { $in: results } }), 2, 'the results stay');
  assert.is(await em.count(ResultTag, { tag_id: tag.id }), 0);

  const free = await create('free', alice);
  assertProblem(await t.request('DELETE', `/tags/${free.id}`), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('DELETE', `/tags/${free.id}`, { token: alice }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('DELETE', `/tags/${free.id}`, { token: admin, query: { recursive: true } }), 422, 'INVALID_QUERY');
  assert.is((await t.request('DELETE', `/tags/${free.id}`, { token: admin })).status, 204);
  assertProblem(await t.request('DELETE', `/tags/${free.id}`, { token: admin }), 404, 'NOT_FOUND');
});

test('GET /tags and :search: name filter, terms, sort with ties, pagination, 422', async () => {
  const made = [
    await create('s-cpu', admin, 'Compute bound'),
    await create('s-mem', admin, 'Memory bound'),
    await create('s-io', admin, 'Compute and IO'),
    await create('s-net', admin, 'Memory bound'),
  ];
  assert.equal(
    (await t.request('GET', '/tags', { query: { name: 's-io' } })).body.items.map((x: any) => x.id),
    [made[2].id],
  );
  const search = async (query: Record<string, string | string[] | number>) => (await t.request('GET', '/tags:search', { query })).body;
  assert.equal(
    (await search({ terms: 'COMPUTE' })).items.map((x: any) => x.name),
    ['s-cpu', 's-io'],
  );
  assert.equal(
    (await search({ terms: ['bound', 'memory'] })).items.map((x: any) => x.name),
    ['s-mem', 's-net'],
  );
  assert.equal(
    (await search({ terms: 's-', sort_by: '-name' })).items.map((x: any) => x.name),
    ['s-net', 's-mem', 's-io', 's-cpu'],
  );
  const memory = made
    .filter((x) => x.description === 'Memory bound')
    .sort((x, y) => (x.id < y.id ? -1 : 1))
    .map((x) => x.name);
  assert.equal(
    (await search({ terms: 's-', sort_by: '-description' })).items.slice(0, 2).map((x: any) => x.name),
    memory,
    'ties by id',
  );
  const p = await search({ terms: 's-', per_page: 3 });
  assert.equal([p.items.length, p.total, p.pages, p.has_next, p.next_num, p.has_prev, p.prev_num], [3, 4, 2, true, 2, false, null]);
  const last = await search({ terms: 's-', per_page: 3, page: 2 });
  assert.equal([last.items.map((x: any) => x.name), last.has_next, last.next_num], [['s-net'], false, null]);
  assertProblem(await t.request('GET', '/tags', { query: { sort_by: '+upload_datetime' } }), 422, 'INVALID_SORT');
  assertProblem(await t.request('GET', '/tags', { query: { per_page: 0 } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('GET', '/tags:search', { query: { per_page: 101 } }), 422, 'INVALID_QUERY');
  assertProblem(await t.request('GET', '/tags:search', { query: { tag: 'x' } }), 422, 'INVALID_QUERY');
});

test.run();
