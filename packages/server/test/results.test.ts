/**
 * Results: upload (schema validation, catalogue checks, dates), reading, tags, deletion, the
 * uploader view and the caller's own results. Real server, real PostgreSQL, real tokens.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, upload, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let bob: string;
let admin: string;

/** A real multi-level schema (draft 2020-12) with formats and a custom annotation. */
const CRAY = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['machine', 'result', 'started'],
  properties: {
    started: { type: 'string', format: 'date-time' },
    machine: {
      type: 'object',
      required: ['cpu'],
      properties: {
        cpu: {
          type: 'object',
          required: ['count'],
          properties: { count: { type: 'integer', minimum: 1, suggestToUser: true }, arch: { type: 'string' } },
        },
      },
    },
    result: {
      type: 'object',
      required: ['score'],
      properties: { score: { type: 'number', minimum: 0 }, runs: { type: 'array', items: { type: 'number' } } },
    },
  },
};
/** A draft-07 schema with definitions, $ref and a format. */
const DRAFT7 = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  definitions: { positive: { type: 'number', exclusiveMinimum: 0 } },
  type: 'object',
  required: ['time', 'contact'],
  properties: { time: { $ref: '#/definitions/positive' }, contact: { type: 'string', format: 'email' } },
  additionalProperties: false,
};
const GOOD = { started: '2024-05-01T10:00:00Z', machine: { cpu: { count: 8, arch: 'x86_64' } }, result: { score: 2270.5 } };

let cray: { id: string };
let draft7: { id: string };
let open: { id: string };
let pendingBenchmark: { id: string };
let site: { id: string; name: string };
let flavor: { id: string; site_id: string };
let pendingFlavor: { id: string };
let tagA: { id: string; name: string };
let tagB: { id: string; name: string };
let pendingTag: { id: string };

test.before(async () => {
  t = await startTestServer({}, 'results');
  seed = await createSeeder(t);
  [alice, bob, admin] = await Promise.all([t.user('alice'), t.user('bob'), t.admin()]);
  cray = await seed.benchmark({ schema: CRAY });
  draft7 = await seed.benchmark({ schema: DRAFT7 });
  open = await seed.benchmark({ schema: {} });
  pendingBenchmark = await seed.benchmark({ status: 'on_review' });
  site = await seed.site({ name: 'CESGA' });
  flavor = await seed.flavor(site.id, { name: 'hpc.8core-16ram' });
  pendingFlavor = await seed.flavor(site.id, { status: 'on_review' });
  tagA = await seed.tag({ name: 'a-cpu' });
  tagB = await seed.tag({ name: 'b-baseline' });
  pendingTag = await seed.tag({ status: 'on_review' });
});
test.after(async () => {
  await t.close();
});

const at = { benchmark_id: '', flavor_id: '' };
const q = (o: Partial<typeof at> & { execution_datetime?: string; tags_ids?: string[] } = {}) => ({
  benchmark_id: cray.id,
  flavor_id: flavor.id,
  ...o,
});

test('POST /results: 201 with the stored result, embedded objects and UTC timestamps', async () => {
  const before = Date.now();
  const res = await upload(t, alice, q({ execution_datetime: '2024-05-01T14:00:00+02:00', tags_ids: [tagB.id, tagA.id, tagB.id] }), GOOD);
  assert.is(res.status, 201, res.text);
  const r = res.body;
  assert.match(r.id, /^[0-9a-f-]{36}$/);
  assert.is(r.execution_datetime, '2024-05-01T12:00:00.000');
  assert.not.match(r.upload_datetime, /Z$/);
  const uploaded = Date.parse(`${r.upload_datetime}Z`);
  assert.ok(uploaded >= before - 1000 && uploaded <= Date.now() + 1000);
  assert.equal(r.json, GOOD);
  assert.is(r.hidden, false);
  assert.equal(Object.keys(r).sort(), [
    'benchmark',
    'execution_datetime',
    'flavor',
    'hidden',
    'id',
    'json',
    'site',
    'tags',
    'upload_datetime',
  ]);
  assert.is(r.benchmark.id, cray.id);
  assert.match(r.benchmark.name, /^ghcr\.io\/test\/bench-.*:1\.0$/);
  assert.equal(r.benchmark.json_schema, CRAY);
  assert.is(r.benchmark.status, 'approved');
  assert.equal(Object.keys(r.site).sort(), ['address', 'description', 'id', 'name', 'status', 'upload_datetime']);
  assert.is(r.site.id, site.id, 'the site comes from the flavor');
  assert.is(r.flavor.id, flavor.id);
  assert.is(r.flavor.site_id, site.id);
  // duplicates collapsed, ordered by name, shaped as SPEC.md's Tag (no upload_datetime)
  assert.equal(r.tags, [
    { id: tagA.id, name: 'a-cpu', description: null, status: 'approved' },
    { id: tagB.id, name: 'b-baseline', description: null, status: 'approved' },
  ]);

  const got = await t.request('GET', `/results/${r.id}`);
  assert.is(got.status, 200);
  assert.equal(got.body, r);
  const stored = await seed.sql<{ n: number }>('select count(*)::int as n from result_tag where result_id = ?', [r.id]);
  assert.is(stored[0]!.n, 2);
});

