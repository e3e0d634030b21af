/**
 * Which paths a JSON Schema describes (services/schemas/schema-paths.ts): properties through references and
 * combinators, arrays and tuples, pattern properties, what stays undecidable, recursive schemas,
 * and the nearest described path suggested for one that is not.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DescribedPaths, editDistance, MAX_LEAVES } from '../src/services/schemas/schema-paths.ts';

const path = (text: string) => text.split('.');
const describes = (schema: unknown, text: string) => new DescribedPaths(schema).describes(path(text));
const leaves = (schema: unknown) =>
  new DescribedPaths(schema).leaves().map((l) => l.map((s) => (typeof s === 'string' ? s : '[]')).join('.'));

test('properties, nested, through $ref ($defs, definitions, anchors, $id) and allOf/anyOf/oneOf/then/else', () => {
  const schema = {
    $id: 'https://example.org/root',
    $defs: { cpu: { properties: { count: { type: 'integer' } } }, named: { $anchor: 'ram', properties: { gb: {} } } },
    definitions: { disk: { properties: { size: {} } } },
    properties: {
      cpu: { $ref: '#/$defs/cpu' },
      ram: { $ref: '#ram' },
      disk: { $ref: 'https://example.org/root#/definitions/disk' },
      net: { $ref: 'https://example.org/net' },
      a: { allOf: [{ properties: { x: {} } }] },
      b: { anyOf: [{ properties: { y: {} } }, { properties: { z: {} } }] },
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here, the object is never awaited
      c: { if: { properties: { k: { const: 1 } } }, then: { properties: { t: {} } }, else: { properties: { e: {} } } },
    },
  };
  for (const yes of ['cpu', 'cpu.count', 'ram.gb', 'disk.size', 'a.x', 'b.y', 'b.z', 'c.t', 'c.e', 'net.anything.below']) {
    assert.ok(describes(schema, yes), yes);
  }
  for (const no of ['cpu.cont', 'cpu.count.deeper', 'ram.mb', 'a.y', 'nothing']) assert.not.ok(describes(schema, no), no);
});

test('additionalProperties allows keys without describing them; patternProperties describes the keys it matches', () => {
  const schema = {
    properties: {
      labels: { additionalProperties: { type: 'string' } },
      metrics: { patternProperties: { '^m_[a-z]+$': { properties: { v: {} } } } },
    },
    additionalProperties: true,
  };
  assert.not.ok(describes(schema, 'labels.region'));
  assert.not.ok(describes(schema, 'other'));
  assert.ok(describes(schema, 'metrics.m_speed.v'));
  assert.not.ok(describes(schema, 'metrics.speed'));
  assert.not.ok(describes({ patternProperties: { '(': {} } }, 'x'), 'a pattern that does not compile matches nothing');
});

test('array elements: items, prefixItems (tuples) with items after them, draft-07 items arrays and additionalItems', () => {
  const schema = {
    properties: {
      runs: { items: { properties: { s: {} } } },
      pair: { prefixItems: [{ properties: { a: {} } }, { properties: { b: {} } }], items: { properties: { rest: {} } } },
      old: { items: [{ properties: { a: {} } }], additionalItems: { properties: { more: {} } } },
      closed: { prefixItems: [{}], items: false },
    },
  };
  for (const yes of ['runs.0.s', 'runs.17.s', 'runs.-1.s', 'pair.0.a', 'pair.1.b', 'pair.5.rest', 'old.0.a', 'old.3.more', 'closed.0']) {
    assert.ok(describes(schema, yes), yes);
  }
  for (const no of ['runs.x', 'runs.0.t', 'pair.0.b', 'pair.1.a', 'old.0.more', 'closed.1']) assert.not.ok(describes(schema, no), no);
  assert.equal(leaves(schema), ['runs.[].s', 'pair.[].a', 'old.[].a', 'closed.[]']);
});

test('a schema that names nothing describes nothing; a reference to another document leaves everything described', () => {
  for (const schema of [{}, true, { type: 'object' }, { additionalProperties: { type: 'number' } }]) {
    assert.not.ok(new DescribedPaths(schema).describesAnything, JSON.stringify(schema));
  }
  const remote = new DescribedPaths({ $ref: 'https://example.org/elsewhere.json' });
  assert.ok(remote.describes(path('any.thing')));
  assert.not.ok(remote.describesAnything);
});

test('recursive schemas end: a tree refers to itself', () => {
  const tree = {
    $defs: { node: { properties: { name: {}, children: { items: { $ref: '#/$defs/node' } } } } },
    $ref: '#/$defs/node',
  };
  const described = new DescribedPaths(tree);
  assert.ok(described.describes(path('children.0.children.3.name')));
  assert.not.ok(described.describes(path('children.0.nam')));
  // Listed down to where it comes back to itself: one level of children.
  assert.equal(leaves(tree), ['name', 'children.[].name', 'children.[].children']);
  assert.equal(described.suggest(path('children.2.nme')), ['children', '2', 'name']);
  assert.equal(described.suggest(path('nme')), ['name']);
  // `$recursiveRef` (2019-09) and a self-reference through `#` end too.
  assert.ok(describes({ properties: { next: { $ref: '#' }, v: {} } }, 'next.next.next.v'));
  assert.ok(describes({ $recursiveAnchor: true, properties: { next: { $recursiveRef: '#' }, v: {} } }, 'next.next.v'));
});

/** `value` behind proxies that count every property read, at any depth, in `reads.count`. */
function counted<T>(value: T, reads: { count: number }): T {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value as object, {
    get(target, key, receiver) {
      reads.count++;
      return counted(Reflect.get(target, key, receiver), reads);
    },
  }) as T;
}

