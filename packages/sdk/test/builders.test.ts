import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asc, createClient, desc, sortBy, where, type Client } from '../src/index.ts';
import { Filter, SortTerm } from '../src/builders.ts';
import { encodeQuery, expandPath } from '../src/url.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { listen, proxy, type LocalServer } from './support/http.ts';

let t: TestServer;
let admin: Client;
/** A recording proxy in front of the real server: what the SDK really puts on the wire. */
let wire: LocalServer;
let reader: Client;
const ids: Record<string, string> = {};
let tags: string[] = [];

const SAMPLES = {
  epyc: {
    machine: { cpu: { count: 64, model: 'AMD EPYC 7742' } },
    city: 'Zürich 北京 🚀',
    note: 'a+b & c%20d=é',
    gpu: false,
    result: { score: 10.5 },
  },
  xeon: { machine: { cpu: { count: 4, model: 'Intel Xeon' } }, city: 'Berlin', note: 'plain', gpu: true, result: { score: 2 } },
  tiny: { machine: { cpu: { count: 1, model: 'ARM' } }, city: 'Oslo', note: 'a b', gpu: false, result: { score: -3 } },
};

test.before(async () => {
  t = await startTestServer('sdk_builders');
  admin = createClient({ baseUrl: t.url, token: await t.admin('builders-admin') });
  wire = await listen((req, res) => proxy(t.url, req, res));
  reader = createClient({ baseUrl: wire.url });
  const benchmark = await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/builders', container_tag: '1', json_schema: {} });
  const site = await admin.sites.create({ name: 'Builders site', address: 'x' });
  const flavor = await admin.flavors.create(site.id, { name: 'f' });
  tags = [(await admin.tags.create({ name: 'b-one' })).id, (await admin.tags.create({ name: 'b-two' })).id];
  let hour = 10;
  for (const [name, json] of Object.entries(SAMPLES)) {
    const r = await admin.results.create(
      {
        benchmark_id: benchmark.id,
        flavor_id: flavor.id,
        execution_datetime: `2025-01-01T${hour++}:00:00Z`,
        tags_ids: name === 'epyc' ? tags : [tags[0]!],
      },
      json,
    );
    ids[name] = r.id;
  }
});
test.after(async () => {
  await Promise.all([admin.close(), reader.close()]);
  await wire.close();
  await t.close();
});

/** The names of the samples a list of filters selects, through the real server. */
async function select(...filters: (Filter | string)[]): Promise<string[]> {
  const found = await reader.results.list({ filters, sort_by: [asc('execution_datetime')] }).toArray({ max: 100 });
  return found.map((r) => Object.keys(ids).find((k) => ids[k] === r.id)!);
}

test('where(): every operator produces `path op value`', () => {
  assert.is(String(where('machine.cpu.count').eq(4)), 'machine.cpu.count == 4');
  assert.is(String(where('machine.cpu.count').gt(4)), 'machine.cpu.count > 4');
  assert.is(String(where('machine.cpu.count').lt(4)), 'machine.cpu.count < 4');
  assert.is(String(where('machine.cpu.count').gte(4)), 'machine.cpu.count >= 4');
  assert.is(String(where('machine.cpu.count').lte(4)), 'machine.cpu.count <= 4');
  const f = where('a.b').gte(1.5);
  assert.instance(f, Filter);
  assert.equal([f.path, f.operator, f.value, f.expression], ['a.b', '>=', 1.5, 'a.b >= 1.5']);
  assert.is(JSON.stringify({ f }), '{"f":"a.b >= 1.5"}');
});

test('where(): numbers, booleans and awkward strings are written as is', () => {
  assert.is(String(where('x').eq(-0.25)), 'x == -0.25');
  assert.is(String(where('x').lt(1e21)), 'x < 1e+21');
  assert.is(String(where('ok').eq(true)), 'ok == true');
  assert.is(String(where('ok').eq(false)), 'ok == false');
  assert.is(String(where('machine.cpu.model').eq('AMD EPYC 7742')), 'machine.cpu.model == AMD EPYC 7742');
  assert.is(String(where('site.city').eq('Zürich 北京 🚀')), 'site.city == Zürich 北京 🚀');
  assert.is(String(where('q').eq('a+b & c%20d')), 'q == a+b & c%20d');
  assert.is(String(where('ünïcode.pàth').eq('x')), 'ünïcode.pàth == x');
});

