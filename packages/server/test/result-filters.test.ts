/**
 * GET /results filters: the JSON filter grammar (`path op value`), id and date filters, tags
 * matching all, search terms, and attempts to inject SQL through every text parameter.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, upload, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let user: string;
let bench: { id: string };
let other: { id: string };
let site: { id: string };
let flavor: { id: string };
let site2: { id: string };
let flavor2: { id: string };
let tagA: { id: string };
let tagB: { id: string };
/** name → id of the results below. */
const ids: Record<string, string> = {};

const DATA: Record<string, Record<string, unknown>> = {
  r1: { n: 10, f: 2.5, neg: -3, big: 1000, b: true, s: 'AMD EPYC', u: 'Zürich ☃', nested: { deep: { x: 1 } }, other: 1 },
  r2: { n: 9, f: 2.25, neg: -10, b: false, s: 'Intel Xeon', u: 'Ørsted', nested: { deep: { x: 2 } }, other: 'two' },
  r3: { n: 11, f: 0.3, s: 'AMD EPYC 7452 32-Core', other: true, arr: [5, 6], nested: 'flat' },
  r4: { n: '10', b: 'true', s: 5, other: { k: 1 } },
  r5: {},
};

test.before(async () => {
  t = await startTestServer({}, 'result_filters');
  seed = await createSeeder(t);
  user = await t.user('filterer');
  bench = await seed.benchmark({ image: 'ghcr.io/acme/c-ray', tag: '1.2' });
  other = await seed.benchmark({ image: 'docker.io/acme/hpl', tag: '2.3' });
  site = await seed.site({ name: 'CESGA', address: 'Avenida de Vigo, Santiago' });
  flavor = await seed.flavor(site.id, { name: 'standard.small' });
  site2 = await seed.site({ name: 'IFCA-LCG2', address: 'Santander 100%_sure' });
  flavor2 = await seed.flavor(site2.id, { name: 'cm4.large' });
  tagA = await seed.tag({ name: 'gpu' });
  tagB = await seed.tag({ name: 'baseline' });
  const tags: Record<string, string[]> = { r1: [tagA.id], r2: [tagA.id, tagB.id], r3: [tagB.id] };
  let day = 1;
  for (const [name, json] of Object.entries(DATA)) {
    const res = await upload(
      t,
      user,
      {
        benchmark_id: bench.id,
        flavor_id: name === 'r3' ? flavor2.id : flavor.id,
        execution_datetime: `2024-03-0${day++}T12:00:00Z`,
        tags_ids: tags[name] ?? [],
      },
      json,
    );
    assert.is(res.status, 201, res.text);
    ids[res.body.id] = name;
  }
  const res = await upload(
    t,
    user,
    { benchmark_id: other.id, flavor_id: flavor.id, execution_datetime: '2024-04-01T00:00:00Z' },
    { n: 10 },
  );
  ids[res.body.id] = 'x1';
});
test.after(async () => {
  await t.close();
});

/** Names of the matching results, in list order (default sort: execution_datetime). */
async function names(query: Record<string, string | number | string[] | undefined>, path = '/results'): Promise<string[]> {
  const res = await t.request('GET', path, { query: { benchmark_id: bench.id, ...query } });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.total, res.body.items.length);
  return res.body.items.map((r: any) => ids[r.id]);
}
const where = (...filters: string[]) => names({ filters });

test('filters: == on numbers compares numerically and only with numbers', async () => {
  assert.equal(await where('n == 10'), ['r1'], 'the string "10" does not match');
  assert.equal(await where('n == 10.0'), ['r1']);
  assert.equal(await where('n == 1e1'), ['r1']);
  assert.equal(await where('big == 1E3'), ['r1']);
  assert.equal(await where('f == 2.25'), ['r2']);
  assert.equal(await where('neg == -10'), ['r2']);
  assert.equal(await where('s == 5'), ['r4']);
});

test('filters: > < >= <= on integers, floats, negatives and exponents', async () => {
  assert.equal(await where('n > 9'), ['r1', 'r3']);
  assert.equal(await where('n >= 10'), ['r1', 'r3']);
  assert.equal(await where('n < 10'), ['r2']);
  assert.equal(await where('n <= 10'), ['r1', 'r2']);
  assert.equal(await where('f > 2.3'), ['r1']);
  assert.equal(await where('f < 1'), ['r3']);
  assert.equal(await where('f <= 3E-1'), ['r3']);
  assert.equal(await where('f >= 2.25e0'), ['r1', 'r2']);
  assert.equal(await where('neg < -5'), ['r2']);
  assert.equal(await where('neg >= -3'), ['r1']);
  assert.equal(await where('n > -1e2'), ['r1', 'r2', 'r3'], '10 after 9: numeric, not text, order');
  assert.equal(await where('n > 9', 'n < 11'), ['r1'], 'several filters all hold');
});

