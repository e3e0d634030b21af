/** Flavor prices (COMPARE.md "Flavor prices"): optional, given together, returned on every flavor. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder, upload, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let alice: string;
let admin: string;
let siteId: string;

test.before(async () => {
  t = await startTestServer({}, 'flavor_prices');
  seed = await createSeeder(t);
  [alice, admin] = await Promise.all([t.user('alice'), t.admin('root')]);
  siteId = (await t.request('POST', '/sites', { token: admin, body: { name: 'Priced', address: 'a' } })).body.id;
});
test.after(async () => {
  await t.close();
});

const createFlavor = (body: Record<string, unknown>, token = alice) => t.request('POST', `/sites/${siteId}/flavors`, { token, body });

test('POST /sites/{id}/flavors: a price and its currency are stored and returned; without them both are null', async () => {
  const priced = await createFlavor({ name: 'priced', price_per_hour: 0.12, currency: 'EUR' });
  assert.is(priced.status, 201, priced.text);
  assert.is(priced.body.price_per_hour, 0.12);
  assert.is(priced.body.currency, 'EUR');
  const read = await t.request('GET', `/flavors/${priced.body.id}`);
  assert.equal(read.body, priced.body);
  const [stored] = await seed.sql<{ price: string; currency: string }>(
    'select price_per_hour::text as price, currency from flavor where id = ?',
    [priced.body.id],
  );
  assert.equal(stored, { price: '0.12', currency: 'EUR' }); // a decimal: 0.12 exactly

  const free = await createFlavor({ name: 'free', price_per_hour: 0, currency: 'USD' });
  assert.is(free.body.price_per_hour, 0);
  const plain = await createFlavor({ name: 'plain', description: 'no price' });
  assert.is(plain.status, 201);
  assert.is(plain.body.price_per_hour, null);
  assert.is(plain.body.currency, null);
  const nulls = await createFlavor({ name: 'nulls', price_per_hour: null, currency: null });
  assert.is(nulls.status, 201);
  assert.is(nulls.body.price_per_hour, null);
});

test('POST /sites/{id}/flavors: 422 for a price without a currency, a currency without a price, a bad currency or a negative price', async () => {
  const alone = await createFlavor({ name: 'x1', price_per_hour: 1 });
  assertProblem(alone, 422, 'INVALID_BODY');
  assert.is(alone.body.detail, 'price_per_hour and currency go together: price_per_hour was given without currency.');
  assert.equal(alone.body.errors, [{ in: 'body', path: '/currency', message: 'is required with price_per_hour' }]);
  const currencyOnly = await createFlavor({ name: 'x2', currency: 'EUR', price_per_hour: null });
  assertProblem(currencyOnly, 422, 'INVALID_BODY');
  assert.equal(currencyOnly.body.errors[0].path, '/price_per_hour');
  for (const bad of [
    { price_per_hour: 1, currency: 'eur' },
    { price_per_hour: 1, currency: 'EURO' },
    { price_per_hour: 1, currency: 'E1R' },
    { price_per_hour: -0.5, currency: 'EUR' },
    { price_per_hour: '1', currency: 'EUR' },
  ]) {
    const res = await createFlavor({ name: 'bad', ...bad });
    assertProblem(res, 422, 'INVALID_BODY');
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path === '/currency' || e.path === '/price_per_hour'),
      res.text,
    );
  }
  const [{ n }] = await seed.sql<{ n: number }>("select count(*)::int as n from flavor where name in ('x1', 'x2', 'bad')");
  assert.is(n, 0);
});

test('PUT /flavors/{id}: an admin sets, changes and clears the price; half a price is 422 and changes nothing', async () => {
  const f = (await createFlavor({ name: 'to-price' }, admin)).body;
  const set = await t.request('PUT', `/flavors/${f.id}`, {
    token: admin,
    body: { name: 'to-price', price_per_hour: 2.5, currency: 'CHF' },
  });
  assert.is(set.status, 200, set.text);
  assert.is(set.body.price_per_hour, 2.5);
  assert.is(set.body.currency, 'CHF');
  assertProblem(
    await t.request('PUT', `/flavors/${f.id}`, { token: admin, body: { name: 'to-price', currency: 'USD' } }),
    422,
    'INVALID_BODY',
  );
  assert.is((await t.request('GET', `/flavors/${f.id}`)).body.currency, 'CHF');
  assertProblem(
    await t.request('PUT', `/flavors/${f.id}`, { token: alice, body: { name: 'to-price', price_per_hour: 1, currency: 'USD' } }),
    403,
    'NOT_ADMIN',
  );
  // The body replaces the editable fields: no price given, no price kept.
  const cleared = await t.request('PUT', `/flavors/${f.id}`, { token: admin, body: { name: 'to-price' } });
  assert.is(cleared.body.price_per_hour, null);
  assert.is(cleared.body.currency, null);
});

test('Flavors embedded in results and in lists show their price', async () => {
  const benchmark = await seed.benchmark();
  const f = (await createFlavor({ name: 'embedded', price_per_hour: 1.75, currency: 'EUR' }, admin)).body;
  const uploaded = await upload(t, alice, { benchmark_id: benchmark.id, flavor_id: f.id }, { score: 1 });
  assert.is(uploaded.status, 201, uploaded.text);
  assert.is(uploaded.body.flavor.price_per_hour, 1.75);
  const got = await t.request('GET', `/results/${uploaded.body.id}`);
  assert.equal(got.body.flavor, f);
  const list = await t.request('GET', '/results', { query: { flavor_id: f.id } });
  assert.equal(list.body.items[0].flavor, f);
  const flavors = await t.request('GET', `/sites/${siteId}/flavors`, { query: { name: 'embedded' } });
  assert.equal(flavors.body.items, [f]);
});

test.run();