test('POST /results: 401 without a token, even with a bad body; 403 when not registered', async () => {
  expectProblem(await upload(t, undefined, q(), [1, 2]), 401, 'MISSING_TOKEN');
  expectProblem(await t.request('POST', '/results', { rawBody: '{not json', query: q() }), 401, 'MISSING_TOKEN');
  expectProblem(await upload(t, await t.token('stranger'), q(), GOOD), 403, 'NOT_REGISTERED');
});

test('POST /results: unknown benchmark, flavor or tag is 404 naming it; unapproved is 422 NOT_APPROVED', async () => {
  const ghost = '00000000-0000-4000-8000-000000000001';
  for (const [query, kind] of [
    [q({ benchmark_id: ghost }), 'Benchmark'],
    [q({ flavor_id: ghost }), 'Flavor'],
    [q({ tags_ids: [tagA.id, ghost] }), 'Tag'],
  ] as const) {
    const res = await upload(t, alice, query, GOOD);
    expectProblem(res, 404, 'NOT_FOUND');
    assert.ok(res.body.detail.includes(kind) && res.body.detail.includes(ghost), res.body.detail);
  }
  for (const [query, id] of [
    [q({ benchmark_id: pendingBenchmark.id }), pendingBenchmark.id],
    [q({ flavor_id: pendingFlavor.id }), pendingFlavor.id],
    [q({ tags_ids: [pendingTag.id] }), pendingTag.id],
  ] as const) {
    const res = await upload(t, alice, query, {});
    expectProblem(res, 422, 'NOT_APPROVED');
    assert.ok(res.body.detail.includes(id), res.body.detail);
  }
  const before = await seed.sql<{ n: number }>('select count(*)::int as n from result');
  expectProblem(await upload(t, alice, q({ benchmark_id: 'not-a-uuid' }), GOOD), 422, 'INVALID_QUERY');
  expectProblem(
    await t.request('POST', '/results', {
      token: alice,
      query: { flavor_id: flavor.id, execution_datetime: '2024-01-01T00:00:00Z' },
      body: GOOD,
    }),
    422,
    'INVALID_QUERY',
  );
  expectProblem(await upload(t, alice, { ...q(), site_id: site.id } as never, GOOD), 422, 'INVALID_QUERY');
  const after = await seed.sql<{ n: number }>('select count(*)::int as n from result');
  assert.is(after[0]!.n, before[0]!.n, 'nothing stored');
});

test('POST /results: execution_datetime needs a zone and must not be in the future', async () => {
  const noZone = await t.request('POST', '/results', {
    token: alice,
    query: { ...q(), execution_datetime: '2024-05-01T12:00:00' },
    body: GOOD,
  });
  expectProblem(noZone, 422, 'INVALID_QUERY');
  assert.is(noZone.body.errors[0].path, 'execution_datetime');
  expectProblem(await upload(t, alice, q({ execution_datetime: '2024-05-01' }), GOOD), 422, 'INVALID_QUERY');
  const future = await upload(t, alice, q({ execution_datetime: '9999-01-01T00:00:00.000Z' }), GOOD);
  expectProblem(future, 422, 'EXECUTION_IN_FUTURE');
  const hourAhead = new Date(Date.now() + 3_600_000).toISOString();
  expectProblem(await upload(t, alice, q({ execution_datetime: hourAhead }), GOOD), 422, 'EXECUTION_IN_FUTURE');
  // a clock a minute ahead is tolerated
  const minuteAhead = new Date(Date.now() + 60_000).toISOString();
  assert.is((await upload(t, alice, q({ execution_datetime: minuteAhead }), GOOD)).status, 201);
  assert.is(
    (await upload(t, alice, q({ execution_datetime: '2024-05-01T12:00:00.123456-05:30' }), GOOD)).body.execution_datetime,
    '2024-05-01T17:30:00.123',
  );
});

