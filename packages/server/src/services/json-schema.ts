import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Script } from 'node:vm';
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import standaloneModule from 'ajv/dist/standalone/index.js';
import addFormatsModule from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import type { ErrorDetail } from '../core/errors.ts';

// Both packages are CommonJS modules whose `module.exports` is the function itself, with a `default`
// property naming it again: TypeScript types the default import as that module, so take `.default`.
const addFormats = addFormatsModule.default;
const standaloneCode = standaloneModule.default;
const require = createRequire(import.meta.url);
const draft06 = require('ajv/dist/refs/json-schema-draft-06.json') as Record<string, unknown>;

/** The most violations reported for one result: enough to fix a document, bounded against abuse. */
export const MAX_REPORTED_ERRORS = 50;

type Draft = '2020-12' | '2019-09' | 'draft-07' | 'draft-06';

/** A validator instance of any supported draft (each class extends ajv's core). */
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

const DRAFTS: Record<string, Draft> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-06/schema': 'draft-06',
};

export const SUPPORTED_DRAFTS = Object.keys(DRAFTS);

/** The draft a schema names in `$schema` (2020-12 when it names none), or null when unsupported. */
export function draftOf(schema: unknown): Draft | null {
  if (typeof schema === 'boolean' || !schema || typeof schema !== 'object') return '2020-12';
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return null;
  return DRAFTS[declared.replace(/#$/, '')] ?? null;
}

/**
 * A new validator instance for one schema: schemas of different benchmarks may share an `$id`, and
 * unknown annotation keywords (such as `suggestToUser`) are allowed (strict off). A referenced
 * schema is compiled once and called (`inlineRefs: false`): inlined at each reference, a 12 KB
 * schema referring 200 times to a definition of 200 properties took 18 s and 940 MB to compile.
 */
function newAjv(draft: Draft, options: { validateSchema: boolean; standalone?: boolean }): AnyAjv {
  const settings = {
    strict: false,
    allErrors: true,
    validateFormats: true,
    validateSchema: options.validateSchema,
    inlineRefs: false,
    code: { source: options.standalone ?? false },
  } as const;
  let ajv: AnyAjv;
  if (draft === '2020-12') ajv = new Ajv2020(settings);
  else if (draft === '2019-09') ajv = new Ajv2019(settings);
  else {
    ajv = new Ajv(settings);
    if (draft === 'draft-06') ajv.addMetaSchema(draft06);
  }
  addFormats(ajv);
  return ajv;
}

/** One instance per draft checks schemas against the meta-schema, which it compiles only once. */
const metaCheckers = new Map<Draft, AnyAjv>();

/** The problems of a schema of a supported draft against its meta-schema, or null. */
function metaSchemaProblems(schema: unknown, draft: Draft): ErrorDetail[] | null {
  let ajv = metaCheckers.get(draft);
  if (!ajv) {
    ajv = newAjv(draft, { validateSchema: true });
    metaCheckers.set(draft, ajv);
  }
  if (ajv.validateSchema(schema as AnySchema)) return null;
  return (ajv.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => ({
    in: 'body' as const,
    path: `/json_schema${e.instancePath}`,
    message: `${e.message ?? 'is invalid'} (JSON Schema ${draft})`,
  }));
}

function pointerOf(e: ErrorObject): string {
  if (e.keyword === 'required') {
    return `${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty}`;
  }
  if (e.keyword === 'additionalProperties') {
    return `${e.instancePath}/${(e.params as { additionalProperty: string }).additionalProperty}`;
  }
  return e.instancePath || '/';
}

/**
 * Checks that a benchmark's json_schema is itself a valid JSON Schema of a supported draft, and
 * that it compiles (every $ref resolves). Returns the problems, or null when it is valid.
 * Compiling costs far more than the schema's size suggests: the server runs this in a worker
 * (services/schema-worker.ts), never on its event loop.
 */
export function checkJsonSchema(schema: unknown): ErrorDetail[] | null {
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    return [{ in: 'body', path: '/json_schema', message: 'must be a JSON Schema: an object or a boolean' }];
  }
  const draft = draftOf(schema);
  if (!draft) {
    return [{ in: 'body', path: '/json_schema/$schema', message: `unsupported $schema; use one of ${SUPPORTED_DRAFTS.join(', ')}` }];
  }
  const problems = metaSchemaProblems(schema, draft);
  if (problems) return problems;
  try {
    newAjv(draft, { validateSchema: false }).compile(schema as AnySchema);
  } catch (err) {
    return [{ in: 'body', path: '/json_schema', message: `does not compile: ${(err as Error).message}` }];
  }
  return null;
}

/**
 * The number of values inside a JSON document (object members and array elements at any depth;
 * `{"time": {"type": "number"}}` has 2), counted without recursion until the count passes `limit`.
 */
export function countNodes(value: unknown, limit: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length && count <= limit) {
    const item = stack.pop();
    if (item === null || typeof item !== 'object') continue;
    const children = Array.isArray(item) ? item : Object.values(item);
    count += children.length;
    for (const child of children) if (child !== null && typeof child === 'object') stack.push(child);
  }
  return count;
}