test('where(): refuses an empty path, an empty segment, whitespace, non-finite numbers and empty strings', () => {
  assert.throws(
    () => where(''),
    (e: unknown) => e instanceof TypeError && /non-empty dotted path/.test(e.message),
  );
  assert.throws(
    () => where('a..b'),
    (e: unknown) => e instanceof TypeError && /empty segment/.test(e.message),
  );
  assert.throws(() => where('.a'), /empty segment/);
  assert.throws(() => where('a.'), /empty segment/);
  assert.throws(
    () => where('a b'),
    (e: unknown) => e instanceof TypeError && /whitespace/.test(e.message),
  );
  assert.throws(() => where('a\tb'), /whitespace/);
  assert.throws(
    () => where('a').gt(Number.NaN),
    (e: unknown) => e instanceof TypeError && /finite number/.test(e.message),
  );
  assert.throws(() => where('a').gt(Number.POSITIVE_INFINITY), /finite number/);
  assert.throws(
    () => where('a').eq(''),
    (e: unknown) => e instanceof TypeError && /empty string/.test(e.message),
  );
  assert.throws(() => where('a').eq('   '), /empty string/);
  // Values from untyped code: neither an object nor an unknown operator gets through.
  assert.throws(() => where('a').eq({} as never), /number, a boolean or a string/);
  assert.throws(() => new Filter('a', '!=' as never, 1), /Unknown filter operator '!='/);
  // The contract caps an expression at 500 characters.
  assert.throws(() => where('a').eq('x'.repeat(600)), /at most 500 characters/);
});

test('asc()/desc()/sortBy(): `+field,-field`', () => {
  assert.is(String(asc('execution_datetime')), '+execution_datetime');
  assert.is(String(desc('json.result.score')), '-json.result.score');
  assert.is(sortBy(asc('execution_datetime'), desc('json.result.score')), '+execution_datetime,-json.result.score');
  assert.is(sortBy('-name', asc('id')), '-name,+id');
  assert.instance(asc('id'), SortTerm);
  assert.is(asc('id').direction, 'asc');
  assert.is(desc('id').field, 'id');
});

test('asc()/desc()/sortBy(): refuse empty fields, signs, spaces, commas, no terms', () => {
  assert.throws(() => asc(''), /non-empty/);
  assert.throws(() => desc('+name'), /without \+ or -/);
  assert.throws(() => asc('a b'), /whitespace or commas/);
  assert.throws(() => asc('a,b'), /whitespace or commas/);
  assert.throws(() => asc('json..x'), /empty segment/);
  assert.throws(() => sortBy(), /at least one term/);
  assert.throws(() => sortBy('name'), /'\+field' \/ '-field'/);
});

test('encodeQuery(): arrays repeat the key, + is %2B, space is %20, & % = and unicode are escaped', () => {
  assert.is(encodeQuery({}), '');
  assert.is(encodeQuery({ a: undefined, b: null }), '');
  assert.is(encodeQuery({ sort_by: '+execution_datetime,-json.x' }), '?sort_by=%2Bexecution_datetime%2C-json.x');
  assert.is(encodeQuery({ tags_ids: ['a', 'b'], page: 2, flag: true }), '?tags_ids=a&tags_ids=b&page=2&flag=true');
  assert.is(encodeQuery({ filters: [where('q').eq('a+b & c%d=é')] }), '?filters=q%20%3D%3D%20a%2Bb%20%26%20c%25d%3D%C3%A9');
});

test('expandPath(): path parameters are URI-encoded, the :verb suffix stays literal', () => {
  assert.is(expandPath('/benchmarks/{id}:approve', { id: 'a/b c' }), '/benchmarks/a%2Fb%20c:approve');
  assert.is(expandPath('/sites/{id}/flavors:search', { id: 'x' }), '/sites/x/flavors:search');
  assert.throws(() => expandPath('/benchmarks/{id}', {}), /Missing path parameter 'id'/);
});