test('POST /results: the body must be a JSON object', async () => {
  for (const body of [[GOOD], 'text', 42, null]) {
    const res = await t.request('POST', '/results', {
      token: alice,
      query: { ...q(), execution_datetime: '2024-05-01T12:00:00Z' },
      rawBody: JSON.stringify(body),
    });
    expectProblem(res, 422, 'INVALID_BODY');
  }
  expectProblem(
    await t.request('POST', '/results', { token: alice, query: { ...q(), execution_datetime: '2024-05-01T12:00:00Z' } }),
    422,
    'BODY_REQUIRED',
  );
  expectProblem(
    await t.request('POST', '/results', { token: alice, query: { ...q(), execution_datetime: '2024-05-01T12:00:00Z' }, rawBody: '{"a":' }),
    400,
    'MALFORMED_JSON',
  );
});

test('POST /results: a NUL character, which PostgreSQL cannot store, is 422 naming where it is', async () => {
  for (const [body, path] of [
    [{ a: ['x', 'y\u0000'] }, '/a/1'],
    [{ 'k/\u0000': 1 }, '/k~1\u0000'],
  ] as const) {
    const res = await upload(t, alice, q({ benchmark_id: open.id }), body);
    expectProblem(res, 422, 'UNSUPPORTED_CHARACTER');
    assert.equal(res.body.errors, [{ in: 'json', path, message: 'must not contain the NUL character' }]);
  }
});

test('POST /results: a 2020-12 schema reports every violation with its JSON pointer, formats included', async () => {
  const bad = { started: 'yesterday', machine: { cpu: { count: 0 } }, result: { score: '2270', runs: [1, 'x'] } };
  const res = await upload(t, alice, q(), bad);
  expectProblem(res, 422, 'SCHEMA_VIOLATION');
  const byPath = Object.fromEntries(res.body.errors.map((e: any) => [e.path, e]));
  assert.equal(Object.keys(byPath).sort(), ['/machine/cpu/count', '/result/runs/1', '/result/score', '/started']);
  for (const e of res.body.errors) assert.is(e.in, 'json');
  assert.match(byPath['/started'].message, /date-time/);
  assert.match(byPath['/machine/cpu/count'].message, />= 1/);

  const missing = await upload(t, alice, q(), { started: '2024-05-01T10:00:00Z', machine: { cpu: {} } });
  expectProblem(missing, 422, 'SCHEMA_VIOLATION');
  assert.equal(missing.body.errors.map((e: any) => e.path).sort(), ['/machine/cpu/count', '/result']);
  // the custom keyword suggestToUser does not get in the way, and extra fields are allowed
  assert.is((await upload(t, alice, q(), { ...GOOD, extra: { anything: true } })).status, 201);
});

test('POST /results: a draft-07 schema is applied with its own rules ($ref, format email)', async () => {
  const ok = await upload(t, alice, q({ benchmark_id: draft7.id }), { time: 10.5, contact: 'ops@example.org' });
  assert.is(ok.status, 201, ok.text);
  const bad = await upload(t, alice, q({ benchmark_id: draft7.id }), { time: 0, contact: 'not an email', x: 1 });
  expectProblem(bad, 422, 'SCHEMA_VIOLATION');
  assert.equal(bad.body.errors.map((e: any) => e.path).sort(), ['/contact', '/time', '/x']);
});

test('POST /results: the empty schema {} accepts any object', async () => {
  for (const body of [{}, { a: [1, { b: null }], 'key with spaces': 'Zürich ☃' }]) {
    const res = await upload(t, bob, q({ benchmark_id: open.id }), body);
    assert.is(res.status, 201, res.text);
    assert.equal(res.body.json, body);
  }
});

