/**
 * Sorting results: fixed fields, JSON paths over mixed and missing values, and page boundaries
 * that neither repeat nor skip a result while new results arrive.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let mixed: { id: string };
let paging: { id: string };
let site: { id: string };
let flavor: { id: string };
const label: Record<string, string> = {};

/** Values of `v` (undefined: the key is absent). */
const VALUES: [string, unknown][] = [
  ['ten', 10],
  ['nine', 9],
  ['two', 2],
  ['ten-and-a-half', 10.5],
  ['minus-one', -1],
  ['big', 1e21],
  ['abc', 'abc'],
  ['Abc', 'Abc'],
  ['str-10', '10'],
  ['true', true],
  ['object', { k: 1 }],
  ['null', null],
  ['missing', undefined],
  ['missing-2', undefined],
];

test.before(async () => {
  t = await startTestServer({}, 'result_sort');
  seed = await createSeeder(t);
  mixed = await seed.benchmark({ image: 'ghcr.io/sort/mixed' });
  paging = await seed.benchmark({ image: 'ghcr.io/sort/paging' });
  const sites = await Promise.all(['Beta', 'Alpha'].map((name) => seed.site({ name })));
  site = sites[0]!;
  const flavors = [await seed.flavor(sites[0]!.id, { name: 'small' }), await seed.flavor(sites[1]!.id, { name: 'large' })];
  flavor = flavors[0]!;
  const rows = VALUES.map(([, v], i) => ({
    benchmark_id: mixed.id,
    site_id: flavors[i % 2]!.site_id,
    flavor_id: flavors[i % 2]!.id,
    json: v === undefined ? { w: i } : { v, w: i, deep: { v } },
    execution_datetime: new Date(Date.UTC(2024, 0, 1, 0, 0, VALUES.length - i)),
  }));
  const created = await seed.results(rows);
  created.forEach((id, i) => {
    label[id] = VALUES[i]![0];
  });
});
test.after(async () => {
  await t.close();
});

async function sorted(sort_by: string | undefined, benchmark = mixed.id): Promise<{ labels: string[]; ids: string[]; items: any[] }> {
  const res = await t.request('GET', '/results', { query: { benchmark_id: benchmark, sort_by, per_page: 100 } });
  assert.is(res.status, 200, res.text);
  return { labels: res.body.items.map((r: any) => label[r.id]), ids: res.body.items.map((r: any) => r.id), items: res.body.items };
}
const byId = (names: string[]) => names.map((n) => Object.keys(label).find((id) => label[id] === n)!).sort();

test('sort_by json.<path>: numbers numerically, then other values as text, missing last', async () => {
  const { labels } = await sorted('+json.v');
  assert.equal(labels.slice(0, 6), ['minus-one', 'two', 'nine', 'ten', 'ten-and-a-half', 'big'], '10 after 9, 1e21 last');
  // other values by their text in code point order: "10" < "Abc" < "abc" < "true" < {"k": 1}
  assert.equal(labels.slice(6, 11), ['str-10', 'Abc', 'abc', 'true', 'object']);
  // null and missing values last, by id
  const tail = labels.slice(11);
  assert.equal([...tail].sort(), ['missing', 'missing-2', 'null']);
  assert.equal((await sorted('+json.v')).ids.slice(11), byId(tail));
});

test('sort_by -json.<path>: the exact reverse of the present values, missing still last', async () => {
  const asc = (await sorted('+json.v')).labels;
  const desc = (await sorted('-json.v')).labels;
  assert.equal(desc.slice(0, 11), asc.slice(0, 11).reverse());
  assert.equal([...desc.slice(11)].sort(), ['missing', 'missing-2', 'null']);
  const descIds = (await sorted('-json.v')).ids.slice(11);
  assert.equal(descIds, [...descIds].sort().reverse(), 'ties end with id, in the direction of the last term');
});

test('sort_by a nested path and a second term; a + decoded as a space is read as +', async () => {
  assert.equal((await sorted('+json.deep.v')).labels, (await sorted('+json.v')).labels);
  const { items } = await sorted('+site_name,-json.w');
  assert.equal(
    items.map((r) => r.site.name),
    [...Array(7).fill('Alpha'), ...Array(7).fill('Beta')],
  );
  assert.equal(
    items.slice(0, 7).map((r) => r.json.w),
    [13, 11, 9, 7, 5, 3, 1],
  );
  // an unencoded + arrives as a space
  const raw = await t.request('GET', `/results?benchmark_id=${mixed.id}&sort_by=+json.v`);
  assert.equal(
    raw.body.items.map((r: any) => r.id),
    (await sorted('+json.v')).ids,
  );
});

