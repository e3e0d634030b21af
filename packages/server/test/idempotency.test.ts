/**
 * Idempotency-Key on the creating POSTs: a retried request is applied once and answered as the first
 * time. Real server, real PostgreSQL, real tokens.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, type Seeder } from './support/seed.ts';
import { purgeExpiredKeys } from '../src/services/results/idempotency.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let bob: string;
let ids: { strict: string; open: string; flavor: string; site: string };

const STRICT = { type: 'object', required: ['score'], properties: { score: { type: 'number' } } };
const at = '2024-05-01T12:00:00Z';

test.before(async () => {
  t = await startTestServer({}, 'idempotency');
  seed = await createSeeder(t);
  alice = await t.user('idem-alice');
  bob = await t.user('idem-bob');
  const site = (await seed.site()).id;
  ids = {
    strict: (await seed.benchmark({ schema: STRICT })).id,
    open: (await seed.benchmark({ schema: {} })).id,
    site,
    flavor: (await seed.flavor(site)).id,
  };
});

test.after(async () => {
  await t.close();
});

const keyed = (key: string) => ({ 'Idempotency-Key': key });
const upload = (json: Record<string, unknown>, key: string | undefined, token = alice, benchmark = ids.open) =>
  t.request('POST', '/results', {
    token,
    query: { benchmark_id: benchmark, flavor_id: ids.flavor, execution_datetime: at },
    body: json,
    headers: key === undefined ? {} : keyed(key),
  });
/** Results whose json has this `run` marker. */
const stored = async (run: string) =>
  (await seed.sql<{ n: number }>("select count(*)::int as n from result where json->>'run' = ?", [run]))[0]!.n;

test('POST /results: the same key twice gives the same answer (201, same id and body) and stores one result', async () => {
  const run = randomUUID();
  const key = randomUUID();
  const first = await upload({ run, score: 1 }, key);
  assert.is(first.status, 201, first.text);
  assert.is(first.headers.get('idempotent-replayed'), null);
  const again = await upload({ run, score: 1 }, key);
  assert.is(again.status, 201, again.text);
  assert.is(again.headers.get('idempotent-replayed'), 'true');
  assert.match(again.headers.get('content-type') ?? '', /^application\/json/);
  assert.is(again.text, first.text, 'the original answer, byte for byte');
  assert.is(again.body.id, first.body.id);
  assert.is(await stored(run), 1);
  // Member order and white space do not make another request.
  const reordered = await t.request('POST', '/results', {
    token: alice,
    query: { execution_datetime: at, flavor_id: ids.flavor, benchmark_id: ids.open },
    rawBody: `{ "score": 1,\n "run": ${JSON.stringify(run)} }`,
    headers: keyed(key),
  });
  assert.is(reordered.status, 201);
  assert.is(reordered.body.id, first.body.id);
  // Without a key, the same request stores another result, as before.
  assert.is((await upload({ run, score: 1 }, undefined)).status, 201);
  assert.is(await stored(run), 2);
});

test('POST /results: the same key with another body or query is 422 IDEMPOTENCY_KEY_REUSED and stores nothing', async () => {
  const run = randomUUID();
  const key = randomUUID();
  assert.is((await upload({ run, score: 1 }, key)).status, 201);
  const other = await upload({ run, score: 2 }, key);
  expectProblem(other, 422, 'IDEMPOTENCY_KEY_REUSED');
  assert.equal(other.body.errors, [{ in: 'header', path: 'Idempotency-Key', message: 'was used for a different request' }]);
  const otherQuery = await upload({ run, score: 1 }, key, alice, ids.strict);
  expectProblem(otherQuery, 422, 'IDEMPOTENCY_KEY_REUSED');
  // Another operation with the key: refused too.
  const batch = await t.request('POST', '/results:batch', {
    token: alice,
    headers: keyed(key),
    body: { items: [{ benchmark_id: ids.open, flavor_id: ids.flavor, execution_datetime: at, json: { run, score: 1 } }] },
  });
  expectProblem(batch, 422, 'IDEMPOTENCY_KEY_REUSED');
  assert.match(batch.body.detail, 'createResult');
  assert.is(await stored(run), 1);
});

