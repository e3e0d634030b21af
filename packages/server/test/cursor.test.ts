/**
 * Walking lists by cursor (services/query/cursor.ts, services/query/keyset.ts): every list answers next_cursor,
 * and the pages after cursors hold exactly the items of the pages by number, in the same order, for
 * every sort (fixed fields, names, JSON paths over numbers, other values, nulls and missing values,
 * both directions, ties down to the microsecond, a benchmark's indexed metric); results uploaded
 * during a walk neither repeat nor push out the ones that were there; a cursor that was altered,
 * forged with bad values or made for another query is 422 INVALID_CURSOR, never a 500. Real server,
 * real PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeCursor } from '../src/services/query/cursor.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let admin: string;
let owner: string;
let site: { id: string };
let otherSite: { id: string };
let flavors: { id: string; site_id: string }[];
/** Results with execution times a microsecond apart, with ties. */
let timed: string;
/** Results holding every kind of JSON value at `v`. */
let mixed: string;
/** Results sorted by long strings (cursors that name their item). */
let long: string;
/** A benchmark whose `score` the metric values table sorts. */
let metric: string;

type Query = Record<string, string | number | string[] | undefined>;
type Item = Record<string, any>;
const idOf = (item: Item): string => item.id ?? item.resource_id ?? `${item.iss} ${item.sub}`;

/** Follows next_cursor from the first page; returns the ids in order and every envelope. */
async function walk(path: string, query: Query, perPage: number, token?: string) {
  const pages: any[] = [];
  let res = await t.request('GET', path, { token, query: { ...query, per_page: perPage } });
  for (;;) {
    assert.is(res.status, 200, res.text);
    pages.push(res.body);
    if (res.body.next_cursor === null) break;
    assert.ok(pages.length <= 500, 'the walk ends');
    res = await t.request('GET', path, { token, query: { ...query, per_page: perPage, cursor: res.body.next_cursor } });
  }
  return { ids: pages.flatMap((p) => p.items.map(idOf)), pages };
}

/** The whole list as one page by number (lists here are shorter than 100). */
async function reference(path: string, query: Query, token?: string): Promise<string[]> {
  const res = await t.request('GET', path, { token, query: { ...query, per_page: 100 } });
  assert.is(res.status, 200, res.text);
  assert.ok(res.body.total <= 100 && res.body.total === res.body.items.length, `${path}: a list of at most 100`);
  return res.body.items.map(idOf);
}

/** A walk by cursor gives exactly the list by page number, for each page size. */
async function sameAsPages(path: string, query: Query, sizes: number[] = [1, 3, 7], token?: string): Promise<string[]> {
  const expected = await reference(path, query, token);
  assert.ok(expected.length > 0, `${path} ${JSON.stringify(query)}: something listed`);
  for (const perPage of sizes) {
    const { ids } = await walk(path, query, perPage, token);
    assert.equal(ids, expected, `${path} ${JSON.stringify(query)} per_page ${perPage}`);
  }
  return expected;
}

const uuid = () => crypto.randomUUID();

test.before(async () => {
  try {
    await before();
  } catch (err) {
    console.error(err);
    throw err;
  }
});