test('sort_by fixed fields: execution_datetime (default), ids, names, upload_datetime', async () => {
  const byExecution = (await sorted(undefined)).items;
  const times = byExecution.map((r) => r.execution_datetime);
  assert.equal(times, [...times].sort());
  assert.equal(
    byExecution.map((r) => r.json.w),
    [13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
  );
  assert.equal(
    (await sorted('-execution_datetime')).items.map((r) => r.json.w),
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
  );
  const ids = (await sorted('+id')).ids;
  assert.equal(ids, [...ids].sort());
  assert.equal((await sorted('-id')).ids, [...ids].sort().reverse());
  for (const field of ['site_id', 'flavor_id', 'benchmark_id']) {
    const values = (await sorted(`+${field}`)).items.map((r) => r[field.replace('_id', '')].id);
    assert.equal(values, [...values].sort(), field);
  }
  assert.equal((await sorted('-flavor_name')).items.map((r) => r.flavor.name).slice(0, 7), Array(7).fill('small'));
  const byName = await t.request('GET', '/results', { query: { sort_by: '+benchmark_name', per_page: 100 } });
  const names = byName.body.items.map((r: any) => r.benchmark.name);
  assert.equal(names, [...names].sort());
  assert.is((await sorted('-upload_datetime,+json.w')).items.length, 14);
});

test('sort_by: unknown fields and operators are 422 INVALID_SORT', async () => {
  for (const bad of [
    '+name',
    'json.v',
    '*json.v',
    '+json',
    '+json.',
    '+json..v',
    '+uploader_sub',
    '+id,,+json.v',
    '+',
    `+json.${'a.'.repeat(25)}b`,
  ]) {
    const res = await t.request('GET', '/results', { query: { sort_by: bad } });
    expectProblem(res, 422, 'INVALID_SORT');
    assert.is(res.body.errors[0].path, 'sort_by');
  }
});

test('pages neither repeat nor skip a result while new results arrive (default sort)', async () => {
  // 23 results, some sharing an execution time (ties are broken by id)
  const base = Date.UTC(2022, 0, 1);
  const original = await seed.results(
    Array.from({ length: 23 }, (_, i) => ({
      benchmark_id: paging.id,
      site_id: site.id,
      flavor_id: flavor.id,
      json: { i },
      execution_datetime: new Date(base + Math.floor(i / 3) * 60_000),
    })),
  );
  const seen: string[] = [];
  const added: string[] = [];
  let page = 1;
  for (;;) {
    const res = await t.request('GET', '/results', { query: { benchmark_id: paging.id, per_page: 4, page } });
    assert.is(res.status, 200);
    seen.push(...res.body.items.map((r: any) => r.id));
    // meanwhile, results executed later (they sort after the cursor) are uploaded
    added.push(
      ...(await seed.results(
        [0, 1].map((k) => ({
          benchmark_id: paging.id,
          site_id: site.id,
          flavor_id: flavor.id,
          json: { page, k },
          execution_datetime: new Date(base + 86_400_000 + page * 1000 + k),
          upload_datetime: new Date(Date.now() + page * 1000),
        })),
      )),
    );
    if (!res.body.has_next || page > 40) break;
    page++;
  }
  assert.is(new Set(seen).size, seen.length, 'no result appears twice');
  for (const id of original) assert.ok(seen.includes(id), 'no original result is skipped');
  for (const id of seen) assert.ok(original.includes(id) || added.includes(id), 'only known results');
  // the original ones come first, in execution order
  assert.equal(seen.slice(0, 23), (await sorted(undefined, paging.id)).ids.slice(0, 23));
});

test('pages of a JSON sort with ties never overlap', async () => {
  const pages: string[] = [];
  for (let page = 1; page <= 5; page++) {
    const res = await t.request('GET', '/results', { query: { benchmark_id: mixed.id, sort_by: '-json.v', per_page: 3, page } });
    pages.push(...res.body.items.map((r: any) => r.id));
  }
  assert.equal(pages, (await sorted('-json.v')).ids);
});

test.run();
