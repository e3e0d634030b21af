/**
 * The streaming splitter of upload inputs: the same items whatever the chunk boundaries (fed whole,
 * then one character at a time), escapes and brackets inside strings, NDJSON detection, and
 * malformed or truncated input reported at its place.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JsonSplitter, type Piece } from '../src/upload/json-splitter.ts';
import { toItem } from '../src/upload/read.ts';

function split(text: string, format: 'lines' | 'detect' = 'detect', step = text.length || 1): Piece[] {
  const splitter = new JsonSplitter(format);
  const out: Piece[] = [];
  for (let i = 0; i < text.length; i += step) out.push(...splitter.push(text.slice(i, i + step)));
  out.push(...splitter.end());
  return out;
}

/** Splits whole and one character at a time; both must agree. */
function both(text: string, format: 'lines' | 'detect' = 'detect'): Piece[] {
  const whole = split(text, format);
  assert.equal(split(text, format, 1), whole, 'one character at a time gives the same pieces');
  assert.equal(split(text, format, 7), whole, 'chunks of 7 give the same pieces');
  return whole;
}

const values = (pieces: Piece[]) => pieces.map((p) => (p.error ? { error: p.error, index: p.index, line: p.line } : JSON.parse(p.text)));

test('a top-level array: each element with its index, strings holding brackets, commas, quotes and escapes', () => {
  const items = [{ a: '],[{"x' }, { b: 'back\\slash\\', c: [1, { d: '}' }] }, { e: 'üñí ☃ \u2028 \\"' }, { f: null }];
  const pieces = both(JSON.stringify(items, null, 2));
  assert.equal(values(pieces), items);
  assert.equal(
    pieces.map((p) => p.index),
    [0, 1, 2, 3],
  );
});

test('one object per line is NDJSON, with line numbers; blank lines skipped; a bad line fails alone', () => {
  const text = '{"n":1}\n\n{"n":2}\n{"n": 3,, }\n{"n":"4"}\r\n';
  const pieces = both(text);
  assert.equal(
    pieces.map((p) => p.line),
    [1, 3, 4, 5],
  );
  const items = pieces.map((p) => toItem('f', p));
  assert.equal(
    items.map((i) => i.value?.n ?? i.error?.slice(0, 14)),
    [1, 2, 'malformed JSON', '4'],
  );
  assert.equal(items[2]!.line, 4);
  // Forced lines (.ndjson): the same, even when an object is unbalanced.
  assert.equal(
    both('{"a":1\n{"b":2}\n', 'lines').map((p) => [p.line, p.text]),
    [
      [1, '{"a":1'],
      [2, '{"b":2}'],
    ],
  );
});

test('a pretty-printed object is one item at line 1; several are each at the line they start', () => {
  assert.equal(
    both('{\n  "a": {\n    "b": [1, 2]\n  }\n}\n').map((p) => [p.line, JSON.parse(p.text)]),
    [[1, { a: { b: [1, 2] } }]],
  );
  assert.equal(
    both('{\n "a": 1\n}\n{\n "a": 2\n}').map((p) => p.line),
    [1, 4],
  );
});

test('a byte order mark is ignored; an empty input has no items', () => {
  assert.equal(values(both('\ufeff[{"a":1}]')), [{ a: 1 }]);
  assert.equal(both(''), []);
  assert.equal(both('  \n [ ] \n'), []);
});

test('malformed arrays: an empty element, an element that does not parse, text after the array, a truncated file', () => {
  const pieces = both('[{"a":1},,{"b":2},{"c":}]');
  assert.equal(
    pieces.map((p) => p.index),
    [0, 1, 2, 3],
  );
  assert.match(pieces[1]!.error!, /an empty element/);
  assert.match(toItem('f', pieces[3]!).error!, /^malformed JSON/);
  assert.equal(toItem('f', pieces[2]!).value, { b: 2 });

  const after = both('[{"a":1}] {"b":2}');
  assert.equal(after.length, 2);
  assert.match(after[1]!.error!, /unexpected text after the closing \]/);

  const truncated = both('[{"a":1},{"b":"un');
  assert.equal(
    truncated.map((p) => p.index),
    [0, 1],
  );
  assert.match(truncated[1]!.error!, /the input ends inside element 1 of the array/);
  assert.match(both('[{"a":1}, ')[1]!.error!, /ends before the array is closed/);
  assert.match(both('{"a": [1, 2')[0]!.error!, /ends inside this value/);
});

test('a parse error in a multi-line value points at its own line', () => {
  const [piece] = both('\n{\n  "a": 1,\n  , "b": 2\n}');
  const item = toItem('f.json', piece!);
  assert.match(item.error!, /^malformed JSON/);
  assert.is(item.line, 4);
});

test('scalars and arrays are not results', () => {
  const items = both('1\n"two"\n[3]\nnull\n').map((p) => toItem('f', p));
  assert.equal(
    items.map((i) => i.error),
    [
      'not a JSON object (got number)',
      'not a JSON object (got string)',
      'not a JSON object (got an array)',
      'not a JSON object (got null)',
    ],
  );
});

test.run();