async function before() {
  t = await startTestServer({}, 'cursor');
  seed = await createSeeder(t);
  [admin, owner] = await Promise.all([t.admin(), t.user('catalogue-owner')]);
  site = await seed.site({ name: 'Cursor Beta' });
  otherSite = await seed.site({ name: 'Cursor Alpha' });
  flavors = [await seed.flavor(site.id, { name: 'small' }), await seed.flavor(otherSite.id, { name: 'large' })];
  [timed, mixed, long] = (
    await Promise.all(['timed', 'mixed', 'long'].map((name) => seed.benchmark({ image: `ghcr.io/cursor/${name}` })))
  ).map((b) => b.id);
  // 40 results, 7 distinct instants one microsecond apart (JavaScript dates cannot tell them apart).
  await seed.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, f.site_id, f.id, jsonb_build_object('n', g), timestamptz '2024-03-01 10:00:00.000999Z' + (g % 7) * interval '1 microsecond',
       timestamptz '2024-03-02 00:00:00Z' - (g % 3) * interval '1 microsecond', ?, ?, false, g % 13 = 0
     from generate_series(1, 40) g join flavor f on f.id = (array[?, ?]::uuid[])[1 + g % 2]`,
    [timed, seed.owner.uploader_iss, seed.owner.uploader_sub, flavors[0]!.id, flavors[1]!.id],
  );
  const values: unknown[] = [
    10,
    9,
    2,
    10.5,
    -1,
    0,
    1e21,
    1,
    1.0000000000000002,
    -2.5e-7,
    '10',
    'abc',
    'Abc',
    'é',
    '',
    true,
    false,
    { k: 1 },
    [1, 2],
    null,
    undefined,
  ];
  // Every value twice (ties), at two instants.
  await seed.results(
    [...values, ...values].map((v, i) => ({
      benchmark_id: mixed,
      site_id: flavors[i % 2]!.site_id,
      flavor_id: flavors[i % 2]!.id,
      json: v === undefined ? { w: i } : { v, w: i, deep: { v } },
      execution_datetime: new Date(Date.UTC(2024, 0, 1, 0, 0, i % 2)),
    })),
  );
  // Long values: the cursor names its result instead of carrying 1,500 characters.
  await seed.results(
    Array.from({ length: 12 }, (_, i) => ({
      benchmark_id: long,
      site_id: site.id,
      flavor_id: flavors[0]!.id,
      json: { blob: `${'x'.repeat(1500)}${i % 4}` },
      execution_datetime: new Date(Date.UTC(2024, 1, 1)),
    })),
  );
  const created = await t.request('POST', '/benchmarks', {
    token: admin,
    body: {
      container_image: 'ghcr.io/cursor/metric',
      container_tag: '1.0',
      json_schema: { type: 'object', properties: { score: { type: 'number', suggestToUser: true } } },
    },
  });
  assert.is(created.status, 201, created.text);
  metric = created.body.id;
  await seed.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?,
       case when g % 11 = 0 then jsonb_build_object('score', 'n/a') when g % 13 = 0 then jsonb_build_object('score', null)
            when g % 17 = 0 then '{}'::jsonb else jsonb_build_object('score', (g * 7) % 9 / 2.0) end,
       now() - make_interval(mins => g), now(), ?, ?, false, g % 19 = 0
     from generate_series(1, 90) g`,
    [metric, site.id, flavors[0]!.id, seed.owner.uploader_iss, seed.owner.uploader_sub],
  );
  // Created by an administrator: its metric paths were chosen at once, the rows written with its results.
  const [complete] = await seed.sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [metric]);
  assert.equal(complete, { complete: true }, 'the metric values table serves it');
}

test.after(async () => {
  await t.close();
});

test('GET /results by cursor: the pages by number, to the microsecond, in every fixed order; next_cursor null at the end', async () => {
  for (const sort_by of [
    undefined,
    '-execution_datetime',
    '+upload_datetime',
    '-upload_datetime,+execution_datetime',
    '-id',
    '+flavor_id,-execution_datetime',
    '+site_name,-execution_datetime',
    '-benchmark_name,+flavor_name,+upload_datetime',
  ]) {
    await sameAsPages('/results', { benchmark_id: timed, sort_by });
  }
  const { pages } = await walk('/results', { benchmark_id: timed }, 10);
  assert.equal(
    pages.map((p) => [p.items.length, p.page, p.pages, p.total, p.has_next, p.has_prev, p.next_num, p.prev_num]),
    [
      [10, 1, 4, 37, true, false, 2, null],
      [10, 2, 4, 37, true, true, 3, 1],
      [10, 3, 4, 37, true, true, 4, 2],
      [7, 4, 4, 37, false, true, null, 3],
    ],
    'after a cursor: the page in the walk, the total the walk began with, has_next exact',
  );
  assert.type(pages[0].next_cursor, 'string');
  assert.is(pages[3].next_cursor, null);
  // The other result lists walk the same way.
  await sameAsPages('/results:search', { terms: 'cursor/timed', sort_by: '-execution_datetime' }, [4]);
  await sameAsPages('/users/self/results', { benchmark_id: timed }, [6], owner);
});

test('GET /results by cursor over json.<path>: numbers, other values, null and missing, in both directions', async () => {
  for (const sort_by of ['+json.v', '-json.v', '+json.deep.v', '-json.v,-execution_datetime', '+json.v,+id', '-json.nothing', '+json.w']) {
    await sameAsPages('/results', { benchmark_id: mixed, sort_by }, [1, 2, 5]);
  }
  await sameAsPages('/results', { benchmark_id: mixed, sort_by: '+json.v', filters: ['w >= 3'] }, [4]);
});

test("GET /results by cursor over a benchmark's indexed metric: the order of the general plan, hidden results left out", async () => {
  for (const sort_by of ['-json.score', '+json.score', '-json.score,+id'])
    for (const filters of [undefined, ['score >= 1']]) {
      await sameAsPages('/results', { benchmark_id: metric, sort_by, filters }, [1, 7, 30]);
    }
});