test('POST /results: uploads check the catalogue as it is now, also after changes made behind the server', async () => {
  // Remembered by the first upload (services/results/upload-targets.ts UploadTargets), then changed with plain SQL,
  // as another server process would.
  const bench = await seed.benchmark({ schema: { type: 'object', required: ['a'] } });
  const s2 = await seed.site();
  const f2 = await seed.flavor(s2.id);
  const tag = await seed.tag({ name: 'cache-1' });
  const target = { benchmark_id: bench.id, flavor_id: f2.id, tags_ids: [tag.id] };
  assert.is((await upload(t, alice, target, { a: 1 })).status, 201);

  await seed.sql('update benchmark set json_schema = ? where id = ?', [JSON.stringify({ type: 'object', required: ['b'] }), bench.id]);
  expectProblem(await upload(t, alice, target, { a: 1 }), 422, 'SCHEMA_VIOLATION');
  assert.is((await upload(t, alice, target, { b: 1 })).status, 201, 'validated against the new schema');

  await seed.sql('update tag set name = ? where id = ?', ['cache-2', tag.id]);
  const renamed = await upload(t, alice, target, { b: 2 });
  assert.is(renamed.status, 201, renamed.text);
  assert.equal(
    renamed.body.tags.map((x: { name: string }) => x.name),
    ['cache-2'],
  );

  for (const [table, id, label] of [
    ['flavor', f2.id, 'Flavor'],
    ['site', s2.id, 'Site'],
    ['tag', tag.id, 'Tag'],
    ['benchmark', bench.id, 'Benchmark'],
  ] as const) {
    await seed.sql(`update ${table} set status = 'on_review' where id = ?`, [id]);
    const refused = await upload(t, alice, target, { b: 3 });
    expectProblem(refused, 422, 'NOT_APPROVED');
    assert.match(refused.body.detail, label);
    await seed.sql(`update ${table} set status = 'approved' where id = ?`, [id]);
  }
  const stored = await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ?', [bench.id]);
  assert.is(stored[0]!.n, 3, 'nothing stored by a refused upload');
  const tagged = await seed.sql<{ n: number }>(
    'select count(*)::int as n from result_tag rt join result r on r.id = rt.result_id where r.benchmark_id = ?',
    [bench.id],
  );
  assert.is(tagged[0]!.n, 3, 'every stored upload has its tag');
});

test('POST /results: a refused upload names its field in errors[] (a site through flavor_id), also after changes behind the server', async () => {
  const ghost = '00000000-0000-4000-8000-000000000002';
  const pendingSite = await seed.site({ status: 'on_review' });
  const flavorOfPendingSite = await seed.flavor(pendingSite.id);
  const broken = await seed.benchmark({ schema: {} });
  await seed.sql('update benchmark set json_schema = ? where id = ?', [JSON.stringify({ type: 12 }), broken.id]);
  for (const [query, status, code, field, message] of [
    [q({ benchmark_id: ghost }), 404, 'NOT_FOUND', 'benchmark_id', 'was not found'],
    [q({ flavor_id: ghost }), 404, 'NOT_FOUND', 'flavor_id', 'was not found'],
    [q({ tags_ids: [tagA.id, ghost] }), 404, 'NOT_FOUND', 'tags_ids', 'was not found'],
    [q({ benchmark_id: pendingBenchmark.id }), 422, 'NOT_APPROVED', 'benchmark_id', 'is not approved'],
    [q({ flavor_id: pendingFlavor.id }), 422, 'NOT_APPROVED', 'flavor_id', 'is not approved'],
    [q({ flavor_id: flavorOfPendingSite.id }), 422, 'NOT_APPROVED', 'flavor_id', 'is a flavor of a site that is not approved'],
    [q({ tags_ids: [pendingTag.id] }), 422, 'NOT_APPROVED', 'tags_ids', 'is not approved'],
    [
      q({ benchmark_id: broken.id }),
      422,
      'INVALID_BENCHMARK_SCHEMA',
      'benchmark_id',
      'names a benchmark whose json_schema does not compile',
    ],
    [q({ execution_datetime: '9999-01-01T00:00:00Z' }), 422, 'EXECUTION_IN_FUTURE', 'execution_datetime', 'must not be in the future'],
  ] as const) {
    const res = await upload(t, alice, query, GOOD);
    expectProblem(res, status, code);
    assert.equal(res.body.errors, [{ in: 'query', path: field, message }], `${code} ${field}: ${res.text}`);
  }
  assert.match(
    (await upload(t, alice, q({ flavor_id: flavorOfPendingSite.id }), GOOD)).body.detail,
    `Site ${pendingSite.id} is not approved`,
  );

  // Remembered by an upload, then changed with plain SQL, as another server process would.
  const bench = await seed.benchmark({ schema: {} });
  const s1 = await seed.site();
  const f1 = await seed.flavor(s1.id);
  const target = { benchmark_id: bench.id, flavor_id: f1.id };
  assert.is((await upload(t, alice, target, {})).status, 201);
  await seed.sql("update site set status = 'on_review' where id = ?", [s1.id]);
  const siteRefused = await upload(t, alice, target, {});
  expectProblem(siteRefused, 422, 'NOT_APPROVED');
  assert.equal(siteRefused.body.errors, [{ in: 'query', path: 'flavor_id', message: 'is a flavor of a site that is not approved' }]);
  await seed.sql("update site set status = 'approved' where id = ?", [s1.id]);
  assert.is((await upload(t, alice, target, {})).status, 201);

  const s2 = await seed.site();
  await seed.sql('update flavor set site_id = ? where id = ?', [s2.id, f1.id]);
  const moved = await upload(t, alice, target, {});
  assert.is(moved.status, 201, moved.text);
  assert.is(moved.body.site.id, s2.id, "the site is the flavor's as it is now");

  await seed.sql('delete from result where flavor_id = ?', [f1.id]);
  await seed.sql('delete from flavor where id = ?', [f1.id]);
  await seed.sql('delete from site where id = ?', [s2.id]);
  const gone = await upload(t, alice, target, {});
  expectProblem(gone, 404, 'NOT_FOUND');
  assert.equal(gone.body.errors, [{ in: 'query', path: 'flavor_id', message: 'was not found' }]);
  assert.match(gone.body.detail, `Flavor ${f1.id} was not found.`);
});

