/**
 * `--dry-run` checks results with the validator factory the server uses (@benchmarks/sdk/json-schema),
 * `inlineRefs: false` included: a referenced definition is compiled once and called, not copied at
 * each reference (copied, the schema below took 18 s and 940 MB to compile).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileSchema } from '../src/upload/validate.ts';

/** 12 KB of JSON: 200 properties, each a `$ref` to one definition of 200 properties. */
function manyReferences(refs = 200, props = 200): Record<string, unknown> {
  const definition: Record<string, unknown> = {};
  for (let i = 0; i < props; i++) definition[`p${i}`] = { type: 'number', minimum: 0 };
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < refs; i++) properties[`r${i}`] = { $ref: '#/$defs/d' };
  return { type: 'object', properties, $defs: { d: { type: 'object', properties: definition } } };
}

test('a schema referring 200 times to a definition of 200 properties compiles to code of its own size', async () => {
  const schema = manyReferences();
  const validate = await compileSchema(schema);
  // Called, the definition's code is there once (about 50 KB of code); inlined, it would be there
  // 200 times (about 13 KB of code per copy for 200 properties: megabytes).
  const code = validate.toString().length;
  assert.ok(code < 200_000, `the validator's code is ${code} characters`);
  assert.is(validate({ r0: { p0: 1 }, r199: { p199: 2 } }), true);
  assert.is(validate({ r7: { p3: -1 } }), false, 'the definition is checked through every reference');
  assert.equal(
    validate.errors?.map((e) => e.instancePath),
    ['/r7/p3'],
  );
});

test('drafts, formats and annotation keywords as on the server', async () => {
  const draft07 = await compileSchema({
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    properties: { at: { type: 'string', format: 'date-time', suggestToUser: true } },
  });
  assert.is(draft07({ at: '2026-01-02T03:04:05Z' }), true);
  assert.is(draft07({ at: 'yesterday' }), false, 'formats are checked');
  const draft06 = await compileSchema({ $schema: 'http://json-schema.org/draft-06/schema#', type: 'integer' });
  assert.is(draft06(3), true);
  assert.is(draft06(3.5), false);
});

test.run();
