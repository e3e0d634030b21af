/**
 * The benchmarks' JSON Schemas as this service judges them: the checks of POST /benchmarks and the
 * validators of POST /results (SchemaCompiler), each once, when first needed: a rerun compiles nothing.
 */
import { AppError } from '../core/errors.ts';
import type { ResultValidator } from '../services/schemas/json-schema.ts';
import { SchemaCompiler, SchemaNotCompiled } from '../services/schemas/schema-compiler.ts';

/** Whether this service accepts a schema, and if not, why (one sentence). */
export type SchemaVerdict = { accepted: true } | { accepted: false; reason: string };

interface Entry {
  schema: unknown;
  verdict?: Promise<SchemaVerdict>;
  validator?: Promise<ResultValidator | null>;
}

export class BenchmarkSchemas {
  readonly #compiler: SchemaCompiler;
  readonly #entries = new Map<string, Entry>();

  constructor(limits: { maxBytes: number; maxNodes: number }) {
    this.#compiler = new SchemaCompiler(limits);
  }

  /** Remembers the schema of a benchmark whose results may be imported. */
  add(benchmarkId: string, schema: unknown): void {
    this.#entries.set(benchmarkId, { schema });
  }

  has(benchmarkId: string): boolean {
    return this.#entries.has(benchmarkId);
  }

  /** Whether this service would accept the benchmark's schema in POST /benchmarks. */
  verdict(benchmarkId: string): Promise<SchemaVerdict> {
    const entry = this.#entry(benchmarkId);
    entry.verdict ??= this.#judge(entry.schema);
    return entry.verdict;
  }

  /** The validator of the benchmark's results, or null when its schema is not accepted here. */
  validator(benchmarkId: string): Promise<ResultValidator | null> {
    const entry = this.#entry(benchmarkId);
    entry.validator ??= this.verdict(benchmarkId).then(async (verdict) => {
      if (!verdict.accepted) return null;
      try {
        return await this.#compiler.validator(entry.schema);
      } catch (err) {
        if (err instanceof SchemaNotCompiled) return null;
        throw err;
      }
    });
    return entry.validator;
  }

  #entry(benchmarkId: string): Entry {
    const entry = this.#entries.get(benchmarkId);
    if (!entry) throw new Error(`benchmark ${benchmarkId} has no schema here`);
    return entry;
  }

  async #judge(schema: unknown): Promise<SchemaVerdict> {
    try {
      const problems = await this.#compiler.check(schema);
      if (!problems) return { accepted: true };
      return { accepted: false, reason: problems.map((p) => `${p.path.replace(/^\/json_schema/, '') || '/'}: ${p.message}`).join('; ') };
    } catch (err) {
      if (err instanceof AppError && err.status === 422) return { accepted: false, reason: err.detail };
      throw err;
    }
  }

  close(): Promise<void> {
    return this.#compiler.close();
  }
}