test('GET /results/{id}: 404 for an unknown or malformed id', async () => {
  expectProblem(await t.request('GET', '/results/00000000-0000-4000-8000-00000000abcd'), 404, 'NOT_FOUND');
  expectProblem(await t.request('GET', '/results/nope'), 404, 'NOT_FOUND');
});

test('PUT /results/{id}/tags: the uploader or an admin replaces the tags; others get 403', async () => {
  const r = (await upload(t, alice, q({ benchmark_id: open.id, tags_ids: [tagA.id] }), { n: 1 })).body;
  const put = (token: string | undefined, tags_ids: unknown, id = r.id) =>
    t.request('PUT', `/results/${id}/tags`, { token, body: { tags_ids } });

  expectProblem(await put(bob, [tagB.id]), 403, 'NOT_UPLOADER');
  expectProblem(await put(undefined, [tagB.id]), 401, 'MISSING_TOKEN');
  assert.equal(
    (await t.request('GET', `/results/${r.id}`)).body.tags.map((x: any) => x.id),
    [tagA.id],
    'unchanged',
  );

  const own = await put(alice, [tagB.id, tagA.id, tagB.id]);
  assert.is(own.status, 204);
  assert.is(own.text, '');
  assert.equal(
    (await t.request('GET', `/results/${r.id}`)).body.tags.map((x: any) => x.id),
    [tagA.id, tagB.id],
  );

  assert.is((await put(admin, [tagB.id])).status, 204);
  assert.equal(
    (await t.request('GET', `/results/${r.id}`)).body.tags.map((x: any) => x.id),
    [tagB.id],
  );

  expectProblem(await put(alice, ['00000000-0000-4000-8000-000000000002']), 404, 'NOT_FOUND');
  expectProblem(await put(alice, [pendingTag.id]), 422, 'NOT_APPROVED');
  expectProblem(await put(alice, [tagA.id], '00000000-0000-4000-8000-000000000003'), 404, 'NOT_FOUND');
  expectProblem(await t.request('PUT', `/results/${r.id}/tags`, { token: alice, body: {} }), 422, 'INVALID_BODY');
  expectProblem(
    await t.request('PUT', `/results/${r.id}/tags`, { token: alice, body: { tags_ids: [], bad_field: 1 } }),
    422,
    'INVALID_BODY',
  );
  assert.equal(
    (await t.request('GET', `/results/${r.id}`)).body.tags.map((x: any) => x.id),
    [tagB.id],
    'failed calls change nothing',
  );

  assert.is((await put(alice, [])).status, 204);
  assert.equal((await t.request('GET', `/results/${r.id}`)).body.tags, []);
});