test('filters: true/false compare as booleans, case-insensitively', async () => {
  assert.equal(await where('b == true'), ['r1'], 'the string "true" does not match');
  assert.equal(await where('b == FALSE'), ['r2']);
  assert.equal(await where('b == True'), ['r1']);
  assert.equal(await where('b > false'), ['r1']);
});

test('filters: other values compare as text, spaces and non-ASCII included', async () => {
  assert.equal(await where('s == AMD EPYC'), ['r1']);
  assert.equal(await where('s == AMD EPYC 7452 32-Core'), ['r3']);
  assert.equal(await where('s == amd epyc'), [], 'text equality is exact');
  assert.equal(await where('u == Zürich ☃'), ['r1']);
  assert.equal(await where('u == Ørsted'), ['r2']);
  assert.equal(await where('s > B'), ['r2'], 'lexicographic; the number 5 is not text');
  assert.equal(await where('s < B'), ['r1', 'r3']);
  assert.equal(await where('s >= AMD EPYC'), ['r1', 'r2', 'r3']);
  assert.equal(await where('other == two'), ['r2']);
});

test('filters: nested paths, array indexes, a missing path or another type simply do not match', async () => {
  assert.equal(await where('nested.deep.x >= 2'), ['r2']);
  assert.equal(await where('nested.deep.x == 1'), ['r1']);
  assert.equal(await where('arr.0 == 5'), ['r3']);
  assert.equal(await where('arr.1 > 5'), ['r3']);
  assert.equal(await where('nope.nope == 1'), []);
  assert.equal(await where('nested.deep > 1'), [], 'an object is not a number');
  assert.equal(await where('n.deeper == 1'), [], 'a path through a number');
  assert.equal(await where('other > 0'), ['r1'], 'a string, a boolean and an object at the path: no error, no match');
  assert.equal(await where('other < zzz'), ['r2']);
  assert.equal(await where('u > 5'), []);
});

test('filters: a malformed expression or operator is 422 INVALID_FILTER with an example', async () => {
  for (const bad of [
    'n>10',
    'n == ',
    'n ==',
    'n',
    'n <> 10',
    'n = 10',
    'n  == 10',
    '.n == 1',
    'a..b == 1',
    'n. == 1',
    ' n == 1',
    'n => 1',
    'n == 1e99999',
  ]) {
    const res = await t.request('GET', '/results', { query: { filters: bad } });
    expectProblem(res, 422, 'INVALID_FILTER');
    assert.match(res.body.detail, /filters=machine\.cpu\.count%20%3E%3D%204/);
    assert.is(res.body.errors[0].in, 'query');
    assert.is(res.body.errors[0].path, 'filters');
  }
  const long = await t.request('GET', '/results', { query: { filters: `${'a.'.repeat(30)}b == 1` } });
  expectProblem(long, 422, 'INVALID_FILTER');
  const many = await t.request('GET', '/results', { query: { filters: Array.from({ length: 21 }, () => 'n == 1') } });
  expectProblem(many, 422, 'INVALID_QUERY');
  expectProblem(await t.request('GET', '/results', { query: { filters: `s == ${'x'.repeat(600)}` } }), 422, 'INVALID_QUERY');
  // filters[] (axios style) is read as filters
  const res = await t.request('GET', `/results?benchmark_id=${bench.id}&filters[]=n%20%3E%209&filters[]=n%20%3C%2011`);
  assert.equal(
    res.body.items.map((r: any) => ids[r.id]),
    ['r1'],
  );
});

test('benchmark_id, site_id, flavor_id narrow the list', async () => {
  const all = await t.request('GET', '/results');
  assert.is(all.body.total, 6);
  assert.equal(await names({ benchmark_id: other.id }), ['x1']);
  assert.equal(await names({ site_id: site2.id }), ['r3']);
  assert.equal(await names({ flavor_id: flavor2.id }), ['r3']);
  assert.equal(await names({ benchmark_id: undefined, flavor_id: flavor.id, filters: 'n == 10' }), ['r1', 'x1']);
});

test('execution and upload bounds are strict and take a date or a date-time', async () => {
  assert.equal(await names({ execution_after: '2024-03-02T12:00:00Z' }), ['r3', 'r4', 'r5']);
  assert.equal(await names({ execution_before: '2024-03-02T12:00:00Z' }), ['r1']);
  assert.equal(await names({ execution_after: '2024-03-02', execution_before: '2024-03-04' }), ['r2', 'r3']);
  assert.equal(await names({ execution_after: '2024-03-02T13:00:00+02:00' }), ['r2', 'r3', 'r4', 'r5']);
  assert.equal(await names({ upload_before: '2000-01-01' }), []);
  assert.equal((await names({ upload_after: '2000-01-01', upload_before: '3000-01-01' })).length, 5);
  expectProblem(await t.request('GET', '/results', { query: { execution_after: 'yesterday' } }), 422, 'INVALID_QUERY');
});