export type ResultValidator = (json: unknown) => ErrorDetail[] | null;

/** Reports every violation (bounded) with its JSON pointer. */
function reporting(validate: ValidateFunction): ResultValidator {
  return (json) =>
    validate(json)
      ? null
      : (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => ({
          in: 'json' as const,
          path: pointerOf(e),
          message: e.message ?? 'is invalid',
        }));
}

/**
 * The source of a schema's result validator, generated by ajv's standalone code generation: a
 * function expression taking `(require, module)`, whose `module.exports` becomes the validation
 * function, with `functions` listing every function of the code. Throws when the schema is not
 * valid or does not compile (as a stored schema that bypassed the checks could).
 */
export function validatorSource(schema: unknown): string {
  const draft = draftOf(schema);
  if (!draft) throw new Error(`unsupported $schema; use one of ${SUPPORTED_DRAFTS.join(', ')}`);
  const problems = metaSchemaProblems(schema, draft);
  if (problems) throw new Error(problems.map((p) => `${p.path}: ${p.message}`).join('; '));
  const ajv = newAjv(draft, { validateSchema: false, standalone: true });
  const code = standaloneCode(ajv, ajv.compile(schema as AnySchema));
  const functions = [...code.matchAll(/function (validate\d+)\(/g)].map((m) => m[1]);
  return `(function (require, module) {${code}\nmodule.exports.functions = [${functions.join(', ')}];\n})`;
}

/** Where the generated code comes from, in stack traces. */
const VALIDATOR_FILENAME = 'json-schema-validator.js';

/** The code of a validator, compiled by V8: with `cachedData` (from `validatorCodeCache`) this costs little. */
export function validatorScript(source: string, cachedData?: Uint8Array): Script {
  return new Script(source, { filename: VALIDATOR_FILENAME, ...(cachedData ? { cachedData } : {}) });
}

function runScript(script: Script): ValidateFunction & { functions: ((data: unknown) => unknown)[] } {
  const module = { exports: undefined as unknown };
  (script.runInThisContext() as (require: NodeJS.Require, module: { exports: unknown }) => void)(require, module);
  return module.exports as ValidateFunction & { functions: ((data: unknown) => unknown)[] };
}

/**
 * V8's code cache of a validator's script with every function compiled (each is called once, on
 * nothing), so that the thread loading it compiles nothing, not even lazily on a first upload.
 */
export function validatorCodeCache(script: Script): Uint8Array {
  for (const fn of runScript(script).functions) {
    try {
      fn(undefined);
    } catch {
      // only compiling mattered
    }
  }
  return script.createCachedData();
}

/** A validator from its script (see validatorSource). */
export function loadValidator(script: Script): ResultValidator {
  return reporting(runScript(script));
}

const cache = new LRUCache<string, ResultValidator>({ max: 1000 });

/**
 * The validator of a benchmark's results, compiled on the calling thread once per (benchmark,
 * schema) and cached: for tools and tests. The server compiles in a worker (services/schema-compiler.ts).
 */
export function resultValidator(benchmarkId: string, schema: unknown): ResultValidator {
  const key = `${benchmarkId}:${createHash('sha256').update(JSON.stringify(schema)).digest('base64url')}`;
  let validator = cache.get(key);
  if (validator) return validator;
  validator = reporting(newAjv(draftOf(schema) ?? '2020-12', { validateSchema: true }).compile(schema as AnySchema));
  cache.set(key, validator);
  return validator;
}
