import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Ajv, type AnySchema, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../http/errors.ts';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv) => Ajv;
const require = createRequire(import.meta.url);
const draft06 = require('ajv/dist/refs/json-schema-draft-06.json') as Record<string, unknown>;

/** The most violations reported for one result: enough to fix a document, bounded against abuse. */
export const MAX_REPORTED_ERRORS = 50;

type Draft = '2020-12' | '2019-09' | 'draft-07' | 'draft-06';

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
 * unknown annotation keywords (such as `suggestToUser`) are allowed (strict off).
 */
function newAjv(draft: Draft, allErrors: boolean): Ajv {
  const options = { strict: false, allErrors, validateFormats: true, validateSchema: true } as const;
  let ajv: Ajv;
  if (draft === '2020-12') ajv = new Ajv2020(options) as unknown as Ajv;
  else if (draft === '2019-09') ajv = new Ajv2019(options) as unknown as Ajv;
  else {
    ajv = new Ajv(options);
    if (draft === 'draft-06') ajv.addMetaSchema(draft06);
  }
  addFormats(ajv);
  return ajv;
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
 */
export function checkJsonSchema(schema: unknown): ErrorDetail[] | null {
  if (typeof schema !== 'boolean' && (schema === null || typeof schema !== 'object' || Array.isArray(schema))) {
    return [{ in: 'body', path: '/json_schema', message: 'must be a JSON Schema: an object or a boolean' }];
  }
  const draft = draftOf(schema);
  if (!draft) {
    return [{ in: 'body', path: '/json_schema/$schema', message: `unsupported $schema; use one of ${SUPPORTED_DRAFTS.join(', ')}` }];
  }
  const ajv = newAjv(draft, true);
  if (!ajv.validateSchema(schema as AnySchema)) {
    return (ajv.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => ({
      in: 'body' as const,
      path: `/json_schema${e.instancePath}`,
      message: `${e.message ?? 'is invalid'} (JSON Schema ${draft})`,
    }));
  }
  try {
    ajv.compile(schema as AnySchema);
  } catch (err) {
    return [{ in: 'body', path: '/json_schema', message: `does not compile: ${(err as Error).message}` }];
  }
  return null;
}

export type ResultValidator = (json: unknown) => ErrorDetail[] | null;

const cache = new Map<string, ResultValidator>();
const CACHE_LIMIT = 1000;

/**
 * The validator of a benchmark's results, compiled once per (benchmark, schema) and cached.
 * Reports every violation (bounded) with its JSON pointer.
 */
export function resultValidator(benchmarkId: string, schema: unknown): ResultValidator {
  const key = `${benchmarkId}:${createHash('sha256').update(JSON.stringify(schema)).digest('base64url')}`;
  let validator = cache.get(key);
  if (validator) return validator;
  const ajv = newAjv(draftOf(schema) ?? '2020-12', true);
  const validate: ValidateFunction = ajv.compile(schema as AnySchema);
  validator = (json) =>
    validate(json)
      ? null
      : (validate.errors ?? []).slice(0, MAX_REPORTED_ERRORS).map((e) => ({
          in: 'json' as const,
          path: pointerOf(e),
          message: e.message ?? 'is invalid',
        }));
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(key, validator);
  return validator;
}