test('GET /results by cursor: a cursor names its result when its keys are long; 422 once that result is gone', async () => {
  const expected = await sameAsPages('/results', { benchmark_id: long, sort_by: '+json.blob' }, [1, 5]);
  const first = await t.request('GET', '/results', { query: { benchmark_id: long, sort_by: '-json.blob', per_page: 2 } });
  assert.ok(first.body.next_cursor.length < 300, `a short cursor (${first.body.next_cursor.length} characters)`);
  await seed.sql('delete from result where id = ?', [first.body.items[1].id]);
  const gone = await t.request('GET', '/results', {
    query: { benchmark_id: long, sort_by: '-json.blob', per_page: 2, cursor: first.body.next_cursor },
  });
  expectProblem(gone, 422, 'INVALID_CURSOR');
  assert.match(gone.body.detail, /no longer exists/);
  assert.ok(expected.length === 12);
});

test('GET /results by cursor while results arrive: none repeated, none of those already there skipped', async () => {
  for (const sort_by of ['+execution_datetime', '-json.n']) {
    const bench = (await seed.benchmark({ image: `ghcr.io/cursor/arrivals-${sort_by.replace(/\W/g, '')}` })).id;
    const at = (minute: number) => new Date(Date.UTC(2024, 5, 1, 0, minute));
    const row = (minute: number, n: number) => ({
      benchmark_id: bench,
      site_id: site.id,
      flavor_id: flavors[0]!.id,
      json: { n },
      execution_datetime: at(minute),
    });
    const before = new Set(await seed.results(Array.from({ length: 30 }, (_, i) => row(i % 10, (i * 7) % 10))));
    const query = { benchmark_id: bench, sort_by, per_page: 7 };
    const seen: string[] = [];
    let res = await t.request('GET', '/results', { query });
    seen.push(...res.body.items.map(idOf));
    res = await t.request('GET', '/results', { query: { ...query, cursor: res.body.next_cursor } });
    seen.push(...res.body.items.map(idOf));
    // New results on both sides of the position reached, and tied with it.
    const arrived = await seed.results([0, 1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((k) => [row(k, k), row(k, 9 - k)]));
    let cursor = res.body.next_cursor;
    while (cursor) {
      res = await t.request('GET', '/results', { query: { ...query, cursor } });
      assert.is(res.status, 200, res.text);
      seen.push(...res.body.items.map(idOf));
      cursor = res.body.next_cursor;
    }
    assert.is(new Set(seen).size, seen.length, `${sort_by}: nothing repeated`);
    for (const id of before) assert.ok(seen.includes(id), `${sort_by}: ${id} was there when the walk began`);
    // Exactly the new results that sort after the position the walk had reached came on later pages.
    const full = await reference('/results', { benchmark_id: bench, sort_by });
    const reached = full.indexOf(seen[13]!);
    const expectedNew = full.slice(reached + 1).filter((id) => arrived.includes(id));
    assert.equal(
      seen.filter((id) => arrived.includes(id)),
      expectedNew,
      sort_by,
    );
    assert.equal(
      seen,
      full.filter((id) => before.has(id) || expectedNew.includes(id)),
      `${sort_by}: in the list's order`,
    );
  }
});

test('a cursor that was altered, forged or cut: 422 INVALID_CURSOR naming the cursor, never a 500', async () => {
  const query = { benchmark_id: timed, per_page: 5 };
  const first = (await t.request('GET', '/results', { query })).body;
  const cursor: string = first.next_cursor;
  const [body] = cursor.split('.');
  const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
  const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
  const reencoded = (changed: object) =>
    `${Buffer.from(JSON.stringify({ ...payload, ...changed })).toString('base64url')}.${cursor.split('.')[1]}`;
  const bad = [
    flip(cursor, 3),
    flip(cursor, cursor.length - 2),
    cursor.slice(0, -1),
    `${cursor}.x`,
    reencoded({ p: 5000 }),
    'abc',
    '',
    '.',
    'x'.repeat(5000),
    // Well-formed (with their check), values of the wrong type for the keys of the list.
    encodeCursor({ ...payload, k: ['yesterday', payload.k[1]] }),
    encodeCursor({ ...payload, k: ['2024-02-30T10:00:00.000000Z', payload.k[1]] }),
    encodeCursor({ ...payload, k: [payload.k[0], 'not-a-uuid'] }),
    encodeCursor({ ...payload, k: [payload.k[0], null] }),
    encodeCursor({ ...payload, k: [payload.k[0]] }),
    encodeCursor({ ...payload, k: [payload.k[0], payload.k[1], payload.k[1]] }),
    encodeCursor({ ...payload, v: 2 }),
    encodeCursor({ ...payload, p: -1 }),
    encodeCursor({ ...payload, p: 0.5 }),
    encodeCursor({ ...payload, p: payload.t }),
    encodeCursor({ ...payload, p: 2 ** 53, t: 2 ** 53 + 1 }),
    // Safe integers whose next total would not be: 9007199254740996 once a page was added.
    encodeCursor({ ...payload, p: Number.MAX_SAFE_INTEGER - 1, t: Number.MAX_SAFE_INTEGER }),
    encodeCursor({ ...payload, r: [payload.k[1]] }),
  ];
  for (const c of bad) {
    const res = await t.request('GET', '/results', { query: { ...query, cursor: c } });
    expectProblem(res, 422, 'INVALID_CURSOR');
    assert.equal(res.body.errors?.[0]?.path, 'cursor', c.slice(0, 40));
  }
  const jsonFirst = (await t.request('GET', '/results', { query: { benchmark_id: mixed, sort_by: '+json.v', per_page: 2 } })).body;
  const json = JSON.parse(Buffer.from(jsonFirst.next_cursor.split('.')[0], 'base64url').toString());
  for (const k of [
    ['7', ...json.k.slice(1)],
    ['0', '1e99999', ...json.k.slice(2)],
    ['0', 'NaN', ...json.k.slice(2)],
    ['1', null, 'a\u0000b', json.k[3]],
    ['1', null, 'a\ud800b', json.k[3]],
  ]) {
    const res = await t.request('GET', '/results', {
      query: { benchmark_id: mixed, sort_by: '+json.v', per_page: 2, cursor: encodeCursor({ ...json, k }) },
    });
    expectProblem(res, 422, 'INVALID_CURSOR');
  }
  // A hand-made cursor with values of the right types is only a position in the same list.
  const made = encodeCursor({ ...json, k: ['1', null, '\ufffd', uuid()] });
  const fromThere = await t.request('GET', '/results', { query: { benchmark_id: mixed, sort_by: '+json.v', per_page: 100, cursor: made } });
  assert.is(fromThere.status, 200, fromThere.text);
  assert.ok(
    fromThere.body.items.every((r: Item) => r.json.v === undefined || r.json.v === null),
    'only null and missing sort after U+FFFD',
  );
});

test('a cursor belongs to its query: another filter, sort, list or user is 422 INVALID_CURSOR; per_page may change', async () => {
  const first = (await t.request('GET', '/results', { query: { benchmark_id: timed, per_page: 5 } })).body;
  const other: [string, Query][] = [
    ['/results', { benchmark_id: mixed }],
    ['/results', { benchmark_id: timed, sort_by: '-execution_datetime' }],
    ['/results', { benchmark_id: timed, filters: ['n > 3'] }],
    ['/results', { benchmark_id: timed, execution_after: '2020-01-01' }],
    ['/results:search', { benchmark_id: timed, terms: 'cursor' }],
    ['/sites', {}],
  ];
  for (const [path, query] of other) {
    const res = await t.request('GET', path, { query: { ...query, cursor: first.next_cursor } });
    expectProblem(res, 422, 'INVALID_CURSOR');
    assert.match(res.body.detail, /another query/);
  }
  const mine = await t.request('GET', '/users/self/results', { token: owner, query: { benchmark_id: timed, per_page: 5 } });
  const someoneElse = await t.user('cursor-other');
  expectProblem(
    await t.request('GET', '/users/self/results', { token: someoneElse, query: { benchmark_id: timed, cursor: mine.body.next_cursor } }),
    422,
    'INVALID_CURSOR',
  );
  // The same query written another way is the same list: the default sort named, the same instant.
  const same = await t.request('GET', '/results', {
    query: { benchmark_id: timed, sort_by: '+execution_datetime', per_page: 30, cursor: first.next_cursor },
  });
  assert.is(same.status, 200, same.text);
  const all = await reference('/results', { benchmark_id: timed });
  assert.equal(same.body.items.map(idOf), all.slice(5, 35), 'per_page changed along the walk');
  assert.is(same.body.page, 1, 'page counts in pages of the size asked now');
});

test('cursor with page: 422 INVALID_QUERY; PAGE_TOO_DEEP names the cursor as the way on', async () => {
  const first = (await t.request('GET', '/sites', { query: { per_page: 1 } })).body;
  const both = await t.request('GET', '/sites', { query: { per_page: 1, page: 2, cursor: first.next_cursor } });
  expectProblem(both, 422, 'INVALID_QUERY');
  assert.match(both.body.detail, /either cursor or page/);
  assert.equal(both.body.errors, [{ in: 'query', path: 'cursor', message: 'must not be given with page' }]);
  const deep = await t.request('GET', '/results', { query: { page: 101 } });
  expectProblem(deep, 422, 'PAGE_TOO_DEEP');
  assert.match(deep.body.detail, /next_cursor/);
  assert.match(deep.body.detail, /cursor=/);
});

test('catalogue lists by cursor: benchmarks, sites, flavors, tags and their searches, with NULLs in the sorted columns', async () => {
  await seed.sql(
    "update benchmark set description = null where container_image like 'ghcr.io/cursor/%' and container_image < 'ghcr.io/cursor/m'",
  );
  await seed.sql("update benchmark set url = 'https://example.org/' || container_image where container_image like '%arrivals%'");
  for (let i = 0; i < 5; i++) await seed.tag({ name: `cursor-tag-${i % 3}-${i}` });
  for (let i = 0; i < 6; i++) await seed.flavor(site.id, { name: `cursor-f${i % 4}-${i}` });
  for (const sort_by of [undefined, '+description', '-description', '-url,+container_tag', '-upload_datetime', '+status,-id']) {
    await sameAsPages('/benchmarks', { sort_by }, [1, 4]);
  }
  await sameAsPages('/benchmarks:search', { terms: 'cursor', sort_by: '-description' }, [2]);
  await sameAsPages('/sites', { sort_by: '-name' }, [1]);
  await sameAsPages('/sites:search', { terms: 'cursor' }, [1]);
  await sameAsPages(`/sites/${site.id}/flavors`, { sort_by: '-description,+name' }, [1, 3]);
  await sameAsPages(`/sites/${site.id}/flavors:search`, { terms: 'cursor' }, [2]);
  await sameAsPages('/tags', { sort_by: '-description' }, [1, 2]);
  await sameAsPages('/tags:search', { terms: 'cursor-tag' }, [2]);
  // A flavor list's cursor continues that site's flavors only.
  const flavorsOf = (await t.request('GET', `/sites/${site.id}/flavors`, { query: { per_page: 2 } })).body;
  expectProblem(
    await t.request('GET', `/sites/${otherSite.id}/flavors`, { query: { per_page: 2, cursor: flavorsOf.next_cursor } }),
    422,
    'INVALID_CURSOR',
  );
});

test('administrator and personal lists by cursor: users, submissions, claims (all, of a result, of the caller)', async () => {
  const claimants = await Promise.all(['cursor-c1', 'cursor-c2', 'cursor-c3'].map((sub) => t.user(sub)));
  await t.request('POST', '/users:remove', { token: admin, query: { sub: 'cursor-c3' } });
  await seed.sql("update app_user set email = null where sub = 'cursor-c2'");
  for (const sort_by of [undefined, '+email', '-email,+registration_datetime', '-sub']) {
    await sameAsPages('/users', { sort_by }, [1, 2], admin);
  }
  await sameAsPages('/users:search', { terms: 'cursor' }, [1], admin);
  await seed.benchmark({ status: 'on_review' });
  await seed.site({ status: 'on_review' });
  await seed.tag({ status: 'on_review' });
  await seed.flavor(site.id, { status: 'on_review' });
  for (const sort_by of [undefined, '-resource_type', '+resource_id']) await sameAsPages('/reports/submits', { sort_by }, [1, 3], admin);
  const results = await reference('/results', { benchmark_id: timed });
  for (const [i, id] of results.slice(0, 6).entries()) {
    const res = await t.request('POST', `/results/${id}:claim`, { token: claimants[i % 2]!, body: { message: `claim ${i}` } });
    assert.is(res.status, 201, res.text);
  }
  await t.request('POST', `/results/${results[0]}:claim`, { token: claimants[1]!, body: { message: 'again' } });
  for (const sort_by of [undefined, '-upload_datetime', '+status,-upload_datetime'])
    await sameAsPages('/reports/claims', { sort_by }, [1, 4], admin);
  await sameAsPages('/users/self/claims', {}, [1, 2], claimants[0]);
  await sameAsPages(`/results/${results[0]}/claims`, {}, [1], owner);
});

test.run();
