/**
 * The ajv instances that check results against a benchmark's `json_schema`, set up the one way the
 * service does: the server's validators and the CLI's `--dry-run` both come from `createAjv`, so
 * that a result the CLI finds valid is one the server accepts, and no copy drifts from the settings
 * below. Node only (ajv compiles with `new Function`); not part of the SDK's main entry point.
 */
import { Ajv } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import addFormatsModule from 'ajv-formats';

// A CommonJS module whose `module.exports` is the function itself, with a `default` property naming
// it again: TypeScript types the default import as that module, so take `.default`.
const addFormats = addFormatsModule.default;

/** The JSON Schema drafts a benchmark's schema may use. */
export type Draft = '2020-12' | '2019-09' | 'draft-07' | 'draft-06';

/** A validator instance of any supported draft (each class extends ajv's core). */
export type AnyAjv = Ajv | Ajv2019 | Ajv2020;

const DRAFTS: Record<string, Draft> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-06/schema': 'draft-06',
};

/** The `$schema` URIs a benchmark's schema may name. */
export const SUPPORTED_DRAFTS = Object.keys(DRAFTS);

/** The draft a schema names in `$schema` (2020-12 when it names none), or null when unsupported. */
export function draftOf(schema: unknown): Draft | null {
  if (typeof schema === 'boolean' || !schema || typeof schema !== 'object') return '2020-12';
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return null;
  return DRAFTS[declared.replace(/#$/, '')] ?? null;
}

export interface CreateAjvOptions {
  /** Check each schema against its draft's meta-schema before compiling it. */
  validateSchema: boolean;
  /** Keep the generated code, for ajv's standalone output. Default false. */
  standalone?: boolean;
}

/**
 * A new validator instance for one schema: schemas of different benchmarks may share an `$id`, and
 * unknown annotation keywords (such as `suggestToUser`) are allowed (strict off); every violation
 * is reported (callers bound how many they show) and formats are checked. A referenced schema is
 * compiled once and called (`inlineRefs: false`): inlined at each reference, a 12 KB schema
 * referring 200 times to a definition of 200 properties took 18 s and 940 MB to compile.
 */
export function createAjv(draft: Draft, options: CreateAjvOptions): AnyAjv {
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