test('POST /results: concurrent identical requests with one key store one result; each answer is it or 409 IDEMPOTENCY_KEY_IN_USE', async () => {
  for (let round = 0; round < 3; round++) {
    const run = randomUUID();
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 8 }, () => upload({ run, score: round }, key)));
    const created = answers.filter((a) => a.status === 201);
    for (const a of answers) {
      if (a.status === 201) continue;
      expectProblem(a, 409, 'IDEMPOTENCY_KEY_IN_USE');
      assert.is(a.headers.get('retry-after'), '1');
    }
    assert.ok(created.length >= 1, answers.map((a) => a.status).join(' '));
    assert.is(new Set(created.map((a) => a.body.id)).size, 1, 'every 201 names the same result');
    assert.is(await stored(run), 1);
    // Once the first is done, a retry gets its answer.
    const retry = await upload({ run, score: round }, key);
    assert.is(retry.status, 201);
    assert.is(retry.body.id, created[0]!.body.id);
    assert.is(await stored(run), 1);
  }
});

test('POST /results:batch retried with its key: stored once, the same ids in the same order', async () => {
  const run = randomUUID();
  const key = randomUUID();
  // Three targets not read before, read in the key's transaction: one statement at a time.
  const flavor = (await seed.flavor(ids.site)).id;
  const benchmarks = [ids.strict, ids.open, (await seed.benchmark({ schema: {} })).id];
  const items = [0, 1, 2].map((i) => ({
    benchmark_id: benchmarks[i]!,
    flavor_id: flavor,
    execution_datetime: at,
    json: { run, score: i },
  }));
  const send = () => t.request('POST', '/results:batch', { token: alice, headers: keyed(key), body: { items } });
  const first = await send();
  assert.is(first.status, 201, first.text);
  assert.is(first.body.ids.length, 3);
  const again = await send();
  assert.is(again.status, 201);
  assert.equal(again.body, first.body);
  assert.is(again.headers.get('idempotent-replayed'), 'true');
  assert.is(await stored(run), 3);
});

test('a refused request remembers nothing: the same key then serves the corrected request', async () => {
  const run = randomUUID();
  const key = randomUUID();
  const refused = await upload({ run, score: 'high' }, key, alice, ids.strict);
  expectProblem(refused, 422, 'SCHEMA_VIOLATION');
  const batchRefused = await t.request('POST', '/results:batch', {
    token: alice,
    headers: keyed(key),
    body: { items: [{ benchmark_id: ids.strict, flavor_id: ids.flavor, execution_datetime: at, json: { run } }] },
  });
  expectProblem(batchRefused, 422, 'BATCH_REFUSED');
  const fixed = await upload({ run, score: 3 }, key, alice, ids.strict);
  assert.is(fixed.status, 201, fixed.text);
  assert.is(fixed.headers.get('idempotent-replayed'), null);
  assert.is(await stored(run), 1);
});

test("another user's same key is independent: each stores and gets its own result", async () => {
  const run = randomUUID();
  const key = randomUUID();
  const a = await upload({ run, score: 1 }, key, alice);
  const b = await upload({ run, score: 1 }, key, bob);
  assert.is(a.status, 201);
  assert.is(b.status, 201);
  assert.is(b.headers.get('idempotent-replayed'), null);
  assert.is.not(a.body.id, b.body.id);
  // A different body under bob's key is not compared with alice's.
  const bobOther = await upload({ run, score: 9 }, `${key}-2`, bob);
  assert.is(bobOther.status, 201);
  assert.is(await stored(run), 3);
  const uploaders = await seed.sql<{ uploader_sub: string }>(
    "select uploader_sub from result where json->>'run' = ? order by uploader_sub",
    [run],
  );
  assert.equal(
    uploaders.map((r) => r.uploader_sub),
    ['idem-alice', 'idem-bob', 'idem-bob'],
  );
});

