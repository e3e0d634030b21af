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

/** A JSON Schema's validator; number parameters must be plain decimals first (ajv's coercion takes what `Number()` does). */
export function compileValidator(schema: object, where: Where): CompiledValidator {
  const ajv = where === 'body' ? strict : coercing;
  // $id is for the OpenAPI components; ajv would refuse the same $id compiled twice.
  const plain = JSON.parse(JSON.stringify(schema, (key, value) => (key === '$id' ? undefined : value)));
  const validate: ValidateFunction = ajv.compile(plain);
  const numbers = where === 'body' ? [] : numberParameters(plain);
  return (data) => {
    const syntax = numbers.length ? decimalNumberProblem(data, numbers, where) : null;
    if (syntax) return [syntax];
    return validate(data) ? null : foldAlternatives(validate.errors ?? []).map((e) => describeError(e, where, data));
  };
}

/**
 * How a number must be written in a parameter: an integer as digits after an optional `-`, a number
 * as JSON writes one; not `0x10`, ` 1`, `+1`, `1.0` or `1e1` for an integer, `Infinity` or '', all
 * of which `Number()` takes.
 */
const DECIMAL = {
  integer: /^-?\d+$/,
  number: /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/,
} as const;

type NumberKind = keyof typeof DECIMAL;

const DECIMAL_SYNTAX: Record<NumberKind, string> = {
  integer: "a decimal integer (digits, optionally after '-')",
  number: 'a decimal number as JSON writes one (0.95, -2, 9.5e-1)',
};

/** The kind of number a parameter's schema takes (or its items'); null when it takes anything else too: ajv decides. */
function numberKind(schema: unknown): NumberKind | null {
  if (!schema || typeof schema !== 'object') return null;
  const s = schema as { type?: unknown; items?: unknown; anyOf?: unknown[]; oneOf?: unknown[] };
  if (s.type === 'array') return numberKind(s.items);
  const kinds: (NumberKind | null)[] = [];
  if (s.type !== undefined) {
    for (const type of Array.isArray(s.type) ? s.type : [s.type]) kinds.push(type === 'integer' || type === 'number' ? type : null);
  }
  for (const branch of s.anyOf ?? s.oneOf ?? []) kinds.push(numberKind(branch));
  if (!kinds.length || kinds.includes(null)) return null;
  return kinds.includes('number') ? 'number' : 'integer';
}

/** The parameters (top-level properties) of an object schema that are numbers, with their kind. */
function numberParameters(schema: { properties?: Record<string, unknown> }): [string, NumberKind][] {
  const out: [string, NumberKind][] = [];
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const kind = numberKind(property);
    if (kind) out.push([name, kind]);
  }
  return out;
}

/** The first number parameter not written in plain decimal, as a problem naming it and what was sent. */
function decimalNumberProblem(data: unknown, numbers: [string, NumberKind][], where: Where): ErrorDetail | null {
  const values = data as Record<string, unknown>;
  for (const [name, kind] of numbers) {
    if (!Object.hasOwn(values, name)) continue;
    const given = values[name];
    for (const value of Array.isArray(given) ? given : [given]) {
      if (typeof value !== 'string') continue;
      if (DECIMAL[kind].test(value) && Number.isFinite(Number(value))) continue;
      const shown = JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
      const message = DECIMAL[kind].test(value) ? `must be a finite number, not ${shown}` : `must be ${DECIMAL_SYNTAX[kind]}, not ${shown}`;
      return { in: where, path: name, message };
    }
  }
  return null;
}

/**
 * ajv reports an `anyOf` of `required` alternatives (a field or its deprecated alias) as one error
 * each and one for the anyOf: folded into one naming the first field, the others in `alternatives`.
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

/** The value at a JSON pointer of ajv's `instancePath` in `data`. */
function valueAt(data: unknown, pointer: string): unknown {
  let value = data;
  for (const key of pointer.split('/').slice(1)) {
    if (!value || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return value;
}

/** The places of the first item equal (as JSON) to one before it, and of that one. */
function firstRepeat(items: unknown[]): [number, number] | undefined {
  const seen = new Map<string, number>();
  for (const [at, item] of items.entries()) {
    const key = JSON.stringify(item);
    const before = seen.get(key);
    if (before !== undefined) return [before, at];
    seen.set(key, at);
  }
  return undefined;
}

/** One ajv error as {in, path, message}, with the parameter name for query and path parts. */
export function describeError(e: ErrorObject, where: Where, data?: unknown): ErrorDetail {
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
  } else if (e.keyword === 'uniqueItems') {
    // ajv names the last pair by their places: the message names the value and its first repeat.
    const { i, j } = e.params as { i: number; j: number };
    const items = valueAt(data, pointer);
    const [first, again] = (Array.isArray(items) && firstRepeat(items)) || [Math.min(i, j), Math.max(i, j)];
    const shown = JSON.stringify((items as unknown[] | undefined)?.[first]) ?? 'a value';
    message = `must not repeat a value: ${shown.length > 80 ? `${shown.slice(0, 80)}…` : shown} is given twice (items ${first} and ${again})`;
  }
  const path = where === 'body' ? pointer || '/' : pointer.replace(/^\//, '').split('/')[0] || pointer;
  return { in: where, path, message };
}