test('PUT /results/{id}/tags: racing replacements end with exactly one requested set; identical ones all succeed', async () => {
  const ROUNDS = 12;
  const storedTags = async (id: string) =>
    (await seed.sql<{ tag_id: string }>('select tag_id from result_tag where result_id = ? order by tag_id', [id])).map((r) => r.tag_id);
  const both = [tagA.id, tagB.id].sort();
  const outcomes = { a: 0, b: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const r = (await upload(t, alice, q({ benchmark_id: open.id }), { race: round })).body;
    const put = (tags_ids: string[], token = alice) => t.request('PUT', `/results/${r.id}/tags`, { token, body: { tags_ids } });

    // Eight identical replacements at once (before: 1 x 204 and 7 x 409 DUPLICATE).
    const same = await Promise.all(Array.from({ length: 8 }, (_, i) => put(both, i % 2 ? admin : alice)));
    assert.equal(
      same.map((res) => res.status),
      Array(8).fill(204),
      `round ${round}: ${same.map((res) => `${res.status} ${res.body?.code ?? ''}`).join(', ')}`,
    );
    assert.equal(await storedTags(r.id), both);

    // {A} racing {B}: one of them wins whole (before: both tags stayed in most rounds).
    await put([]);
    const raced = await Promise.all([put([tagA.id]), put([tagB.id], admin)]);
    assert.equal(
      raced.map((res) => res.status),
      [204, 204],
      `round ${round}: ${raced.map((res) => res.text).join(', ')}`,
    );
    const stored = await storedTags(r.id);
    assert.ok(stored.length === 1 && (stored[0] === tagA.id || stored[0] === tagB.id), `round ${round}: stored ${stored.join(', ')}`);
    assert.equal(
      (await t.request('GET', `/results/${r.id}`)).body.tags.map((x: { id: string }) => x.id),
      stored,
    );
    outcomes[stored[0] === tagA.id ? 'a' : 'b']++;
  }
  console.log(`PUT tags races: ${ROUNDS} rounds, {A} won ${outcomes.a}, {B} won ${outcomes.b}, never both`);
});

test('DELETE /results/{id}: admin only; the result is hidden for good but kept; repeating is 204', async () => {
  const r = (await upload(t, alice, q({ benchmark_id: open.id }), { deleting: true })).body;
  const list = () => t.request('GET', '/results', { query: { benchmark_id: open.id, per_page: 100 } });
  const before = (await list()).body;
  assert.ok(before.items.some((x: any) => x.id === r.id));

  expectProblem(await t.request('DELETE', `/results/${r.id}`, { token: alice }), 403, 'NOT_ADMIN');
  const del = await t.request('DELETE', `/results/${r.id}`, { token: admin });
  assert.is(del.status, 204);
  const after = (await list()).body;
  assert.not.ok(after.items.some((x: any) => x.id === r.id));
  assert.is(after.total, before.total - 1);
  const got = await t.request('GET', `/results/${r.id}`);
  assert.is(got.status, 200);
  assert.is(got.body.hidden, true);
  const stored = await seed.sql<{ deleted: boolean; hidden: boolean }>('select deleted, hidden from result where id = ?', [r.id]);
  assert.equal(stored[0], { deleted: true, hidden: true });
  assert.is((await t.request('DELETE', `/results/${r.id}`, { token: admin })).status, 204);
  expectProblem(await t.request('DELETE', '/results/00000000-0000-4000-8000-000000000004', { token: admin }), 404, 'NOT_FOUND');
});

test('GET /results/{id}/uploader: the uploader with email, for administrators only', async () => {
  const r = (await upload(t, bob, q({ benchmark_id: open.id }), {})).body;
  const res = await t.request('GET', `/results/${r.id}/uploader`, { token: admin });
  assert.is(res.status, 200);
  assert.is(res.body.sub, 'bob');
  assert.is(res.body.iss, t.issuer.issuer);
  assert.is(res.body.email, 'bob@test.example');
  assert.is(res.body.removed, false);
  assert.type(res.body.terms_version, 'string');
  assert.not.match(res.body.registration_datetime, /Z$/);
  expectProblem(await t.request('GET', `/results/${r.id}/uploader`, { token: bob }), 403, 'NOT_ADMIN');
  expectProblem(await t.request('GET', `/results/${r.id}/uploader`), 401, 'MISSING_TOKEN');
  expectProblem(await t.request('GET', '/results/00000000-0000-4000-8000-000000000005/uploader', { token: admin }), 404, 'NOT_FOUND');
  // public responses never carry an email address
  assert.not.match((await t.request('GET', `/results/${r.id}`)).text, /@test\.example/);
});

