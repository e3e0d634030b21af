/** Benchmarks: create, review, update, delete, lists, search and sorting against a real server. */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Benchmark, Result } from '../src/entities/index.ts';

let t: TestServer;
let alice: string; // a registered user
let bob: string; // another registered user
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'benchmarks');
  [alice, bob, admin] = await Promise.all([t.user('alice'), t.user('bob'), t.admin('root')]);
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

async function create(image: string, tag = '1.0', token = admin, extra: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/benchmarks', { token, body: body(image, tag, extra) });
  assert.is(res.status, 201, res.text);
  return res.body;
}

/** A result referring to the benchmark, inserted directly (results are another part of the API). */
async function insertResult(benchmarkId: string): Promise<string> {
  const site = await t.request('POST', '/sites', { token: admin, body: { name: `site-${randomUUID()}`, address: 'here' } });
  const flavor = await t.request('POST', `/sites/${site.body.id}/flavors`, { token: admin, body: { name: 'small' } });
  const em = t.server.context.orm.em.fork();
  const id = randomUUID();
  em.create(Result, {
    id,
    benchmark_id: benchmarkId,
    site_id: site.body.id,
    flavor_id: flavor.body.id,
    json: { time: 1 },
    execution_datetime: new Date(),
    upload_datetime: new Date(),
    uploader_iss: t.issuer.issuer,
    uploader_sub: 'alice',
  });
  await em.flush();
  return id;
}

// ---------------------------------------------------------------------------------------------
// POST /benchmarks

test('POST /benchmarks: a user submits a benchmark; it is stored on review with the caller as uploader', async () => {
  const before = Date.now();
  const res = await t.request('POST', '/benchmarks', {
    token: alice,
    body: body('ghcr.io/org/c-ray', '1.2', { description: 'Ray tracing', url: 'https://example.org/c-ray' }),
  });
  assert.is(res.status, 201, res.text);
  const b = res.body;
  assert.equal(Object.keys(b).sort(), [
    'container_image',
    'container_tag',
    'description',
    'docker_image',
    'docker_tag',
    'id',
    'json_schema',
    'name',
    'status',
    'upload_datetime',
    'url',
  ]);
  assert.is(b.name, 'ghcr.io/org/c-ray:1.2');
  assert.is(b.status, 'on_review');
  assert.is(b.description, 'Ray tracing');
  assert.is(b.url, 'https://example.org/c-ray');
  assert.equal(b.json_schema, body('x').json_schema);
  assert.not.match(b.upload_datetime, /Z$/);
  const uploaded = Date.parse(`${b.upload_datetime}Z`);
  assert.ok(uploaded >= before - 1000 && uploaded <= Date.now() + 1000);

  const read = await t.request('GET', `/benchmarks/${b.id}`);
  assert.is(read.status, 200);
  assert.equal(read.body, b);
  const stored = await t.server.context.orm.em.fork().findOneOrFail(Benchmark, { id: b.id });
  assert.is(stored.uploader_sub, 'alice');
  assert.is(stored.uploader_iss, t.issuer.issuer);
  assert.not.match(read.text, /@test\.example/, 'no email in public responses');
});

test('POST /benchmarks: optional fields are null when absent; an admin upload is approved at once', async () => {
  const res = await t.request('POST', '/benchmarks', { token: admin, body: body('library/minimal', 'v1') });
  assert.is(res.status, 201);
  assert.is(res.body.description, null);
  assert.is(res.body.url, null);
  assert.is(res.body.status, 'approved');
  const list = await t.request('GET', '/benchmarks', { query: { container_image: 'library/minimal' } });
  assert.equal(
    list.body.items.map((i: any) => i.id),
    [res.body.id],
  );
});

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