test('POST /benchmarks, /sites, /sites/{id}/flavors, /tags, /results/{id}:claim: a retry with the key gets the same item, not 409 DUPLICATE or a second claim', async () => {
  const name = randomUUID().slice(0, 8);
  const cases: { path: string; body: unknown; count: () => Promise<number> }[] = [
    {
      path: '/benchmarks',
      body: { container_image: `ghcr.io/idem/${name}`, container_tag: '1', json_schema: STRICT },
      count: async () =>
        (await seed.sql<{ n: number }>('select count(*)::int as n from benchmark where container_image = ?', [`ghcr.io/idem/${name}`]))[0]!
          .n,
    },
    {
      path: '/sites',
      body: { name: `site-${name}`, address: 'x' },
      count: async () => (await seed.sql<{ n: number }>('select count(*)::int as n from site where name = ?', [`site-${name}`]))[0]!.n,
    },
    {
      path: `/sites/${ids.site}/flavors`,
      body: { name: `flavor-${name}` },
      count: async () => (await seed.sql<{ n: number }>('select count(*)::int as n from flavor where name = ?', [`flavor-${name}`]))[0]!.n,
    },
    {
      path: '/tags',
      body: { name: `tag-${name}` },
      count: async () => (await seed.sql<{ n: number }>('select count(*)::int as n from tag where name = ?', [`tag-${name}`]))[0]!.n,
    },
  ];
  const resultId = (await upload({ run: randomUUID(), score: 1 }, undefined)).body.id as string;
  const message = `claim ${name}`;
  cases.push({
    path: `/results/${resultId}:claim`,
    body: { message },
    count: async () => (await seed.sql<{ n: number }>('select count(*)::int as n from claim where message = ?', [message]))[0]!.n,
  });
  for (const c of cases) {
    const key = randomUUID();
    const first = await t.request('POST', c.path, { token: bob, headers: keyed(key), body: c.body });
    assert.is(first.status, 201, `${c.path}: ${first.text}`);
    const again = await t.request('POST', c.path, { token: bob, headers: keyed(key), body: c.body });
    assert.is(again.status, 201, `${c.path}: ${again.text}`);
    assert.is(again.text, first.text, c.path);
    assert.is(again.headers.get('idempotent-replayed'), 'true', c.path);
    assert.is(await c.count(), 1, c.path);
  }
  // Without the key the catalogue still refuses a duplicate.
  expectProblem(await t.request('POST', '/tags', { token: bob, body: { name: `tag-${name}` } }), 409, 'DUPLICATE');
});

test('Idempotency-Key bounds: empty, longer than 255 or not printable ASCII is 422 INVALID_HEADER; nothing stored', async () => {
  const run = randomUUID();
  for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
    const res = await upload({ run, score: 1 }, key);
    expectProblem(res, 422, 'INVALID_HEADER');
    assert.is(res.body.errors[0].in, 'header');
    assert.is(res.body.errors[0].path, 'Idempotency-Key');
  }
  assert.is(await stored(run), 0);
  const longest = await upload({ run, score: 1 }, `${'k'.repeat(250)} ~!@#`);
  assert.is(longest.status, 201, longest.text);
  // Operations that declare no key ignore the header.
  const tags = await t.request('GET', '/tags', { headers: keyed('') });
  assert.is(tags.status, 200);
});

test('keys expire after 24 h: an older key is forgotten (the request is stored again) and purged', async () => {
  const run = randomUUID();
  const key = randomUUID();
  const first = await upload({ run, score: 1 }, key);
  await seed.sql("update idempotency_key set created_datetime = now() - interval '24 hours 1 second' where key = ?", [key]);
  const later = await upload({ run, score: 1 }, key);
  assert.is(later.status, 201);
  assert.is(later.headers.get('idempotent-replayed'), null);
  assert.is.not(later.body.id, first.body.id);
  assert.is(await stored(run), 2);
  // The key now holds the new answer.
  assert.is((await upload({ run, score: 1 }, key)).body.id, later.body.id);
  await seed.sql("update idempotency_key set created_datetime = now() - interval '25 hours' where key = ?", [key]);
  assert.ok((await purgeExpiredKeys(t.server.context.orm.em.fork())) >= 1);
  assert.equal(await seed.sql('select key from idempotency_key where key = ?', [key]), []);
});

test('the OpenAPI document declares the Idempotency-Key header on every creating POST', async () => {
  const doc = (await t.request('GET', '/api-spec.json')).body;
  for (const [path, method] of [
    ['/results', 'post'],
    ['/results:batch', 'post'],
    ['/benchmarks', 'post'],
    ['/sites', 'post'],
    ['/sites/{id}/flavors', 'post'],
    ['/tags', 'post'],
    ['/results/{id}:claim', 'post'],
  ] as const) {
    const op = doc.paths[path][method];
    const header = op.parameters.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key');
    assert.ok(header, `${method} ${path}`);
    assert.is(header.schema.maxLength, 255);
    assert.ok(op.responses['409'] && op.responses['422'], `${method} ${path}`);
  }
  assert.not.ok(doc.paths['/users:register'].post.parameters.some((p: { in: string }) => p.in === 'header'));
});

test.run();