test('tags_ids: a result must carry every tag given', async () => {
  assert.equal(await names({ tags_ids: [tagA.id] }), ['r1', 'r2']);
  assert.equal(await names({ tags_ids: [tagB.id] }), ['r2', 'r3']);
  assert.equal(await names({ tags_ids: [tagA.id, tagB.id] }), ['r2']);
  assert.equal(await names({ tags_ids: [tagA.id, tagA.id] }), ['r1', 'r2']);
  const res = await t.request('GET', `/results?tags_ids[]=${tagA.id}&tags_ids[]=${tagB.id}`);
  assert.equal(
    res.body.items.map((r: any) => ids[r.id]),
    ['r2'],
  );
  assert.equal(await names({ tags_ids: ['00000000-0000-4000-8000-000000000009'] }), []);
});

test('GET /results:search: every term must match a benchmark, site, flavor or tag name, case-insensitively', async () => {
  const search = (terms: string[], query: Record<string, string> = {}) =>
    names({ benchmark_id: undefined, terms, ...query }, '/results:search');
  assert.equal(await search(['C-RAY:1.2']), ['r1', 'r2', 'r3', 'r4', 'r5'], 'benchmark name image:tag');
  assert.equal(await search(['hpl']), ['x1']);
  assert.equal(await search(['ifca']), ['r3'], 'site name');
  assert.equal(await search(['vigo']), ['r1', 'r2', 'r4', 'r5', 'x1'], 'site address');
  assert.equal(await search(['CM4']), ['r3'], 'flavor name');
  assert.equal(await search(['GPU']), ['r1', 'r2'], 'tag name');
  assert.equal(await search(['gpu', 'baseline']), ['r2'], 'every term');
  assert.equal(await search(['gpu', 'ifca']), []);
  assert.equal(await search(['100%_sure']), ['r3'], '% and _ match literally');
  assert.equal(await search(['%']), ['r3']);
  assert.equal(await search(['']), ['r1', 'r2', 'r3', 'r4', 'r5', 'x1'], 'an empty term means no term');
  assert.equal(await search(['c-ray'], { filters: 'n >= 10' }), ['r1', 'r3'], 'list filters apply too');
});

test('SQL injection through path, value, sort or terms: a clean 4xx or no match, and the table is still there', async () => {
  const attack = "'; drop table result; --";
  const ok = async (query: Record<string, string>, path = '/results') => {
    const res = await t.request('GET', path, { query });
    assert.ok(res.status === 200 || res.status === 422, `${res.status} ${res.text}`);
    if (res.status === 200) assert.is(res.body.total, 0, JSON.stringify(query));
    return res.status;
  };
  assert.is(await ok({ filters: `s == ${attack}` }), 200);
  assert.equal(await where(`s > ${attack}`), ['r1', 'r2', 'r3'], 'compared as plain text: every string sorts after a quote');
  assert.is(await ok({ filters: `x';drop/**/table/**/result;-- == 1` }), 200);
  assert.is(await ok({ filters: `a"]}'::text);drop == 1` }), 200);
  assert.is(await ok({ filters: `n ${attack}` }), 422);
  assert.is(await ok({ filters: 'n == 1) or (1=1' }), 200);
  assert.is(await ok({ terms: attack }, '/results:search'), 200);
  assert.is(await ok({ terms: "' or 1=1 --" }, '/results:search'), 200);
  assert.is(await ok({ terms: 'what?' }, '/results:search'), 200);
  expectProblem(await t.request('GET', '/results', { query: { sort_by: `+id;${attack}` } }), 422, 'INVALID_SORT');
  const sorted = await t.request('GET', '/results', { query: { sort_by: `+json.a';drop table result;--` } });
  assert.is(sorted.status, 200);
  assert.is(sorted.body.total, 6);
  // a NUL byte would break the database protocol (503): refused up front
  expectProblem(await t.request('GET', '/results?filters=s%20%3D%3D%20a%00b'), 422, 'INVALID_FILTER');
  expectProblem(await t.request('GET', '/results?filters=s%00%20%3E%201'), 422, 'INVALID_FILTER');
  expectProblem(await t.request('GET', '/results:search?terms=a%00b'), 422, 'INVALID_QUERY');
  expectProblem(await t.request('GET', '/results?sort_by=%2Bjson.a%00b'), 422, 'INVALID_SORT');
  const count = await seed.sql<{ n: number }>('select count(*)::int as n from result');
  assert.is(count[0]!.n, 6, 'the table is still there, with every row');
  assert.is((await t.request('GET', '/results')).body.total, 6);
});

test.run();