test('a wide schema is bounded: at most MAX_LEAVES leaf paths, the walk for them counted in reads of the schema', () => {
  // 400 × 50 = 20,000 leaves, four times MAX_LEAVES. Work is counted, not timed: reads of the schema.
  const wide = {
    properties: Object.fromEntries(
      Array.from({ length: 400 }, (_, i) => [
        `k${i}`,
        { properties: Object.fromEntries(Array.from({ length: 50 }, (_, j) => [`p${j}`, {}])) },
      ]),
    ),
  };
  const reads = { count: 0 };
  const described = new DescribedPaths(counted(wide, reads));
  // Indexing ($id, anchors) reads each subschema a few times: linear in the schema's size.
  const indexing = reads.count;
  assert.ok(indexing < 5 * 20_000, `indexing read the schema ${indexing} times`);
  assert.is(described.leaves().length, MAX_LEAVES);
  // The leaves' walk stops at MAX_LEAVES: its reads depend on that bound, not on the 20,000 leaves
  // (about 20 per leaf found; a walk of the whole schema would read it about 400,000 times).
  const walking = reads.count - indexing;
  assert.ok(walking < 25 * MAX_LEAVES, `the walk read the schema ${walking} times`);
  assert.equal(described.suggest(path('k3.p7x')), ['k3', 'p7']);
  assert.is(reads.count - indexing - walking, 0, 'a suggestion reads the leaves found, not the schema');
});

test('suggestions: nearest leaf by edit distance, array indexes kept, else a leaf with the same last key, else none', () => {
  const described = new DescribedPaths({
    properties: {
      machine: { properties: { cpu: { properties: { count: {}, model: {} } } } },
      result: { properties: { score: {} } },
      runs: { items: { properties: { seconds: {} } } },
    },
  });
  assert.equal(described.suggest(path('machine.cpu.cont')), ['machine', 'cpu', 'count']);
  assert.equal(described.suggest(path('runs.4.secnds')), ['runs', '4', 'seconds']);
  assert.equal(described.suggest(path('runs.x.secnds')), ['runs', '0', 'seconds']);
  assert.equal(described.suggest(path('score')), ['result', 'score']);
  assert.equal(described.suggest(path('zzzzzz')), null);
  assert.is(editDistance('kitten', 'sitting', 10), 3);
  assert.is(editDistance('kitten', 'sitting', 2), 3, 'past the limit: limit + 1');
  assert.is(editDistance('a', 'abcdef', 2), 3);
});

test.run();