test('GET /results: every operator selects what it says on the real server', async () => {
  assert.equal(await select(where('machine.cpu.count').eq(4)), ['xeon']);
  assert.equal(await select(where('machine.cpu.count').gt(4)), ['epyc']);
  assert.equal(await select(where('machine.cpu.count').lt(4)), ['tiny']);
  assert.equal(await select(where('machine.cpu.count').gte(4)), ['epyc', 'xeon']);
  assert.equal(await select(where('machine.cpu.count').lte(4)), ['xeon', 'tiny']);
  assert.equal(await select(where('machine.cpu.count').gte(2), where('machine.cpu.count').lte(64)), ['epyc', 'xeon']);
  assert.equal(await select(where('result.score').lt(-1)), ['tiny']);
  assert.equal(await select(where('result.score').gt(10.25)), ['epyc']);
  assert.equal(await select(where('gpu').eq(true)), ['xeon']);
  assert.equal(await select(where('no.such.path').eq(1)), [], 'a missing path matches nothing, without error');
});

test('GET /results: awkward text values (spaces, unicode, +, &, %, =) round-trip through the real server', async () => {
  assert.equal(await select(where('machine.cpu.model').eq('AMD EPYC 7742')), ['epyc']);
  assert.equal(await select(where('city').eq('Zürich 北京 🚀')), ['epyc']);
  assert.equal(await select(where('note').eq('a+b & c%20d=é')), ['epyc']);
  assert.equal(await select(where('note').eq('a b')), ['tiny'], 'a space is not a +');
  assert.equal(await select('note == a b'), ['tiny'], 'plain strings are sent as they are');
  const sent = wire.seen.at(-1)!.url;
  assert.match(sent, /filters=note%20%3D%3D%20a%20b/);
});

test('the wire: sort_by sends + as %2B, arrays repeat the key, and the real server honours both', async () => {
  const before = wire.seen.length;
  const asc_ = await reader.results.list({ sort_by: [asc('json.result.score')] }).toArray({ max: 10 });
  assert.equal(
    asc_.map((r) => r.id),
    [ids.tiny, ids.xeon, ids.epyc],
  );
  const desc_ = await reader.results.list({ sort_by: [desc('json.machine.cpu.count'), asc('id')] }).toArray({ max: 10 });
  assert.equal(
    desc_.map((r) => r.id),
    [ids.epyc, ids.xeon, ids.tiny],
  );
  const both = await reader.results.list({ tags_ids: tags }).toArray({ max: 10 });
  assert.equal(
    both.map((r) => r.id),
    [ids.epyc],
    'several tags_ids: results carrying all of them',
  );
  const urls = wire.seen.slice(before).map((s) => s.url);
  assert.match(urls[0]!, /[?&]sort_by=%2Bjson\.result\.score(&|$)/);
  assert.not.match(urls[0]!, /sort_by=\+/);
  assert.match(urls[1]!, /[?&]sort_by=-json\.machine\.cpu\.count%2C%2Bid(&|$)/);
  assert.ok(urls[2]!.includes(`tags_ids=${tags[0]}&tags_ids=${tags[1]}`), urls[2]);
});

test('the wire: search terms are repeated and a string sort_by is encoded the same way', async () => {
  const before = wire.seen.length;
  const found = await reader.results.search({ terms: ['builders', 'b-two'], sort_by: '-execution_datetime' }).toArray({ max: 10 });
  assert.equal(
    found.map((r) => r.id),
    [ids.epyc],
  );
  const sites = await reader.sites.list({ sort_by: '+name' });
  assert.is(sites.items[0]!.name, 'Builders site');
  const urls = wire.seen.slice(before).map((s) => s.url);
  assert.match(urls[0]!, /terms=builders&terms=b-two/);
  assert.match(urls[1]!, /sort_by=%2Bname/);
});

test.run();
