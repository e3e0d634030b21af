import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { asc, desc, encodeQuery, expandPath, Filter, sortBy, SortTerm, where } from '../src/index.ts';

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
  assert.throws(() => where(''), (e: unknown) => e instanceof TypeError && /non-empty dotted path/.test(e.message));
  assert.throws(() => where('a..b'), (e: unknown) => e instanceof TypeError && /empty segment/.test(e.message));
  assert.throws(() => where('.a'), /empty segment/);
  assert.throws(() => where('a.'), /empty segment/);
  assert.throws(() => where('a b'), (e: unknown) => e instanceof TypeError && /whitespace/.test(e.message));
  assert.throws(() => where('a\tb'), /whitespace/);
  assert.throws(() => where('a').gt(Number.NaN), (e: unknown) => e instanceof TypeError && /finite number/.test(e.message));
  assert.throws(() => where('a').gt(Number.POSITIVE_INFINITY), /finite number/);
  assert.throws(() => where('a').eq(''), (e: unknown) => e instanceof TypeError && /empty string/.test(e.message));
  assert.throws(() => where('a').eq('   '), /empty string/);
  // Values from untyped code: neither an object nor an unknown operator gets through.
  assert.throws(() => where('a').eq({} as never), /number, a boolean or a string/);
  assert.throws(() => new Filter('a', '!=' as never, 1), /Unknown filter operator '!='/);
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
  assert.is(
    encodeQuery({ filters: [where('q').eq('a+b & c%d=é')] }),
    '?filters=q%20%3D%3D%20a%2Bb%20%26%20c%25d%3D%C3%A9',
  );
});

test('expandPath(): path parameters are URI-encoded, the :verb suffix stays literal', () => {
  assert.is(expandPath('/benchmarks/{id}:approve', { id: 'a/b c' }), '/benchmarks/a%2Fb%20c:approve');
  assert.is(expandPath('/sites/{id}/flavors:search', { id: 'x' }), '/sites/x/flavors:search');
  assert.throws(() => expandPath('/benchmarks/{id}', {}), /Missing path parameter 'id'/);
});

test.run();