test('POST /benchmarks: 401 without a token, 403 for an unregistered user', async () => {
  assertProblem(await t.request('POST', '/benchmarks', { body: body('noauth') }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('POST', '/benchmarks', { token: await t.token('x'), body: body('noauth') }), 403, 'NOT_REGISTERED');
  const list = await t.request('GET', '/benchmarks:search', { query: { terms: 'noauth', status: 'on_review' } });
  assert.is(list.body.total, 0);
});

test('POST /benchmarks: 422 for each kind of invalid body', async () => {
  const cases: [unknown, string, string][] = [
    [{ container_image: 'a', json_schema: {} }, 'INVALID_BODY', '/container_tag'],
    [{ ...body('a'), container_tag: 5 }, 'INVALID_BODY', '/container_tag'],
    [{ ...body('a'), id: randomUUID() }, 'INVALID_BODY', '/id'],
    [{}, 'INVALID_BODY', '/container_image'],
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
    [body('a', '1', { description: 'd'.repeat(2001) }), 'INVALID_BODY', '/description'],
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

test('POST /benchmarks: the same image and tag twice is 409 DUPLICATE naming it, also when both race', async () => {
  await create('dup/img', '1.0', alice);
  const again = await t.request('POST', '/benchmarks', { token: bob, body: body('dup/img', '1.0') });
  assertProblem(again, 409, 'DUPLICATE');
  assert.match(again.body.detail, 'Benchmark dup/img:1.0 already exists.');
  // Another tag of the same image is another benchmark.
  await create('dup/img', '2.0', alice);

  const race = await Promise.all([1, 2, 3].map(() => t.request('POST', '/benchmarks', { token: alice, body: body('race/img', '1') })));
  assert.equal(race.map((r) => r.status).sort(), [201, 409, 409]);
  for (const r of race.filter((r) => r.status === 409)) assert.is(r.body.code, 'DUPLICATE');
  const count = await t.server.context.orm.em.fork().count(Benchmark, { container_image: 'race/img' });
  assert.is(count, 1);
});

// ---------------------------------------------------------------------------------------------
// GET /benchmarks/{id} and review

test('GET /benchmarks/{id}: any status; 404 for an unknown and for a malformed id', async () => {
  const b = await create('get/pending', '1', alice);
  assert.is((await t.request('GET', `/benchmarks/${b.id}`)).body.status, 'on_review');
  assertProblem(await t.request('GET', `/benchmarks/${randomUUID()}`), 404, 'NOT_FOUND');
  assertProblem(await t.request('GET', '/benchmarks/not-a-uuid'), 404, 'NOT_FOUND');
});

test('review: an item on review is only listed with status=on_review until approved', async () => {
  const b = await create('review/vis', '1', alice);
  const listed = async (status?: string) =>
    (await t.request('GET', '/benchmarks', { query: { container_image: 'review/vis', status } })).body.items.map((i: any) => i.id);
  assert.equal(await listed(), []);
  assert.equal(await listed('on_review'), [b.id]);
  const searched = await t.request('GET', '/benchmarks:search', { query: { terms: 'review/vis' } });
  assert.is(searched.body.total, 0);

  assert.is((await t.request('POST', `/benchmarks/${b.id}:approve`, { token: admin })).status, 204);
  assert.equal(await listed(), [b.id]);
  assert.equal(await listed('on_review'), []);
  assert.is((await t.request('GET', `/benchmarks/${b.id}`)).body.status, 'approved');

  const twice = await t.request('POST', `/benchmarks/${b.id}:approve`, { token: admin });
  assertProblem(twice, 409, 'ALREADY_APPROVED');
  assertProblem(await t.request('POST', `/benchmarks/${b.id}:reject`, { token: admin }), 409, 'ALREADY_APPROVED');
  assert.is((await t.request('GET', `/benchmarks/${b.id}`)).status, 200, 'a failed reject changes nothing');
});

test('review: racing approvals give one 204 and one 409; a reject racing an approve never gives 500', async () => {
  const a = await create('review/race', '1', alice);
  const approvals = await Promise.all([0, 1].map(() => t.request('POST', `/benchmarks/${a.id}:approve`, { token: admin })));
  assert.equal(approvals.map((r) => r.status).sort(), [204, 409]);
  const b = await create('review/race', '2', alice);
  const mixed = await Promise.all(['approve', 'reject'].map((verb) => t.request('POST', `/benchmarks/${b.id}:${verb}`, { token: admin })));
  const statuses = mixed.map((r) => r.status);
  assert.ok(statuses.includes(204) && statuses.every((s) => s === 204 || s === 404 || s === 409), String(statuses));
});

test('POST /benchmarks/{id}:reject deletes an item on review', async () => {
  const b = await create('review/reject', '1', alice);
  assert.is((await t.request('POST', `/benchmarks/${b.id}:reject`, { token: admin })).status, 204);
  assertProblem(await t.request('GET', `/benchmarks/${b.id}`), 404, 'NOT_FOUND');
  // The image and tag are free again.
  await create('review/reject', '1', alice);
});

test('approve and reject: 401, 403 for a user and an unregistered admin, 404 for unknown and malformed ids', async () => {
  const b = await create('review/auth', '1', alice);
  for (const verb of ['approve', 'reject']) {
    assertProblem(await t.request('POST', `/benchmarks/${b.id}:${verb}`), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('POST', `/benchmarks/${b.id}:${verb}`, { token: alice }), 403, 'NOT_ADMIN');
    assertProblem(await t.request('POST', `/benchmarks/${b.id}:${verb}`, { token: await t.token('x') }), 403, 'NOT_REGISTERED');
    assertProblem(await t.request('POST', `/benchmarks/${randomUUID()}:${verb}`, { token: admin }), 404, 'NOT_FOUND');
    assertProblem(await t.request('POST', `/benchmarks/not-a-uuid:${verb}`, { token: admin }), 404, 'NOT_FOUND');
  }
  assert.is((await t.request('GET', `/benchmarks/${b.id}`)).body.status, 'on_review');
});

// ---------------------------------------------------------------------------------------------
// PUT /benchmarks/{id}

test('PUT /benchmarks/{id}: an admin replaces the editable fields; status and upload time stay', async () => {
  const b = await create('put/img', '1', alice, { description: 'old', url: 'https://old.example.org' });
  const res = await t.request('PUT', `/benchmarks/${b.id}`, {
    token: admin,
    body: { ...body('put/img2', '2'), json_schema: { type: 'object', required: ['x'] } },
  });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.name, 'put/img2:2');
  assert.is(res.body.description, null, 'absent optional fields become null');
  assert.is(res.body.url, null);
  assert.is(res.body.status, 'on_review');
  assert.is(res.body.upload_datetime, b.upload_datetime);
  assert.equal((await t.request('GET', `/benchmarks/${b.id}`)).body, res.body);
});

test('PUT /benchmarks/{id}: 409 on a taken image and tag, 422, 401, 403, 404', async () => {
  const a = await create('put/taken', '1');
  const b = await create('put/other', '1');
  const clash = await t.request('PUT', `/benchmarks/${b.id}`, { token: admin, body: body('put/taken', '1') });
  assertProblem(clash, 409, 'DUPLICATE');
  assert.match(clash.body.detail, 'put/taken:1');
  assert.is((await t.request('GET', `/benchmarks/${b.id}`)).body.container_image, 'put/other');
  // A read-only field may be echoed as read, not changed (compat-read-only.test.ts has the rest).
  const restatus = await t.request('PUT', `/benchmarks/${a.id}`, {
    token: admin,
    body: { ...body('put/taken', '1'), status: 'on_review' },
  });
  assertProblem(restatus, 422, 'INVALID_BODY');
  assert.equal(
    restatus.body.errors.map((e: any) => e.path),
    ['/status'],
  );
  assertProblem(
    await t.request('PUT', `/benchmarks/${a.id}`, { token: admin, body: { ...body('put/taken', '1'), uploader: 'x' } }),
    422,
    'INVALID_BODY',
  );
  assertProblem(
    await t.request('PUT', `/benchmarks/${a.id}`, { token: admin, body: { ...body('put/taken', '1'), json_schema: { type: 1 } } }),
    422,
    'INVALID_JSON_SCHEMA',
  );
  assertProblem(await t.request('PUT', `/benchmarks/${a.id}`, { body: body('put/taken') }), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('PUT', `/benchmarks/${a.id}`, { token: alice, body: body('put/taken') }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('PUT', `/benchmarks/${randomUUID()}`, { token: admin, body: body('put/new') }), 404, 'NOT_FOUND');
  assertProblem(await t.request('PUT', '/benchmarks/nope', { token: admin, body: body('put/new') }), 404, 'NOT_FOUND');
});

// ---------------------------------------------------------------------------------------------
// DELETE /benchmarks/{id}

test('DELETE /benchmarks/{id}: 409 REFERENCED with the count of results, then cascade deletes them', async () => {
  const b = await create('del/used', '1');
  const r1 = await insertResult(b.id);
  const r2 = await insertResult(b.id);
  const refused = await t.request('DELETE', `/benchmarks/${b.id}`, { token: admin });
  assertProblem(refused, 409, 'REFERENCED');
  assert.is(refused.body.count, 2);
  assert.match(refused.body.detail, 'del/used:1 is referenced by 2 results');
  assertProblem(await t.request('DELETE', `/benchmarks/${b.id}`, { token: admin, query: { cascade: false } }), 409, 'REFERENCED');
  assert.is((await t.request('GET', `/benchmarks/${b.id}`)).status, 200);

  const res = await t.request('DELETE', `/benchmarks/${b.id}`, { token: admin, query: { cascade: true } });
  assert.is(res.status, 204);
  assert.is(res.text, '');
  assertProblem(await t.request('GET', `/benchmarks/${b.id}`), 404, 'NOT_FOUND');
  assert.is(await t.server.context.orm.em.fork().count(Result, { id: { $in: [r1, r2] } }), 0);
});

test('DELETE /benchmarks/{id}: an unreferenced item of any status goes; 401, 403, 404, 422', async () => {
  const approved = await create('del/free', '1');
  const pending = await create('del/free', '2', alice);
  assertProblem(await t.request('DELETE', `/benchmarks/${approved.id}`), 401, 'MISSING_TOKEN');
  assertProblem(await t.request('DELETE', `/benchmarks/${approved.id}`, { token: alice }), 403, 'NOT_ADMIN');
  assertProblem(await t.request('DELETE', `/benchmarks/${approved.id}`, { token: admin, query: { force: 1 } }), 422, 'INVALID_QUERY');
  assertProblem(
    await t.request('DELETE', `/benchmarks/${approved.id}`, { token: admin, query: { cascade: 'maybe' } }),
    422,
    'INVALID_QUERY',
  );
  for (const b of [approved, pending]) {
    assert.is((await t.request('DELETE', `/benchmarks/${b.id}`, { token: admin })).status, 204);
    assertProblem(await t.request('GET', `/benchmarks/${b.id}`), 404, 'NOT_FOUND');
  }
  assertProblem(await t.request('DELETE', `/benchmarks/${approved.id}`, { token: admin }), 404, 'NOT_FOUND');
  assertProblem(await t.request('DELETE', '/benchmarks/123', { token: admin }), 404, 'NOT_FOUND');
});

// ---------------------------------------------------------------------------------------------
// Lists, search, sort and pages

test('GET /benchmarks: exact filters on image and tag, strict upload bounds', async () => {
  const a = await create('filter/img', '1');
  await new Promise((r) => setTimeout(r, 5));
  const b = await create('filter/img', '2');
  await create('filter/img-other', '1');
  const ids = async (query: Record<string, string>) => (await t.request('GET', '/benchmarks', { query })).body.items.map((i: any) => i.id);
  assert.equal(await ids({ container_image: 'filter/img' }), [a.id, b.id]);
  assert.equal(await ids({ container_image: 'filter/img', container_tag: '2' }), [b.id]);
  assert.equal(await ids({ container_image: 'filter/im' }), [], 'exact, not a prefix');
  assert.equal(await ids({ container_image: 'filter/img', upload_after: `${a.upload_datetime}Z` }), [b.id]);
  assert.equal(await ids({ container_image: 'filter/img', upload_before: `${b.upload_datetime}Z` }), [a.id]);
  assert.equal(await ids({ container_image: 'filter/img', upload_before: '2000-01-01' }), []);
  assert.equal(await ids({ container_image: 'filter/img', upload_after: '2000-01-01' }), [a.id, b.id]);
});

test('GET /benchmarks:search: every term must match image, tag or description, case-insensitively', async () => {
  const a = await create('search/alpha', 'v1', admin, { description: 'Fast Fourier Transform' });
  const b = await create('search/beta', 'fourier-2', admin);
  await create('search/gamma', '1', admin, { description: '100% literal_' });
  const ids = async (terms: string[]) =>
    (await t.request('GET', '/benchmarks:search', { query: { terms } })).body.items.map((i: any) => i.id);
  assert.equal(await ids(['FOURIER']), [a.id, b.id]);
  assert.equal(await ids(['fourier', 'ALPHA']), [a.id]);
  assert.equal(await ids(['fourier', 'nothing']), []);
  assert.equal((await ids(['%'])).length, 1, '% matches literally');
  assert.equal((await ids(['l_teral'])).length, 0, '_ matches literally');
  const all = await t.request('GET', '/benchmarks:search', { query: { terms: '' } });
  const listed = await t.request('GET', '/benchmarks');
  assert.is(all.body.total, listed.body.total, 'an empty terms= means no term');
  const arrayStyle = await t.request('GET', '/benchmarks:search', { query: { 'terms[]': ['fourier', 'beta'] } });
  assert.equal(
    arrayStyle.body.items.map((i: any) => i.id),
    [b.id],
  );
});

test('GET /benchmarks: pagination arithmetic', async () => {
  const created = [];
  for (let i = 1; i <= 5; i++) created.push(await create('page/img', `${i}`));
  const page = async (n: number) =>
    (await t.request('GET', '/benchmarks', { query: { container_image: 'page/img', per_page: 2, page: n } })).body;
  const p1 = await page(1);
  assert.type(p1.next_cursor, 'string', 'a page with a next one has its cursor');
  assert.equal(
    { ...p1, items: p1.items.map((i: any) => i.container_tag), next_cursor: 'set' },
    {
      items: ['1', '2'],
      has_next: true,
      has_prev: false,
      next_num: 2,
      prev_num: null,
      page: 1,
      pages: 3,
      per_page: 2,
      total: 5,
      next_cursor: 'set',
    },
  );
  const p3 = await page(3);
  assert.equal(
    { ...p3, items: p3.items.map((i: any) => i.container_tag) },
    {
      items: ['5'],
      has_next: false,
      has_prev: true,
      next_num: null,
      prev_num: 2,
      page: 3,
      pages: 3,
      per_page: 2,
      total: 5,
      next_cursor: null,
    },
  );
  const past = await page(4);
  assert.equal(past.items, []);
  assert.is(past.total, 5);
  assert.is(past.pages, 3);
  assert.is(past.has_next, false);
  const none = (await t.request('GET', '/benchmarks', { query: { container_image: 'page/none' } })).body;
  assert.equal(none, {
    items: [],
    has_next: false,
    has_prev: false,
    next_num: null,
    prev_num: null,
    page: 1,
    pages: 0,
    per_page: 100,
    total: 0,
    next_cursor: null,
  });
});

test('GET /benchmarks: sort_by with several terms, descending, and id as the tie-breaker', async () => {
  const made = [
    await create('sort/b', '1', admin, { description: 'same' }),
    await create('sort/a', '2', admin, { description: 'same' }),
    await create('sort/a', '1', admin, { description: 'other' }),
    await create('sort/c', '1', admin, { description: 'same' }),
  ];
  const order = async (sort_by?: string) =>
    (await t.request('GET', '/benchmarks:search', { query: { terms: 'sort/', sort_by } })).body.items.map((i: any) => i.name);
  assert.equal(await order(), ['sort/a:1', 'sort/a:2', 'sort/b:1', 'sort/c:1'], 'default: image, then tag');
  assert.equal(await order('-name'), ['sort/c:1', 'sort/b:1', 'sort/a:2', 'sort/a:1']);
  assert.equal(await order('+description,-container_image'), ['sort/a:1', 'sort/c:1', 'sort/b:1', 'sort/a:2']);
  // Ties on every term fall back to id.
  const sameById = made
    .filter((b) => b.description === 'same')
    .sort((x, y) => (x.id < y.id ? -1 : 1))
    .map((b) => b.name);
  assert.equal((await order('-description')).slice(0, 3), sameById);
  assert.equal(
    await order('+id'),
    [...made].sort((x, y) => (x.id < y.id ? -1 : 1)).map((b) => b.name),
  );
  assert.equal(await order('-upload_datetime'), made.map((b) => b.name).reverse());
});

test('GET /benchmarks and :search: 422 for unknown parameters, bad sort, bad pages, bad dates and status', async () => {
  const cases: [string, Record<string, string | number>, string][] = [
    ['/benchmarks', { filter: 'x' }, 'INVALID_QUERY'],
    ['/benchmarks', { terms: 'x' }, 'INVALID_QUERY'],
    ['/benchmarks', { sort_by: '+nope' }, 'INVALID_SORT'],
    ['/benchmarks', { sort_by: 'name' }, 'INVALID_SORT'],
    ['/benchmarks', { sort_by: '+json_schema' }, 'INVALID_SORT'],
    ['/benchmarks', { per_page: 0 }, 'INVALID_QUERY'],
    ['/benchmarks', { per_page: 101 }, 'INVALID_QUERY'],
    ['/benchmarks', { page: 0 }, 'INVALID_QUERY'],
    ['/benchmarks', { upload_before: 'yesterday' }, 'INVALID_QUERY'],
    ['/benchmarks', { status: 'rejected' }, 'INVALID_QUERY'],
    ['/benchmarks:search', { container_image: 'x' }, 'INVALID_QUERY'],
    ['/benchmarks:search', { sort_by: '-nope' }, 'INVALID_SORT'],
    ['/benchmarks:search', { per_page: 101 }, 'INVALID_QUERY'],
  ];
  for (const [path, query, code] of cases) assertProblem(await t.request('GET', path, { query }), 422, code);
  const ok = await t.request('GET', '/benchmarks', { query: { per_page: 100, sort_by: ' name' } });
  assert.is(ok.status, 200, 'a + decoded as a space still sorts ascending');
});

test.run();
