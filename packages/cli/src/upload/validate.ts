/**
 * `--dry-run`: each item checked against its benchmark's json_schema here, as the server would
 * (draft 2020-12 unless `$schema` names another; unknown keywords such as suggestToUser allowed).
 */
import type { Client } from '@benchmarks/sdk';
import type { AnySchema, ValidateFunction } from 'ajv';
import type { Prepared } from './items.ts';
import { itemReport, type ItemReport } from './report.ts';

export type Check = (json: unknown) => string[] | null;

/**
 * The validator of a benchmark's schema, from the factory the server uses (@benchmarks/sdk/json-schema):
 * the same drafts, formats and settings, `inlineRefs: false` among them. Loaded when first needed.
 */
export async function compileSchema(schema: unknown): Promise<ValidateFunction> {
  const { createAjv, draftOf } = await import('@benchmarks/sdk/json-schema');
  return createAjv(draftOf(schema) ?? '2020-12', { validateSchema: false }).compile(schema as AnySchema);
}

async function compile(schema: unknown): Promise<Check> {
  const validate = await compileSchema(schema);
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