test("GET /users/self/results: only the caller's results, hidden ones included, every filter applied", async () => {
  const carol = await t.user('carol');
  const mine: any[] = [];
  for (const n of [1, 2, 3])
    mine.push((await upload(t, carol, q({ benchmark_id: open.id, tags_ids: n === 3 ? [tagA.id] : [] }), { n })).body);
  const other = (await upload(t, bob, q({ benchmark_id: open.id }), { n: 2 })).body;
  await seed.sql('update result set hidden = true where id = ?', [mine[1]!.id]);

  const all = await t.request('GET', '/users/self/results', { token: carol });
  assert.is(all.status, 200);
  assert.is(all.body.total, 3);
  assert.equal(all.body.items.map((r: any) => r.id).sort(), mine.map((r) => r.id).sort());
  assert.is(all.body.items.find((r: any) => r.id === mine[1]!.id).hidden, true);
  assert.not.ok(all.body.items.some((r: any) => r.id === other.id));

  const filtered = await t.request('GET', '/users/self/results', { token: carol, query: { filters: 'n >= 2', sort_by: '-json.n' } });
  assert.equal(
    filtered.body.items.map((r: any) => r.json.n),
    [3, 2],
  );
  assert.is(filtered.body.total, 2);
  const tagged = await t.request('GET', '/users/self/results', { token: carol, query: { tags_ids: tagA.id } });
  assert.equal(
    tagged.body.items.map((r: any) => r.id),
    [mine[2]!.id],
  );
  const byTerm = await t.request('GET', '/users/self/results', { token: carol, query: { terms: 'a-CPU' } });
  assert.equal(
    byTerm.body.items.map((r: any) => r.id),
    [mine[2]!.id],
  );
  const none = await t.request('GET', '/users/self/results', { token: carol, query: { benchmark_id: cray.id } });
  assert.equal([none.body.total, none.body.items], [0, []]);

  expectProblem(await t.request('GET', '/users/self/results'), 401, 'MISSING_TOKEN');
  expectProblem(await t.request('GET', '/users/self/results', { token: await t.token('nobody') }), 403, 'NOT_REGISTERED');
  expectProblem(await t.request('GET', '/users/self/results', { token: carol, query: { filters: 'n >> 2' } }), 422, 'INVALID_FILTER');
});

test('GET /results: the envelope, page bounds and unknown parameters', async () => {
  const three = await seed.benchmark();
  await seed.results(
    [1, 2, 3].map((n) => ({
      benchmark_id: three.id,
      site_id: site.id,
      flavor_id: flavor.id,
      json: { n },
      execution_datetime: new Date(Date.UTC(2023, 0, n)),
    })),
  );
  const page = (query: Record<string, string | number>) => t.request('GET', '/results', { query: { benchmark_id: three.id, ...query } });
  const p2 = await page({ per_page: 2, page: 2 });
  assert.is(p2.status, 200);
  assert.equal(
    { ...p2.body, items: p2.body.items.map((r: any) => r.json.n) },
    {
      items: [3],
      has_next: false,
      has_prev: true,
      next_num: null,
      prev_num: 1,
      page: 2,
      pages: 2,
      per_page: 2,
      total: 3,
      next_cursor: null,
    },
  );
  const p1 = await page({ per_page: 2 });
  assert.equal([p1.body.items.map((r: any) => r.json.n), p1.body.next_num, p1.body.prev_num], [[1, 2], 2, null]);
  const past = await page({ per_page: 2, page: 9 });
  assert.equal([past.body.items, past.body.total], [[], 3]);
  expectProblem(await page({ per_page: 101 }), 422, 'INVALID_QUERY');
  expectProblem(await page({ page: 0 }), 422, 'INVALID_QUERY');
  expectProblem(await page({ filter: 'n == 1' }), 422, 'INVALID_QUERY');
  expectProblem(await page({ terms: 'x' }), 422, 'INVALID_QUERY'); // terms belong to the search
});

test.run();
