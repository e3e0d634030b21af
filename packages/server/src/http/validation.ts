import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { ErrorDetail } from '../core/errors.ts';
import { isDateBound } from '../core/dates.ts';

// ajv-formats is CommonJS: imported from ESM, its default is `module.exports`, whose `default` is
// the plugin (both in its types and at run time).
const addFormats = ajvFormats.default;

function makeAjv(coerce: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: false,
    strict: false,
    coerceTypes: coerce ? 'array' : false,
    useDefaults: true,
    removeAdditional: false,
  });
  addFormats(ajv);
  ajv.addFormat('date-bound', { type: 'string', validate: isDateBound });
  return ajv;
}

/** Query and path parameters arrive as strings: coerced (arrays too). Bodies are not coerced. */
const coercing = makeAjv(true);
const strict = makeAjv(false);

export type Where = ErrorDetail['in'];

export type CompiledValidator = (data: unknown) => ErrorDetail[] | null;

/** `schema`: a JSON Schema (a TypeBox schema of the contract, or a plain one). */
export function compileValidator(schema: object, where: Where): CompiledValidator {
  const ajv = where === 'body' ? strict : coercing;
  const validate: ValidateFunction = ajv.compile(JSON.parse(JSON.stringify(stripIds(schema))));
  return (data) => (validate(data) ? null : foldAlternatives(validate.errors ?? []).map((e) => describeError(e, where)));
}

/**
 * ajv reports an `anyOf` of `required` alternatives (a field or its deprecated alias, as a benchmark's
 * container_image or docker_image) as one error per alternative and one for the anyOf: folded into one
 * `required` error naming the first field, the others in `params.alternatives`.
 */
export function foldAlternatives(errors: readonly ErrorObject[]): ErrorObject[] {
  const out: ErrorObject[] = [];
  for (const e of errors) {
    const branches = e.keyword === 'anyOf' ? out.filter((b) => b.schemaPath.startsWith(`${e.schemaPath}/`)) : [];
    if (!branches.length || !branches.every((b) => b.keyword === 'required' && b.instancePath === e.instancePath)) {
      out.push(e);
      continue;
    }
    const names = branches.map((b) => String((b.params as { missingProperty: string }).missingProperty));
    out.splice(out.indexOf(branches[0]!), branches.length);
    out.push({ ...branches[0]!, params: { missingProperty: names[0]!, alternatives: names.slice(1) } });
  }
  return out;
}

/** $id is for the OpenAPI components; ajv would refuse the same $id compiled twice. */
function stripIds(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(stripIds);
  if (schema && typeof schema === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema)) if (k !== '$id') out[k] = stripIds(v);
    return out;
  }
  return schema;
}

/** One ajv error as {in, path, message}, with the parameter name for query and path parts. */
export function describeError(e: ErrorObject, where: Where): ErrorDetail {
  let pointer = e.instancePath;
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') {
    const extra = String((e.params as { additionalProperty: string }).additionalProperty);
    pointer = `${pointer}/${extra}`;
    message = where === 'query' ? `unknown query parameter '${extra}'` : `unknown field '${extra}'`;
  } else if (e.keyword === 'required') {
    const { missingProperty, alternatives = [] } = e.params as { missingProperty: string; alternatives?: string[] };
    const missing = [missingProperty, ...alternatives].map((name) => `'${name}'`).join(' or ');
    pointer = `${pointer}/${missingProperty}`;
    message = where === 'query' ? `query parameter ${missing} is required` : `field ${missing} is required`;
  } else if (e.keyword === 'enum' || e.keyword === 'const') {
    const allowed = (e.params as { allowedValues?: unknown[]; allowedValue?: unknown }).allowedValues ?? [
      (e.params as { allowedValue?: unknown }).allowedValue,
    ];
    message = `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`;
  } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'date-bound') {
    message = 'must be a date (2024-05-01) or a date-time with a zone (2024-05-01T12:00:00Z)';
  } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'uuid') {
    message = 'must be a UUID';
  }
  const path = where === 'body' ? pointer || '/' : pointer.replace(/^\//, '').split('/')[0] || pointer;
  return { in: where, path, message };
}
