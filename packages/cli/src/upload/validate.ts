/**
 * `--dry-run`: each item checked against its benchmark's json_schema here, as the server would
 * (draft 2020-12 unless `$schema` names another; unknown keywords such as suggestToUser allowed).
 */
import type { Client } from '@benchmarks/sdk';
import type { Prepared } from './items.ts';
import { itemReport, type ItemReport } from './report.ts';

export type Check = (json: unknown) => string[] | null;

const DRAFTS: Record<string, '2020-12' | '2019-09' | 'draft-07' | 'draft-06'> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-06/schema': 'draft-06',
};

async function compile(schema: unknown): Promise<Check> {
  const [{ Ajv }, { Ajv2019 }, { Ajv2020 }, formats] = await Promise.all([
    import('ajv'),
    import('ajv/dist/2019.js'),
    import('ajv/dist/2020.js'),
    import('ajv-formats'),
  ]);
  const addFormats = ((formats as { default?: unknown }).default ?? formats) as (ajv: InstanceType<typeof Ajv>) => unknown;
  const declared = schema && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  const draft = typeof declared === 'string' ? (DRAFTS[declared.replace(/#$/, '')] ?? '2020-12') : '2020-12';
  const options = { strict: false, allErrors: true, validateFormats: true } as const;
  let ajv: InstanceType<typeof Ajv>;
  if (draft === '2020-12') ajv = new Ajv2020(options) as unknown as InstanceType<typeof Ajv>;
  else if (draft === '2019-09') ajv = new Ajv2019(options) as unknown as InstanceType<typeof Ajv>;
  else {
    ajv = new Ajv(options);
    // Imported, not required by path, so that the bundled CLI carries it.
    if (draft === 'draft-06')
      ajv.addMetaSchema((await import('ajv/dist/refs/json-schema-draft-06.json', { with: { type: 'json' } })).default);
  }
  addFormats(ajv);
  const validate = ajv.compile(schema as object | boolean);
  return (json) => {
    if (validate(json)) return null;
    return (validate.errors ?? []).slice(0, 20).map((e) => {
      const params = e.params as { missingProperty?: string; additionalProperty?: string };
      const path = `${e.instancePath}${params.missingProperty ? `/${params.missingProperty}` : ''}${params.additionalProperty ? `/${params.additionalProperty}` : ''}`;
      return `${path || '/'}: ${e.message ?? 'is invalid'}`;
    });
  };
}

/** One check per benchmark, compiled from its json_schema on the server when first needed. */
export class SchemaChecks {
  readonly #pending = new Map<string, Promise<Check>>();
  readonly #ready = new Map<string, Check>();

  constructor(private readonly client: Client) {}

  /** The check of a benchmark, at once when it is compiled already. */
  get(benchmarkId: string): Check | Promise<Check> {
    const ready = this.#ready.get(benchmarkId);
    if (ready) return ready;
    let pending = this.#pending.get(benchmarkId);
    if (!pending) {
      pending = this.client.benchmarks.get(benchmarkId).then(async (benchmark) => {
        const check = await compile(benchmark.json_schema);
        this.#ready.set(benchmarkId, check);
        return check;
      });
      this.#pending.set(benchmarkId, pending);
    }
    return pending;
  }
}

function splitProblem(problem: string): { path: string; message: string } {
  const at = problem.indexOf(': ');
  return { path: problem.slice(0, at), message: problem.slice(at + 2) };
}

/** The dry run's outcome of each item of a segment: valid, or invalid with its problems. */
export async function checkSegment(checks: SchemaChecks, segment: readonly Prepared[]): Promise<ItemReport[]> {
  const reports: ItemReport[] = [];
  for (const p of segment) {
    if (!p.upload) {
      reports.push(itemReport(p.raw, 'invalid', { error: p.error }));
      continue;
    }
    let check = checks.get(p.upload.benchmark_id);
    if (check instanceof Promise) check = await check;
    const problems = check(p.upload.json);
    reports.push(
      problems
        ? itemReport(p.raw, 'invalid', {
            error: {
              message: "does not satisfy the benchmark's json_schema",
              errors: problems.map((m) => ({ in: 'json', ...splitProblem(m) })),
            },
          })
        : itemReport(p.raw, 'valid'),
    );
  }
  return reports;
}
