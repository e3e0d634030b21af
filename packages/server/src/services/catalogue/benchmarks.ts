import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import { BENCHMARK_ALIASES, type BenchmarkInput, BenchmarkSort, BenchmarkUpdate } from '@benchmarks/sdk/contract/benchmarks';
import { readOnlyFields } from '@benchmarks/sdk/contract/catalogue-schemas';
import { Benchmark, type BenchmarkRow } from '../../entities/catalogue.ts';
import { AppError } from '../../core/errors.ts';
import { type CatalogueKind, createItem, resultReferences, updateItem } from './catalogue.ts';
import { approveItem, removeItem } from './review.ts';
import type { SchemaCompiler } from '../schemas/schema-compiler.ts';
import { choosePathsOfNewBenchmark, type MetricValues } from '../metrics/metric-values.ts';
import type { Caller } from '../../core/caller.ts';
import { transaction } from '../../db/transaction.ts';
import { Where } from '../../db/sql.ts';
import { benchmarkView } from './views.ts';

export const benchmarks: CatalogueKind<BenchmarkRow, ReturnType<typeof benchmarkView>> = {
  type: 'benchmark',
  label: 'Benchmark',
  table: 'benchmark',
  entity: Benchmark,
  view: benchmarkView,
  title: (row) => `${row.container_image}:${row.container_tag}`,
  duplicate: (f) => `Benchmark ${f.container_image}:${f.container_tag} already exists.`,
  sort: BenchmarkSort,
  sortColumns: {
    name: ['container_image', 'container_tag'],
    docker_image: ['container_image'],
    docker_tag: ['container_tag'],
  } satisfies Partial<Record<(typeof BenchmarkSort.fields)[number], readonly string[]>>,
  searchColumns: ['container_image', 'container_tag', 'description'],
  readOnly: readOnlyFields(BenchmarkUpdate),
  references: resultReferences('benchmark_id'),
};

/**
 * The stored fields of a creation or update body: json_schema checked (its size here, the rest in a
 * worker thread), optional text null when absent.
 */
export async function benchmarkFields(body: Static<typeof BenchmarkInput>, schemas: SchemaCompiler): Promise<Partial<BenchmarkRow>> {
  const named = unaliased(body, 'body');
  const problems = await schemas.check(body.json_schema);
  if (problems) {
    throw new AppError(422, 'INVALID_JSON_SCHEMA', 'json_schema is not a valid JSON Schema.', { errors: problems });
  }
  return {
    // The contract requires each under one of its names.
    container_image: named.container_image!,
    container_tag: named.container_tag!,
    json_schema: body.json_schema,
    description: body.description ?? null,
    url: body.url ?? null,
  };
}

type Named = Partial<Record<(typeof BENCHMARK_ALIASES)[number][0] | (typeof BENCHMARK_ALIASES)[number][1], string>>;

/**
 * Image and tag from a body or a query that may name them as SPEC.md does or as the origin service
 * did (docker_image, docker_tag; docs/decisions.md): the alias alone stands for the field; both
 * given with different values is 422 naming both.
 */
export function unaliased(values: Named, where: 'body' | 'query'): Pick<Named, 'container_image' | 'container_tag'> {
  const out: Pick<Named, 'container_image' | 'container_tag'> = {};
  const conflicts: (typeof BENCHMARK_ALIASES)[number][] = [];
  for (const pair of BENCHMARK_ALIASES) {
    const [field, alias] = pair;
    if (values[field] !== undefined && values[alias] !== undefined && values[field] !== values[alias]) conflicts.push(pair);
    out[field] = values[field] ?? values[alias];
  }
  if (!conflicts.length) return out;
  const names = conflicts.map((pair) => pair.join(' and ')).join('; ');
  throw new AppError(
    422,
    where === 'body' ? 'INVALID_BODY' : 'INVALID_QUERY',
    `${names} differ: each pair names one field (the second is its deprecated alias); give one of them, or both with the same value.`,
    {
      errors: conflicts.map(([field, alias]) => ({
        in: where,
        path: where === 'body' ? `/${alias}` : alias,
        message: `differs from ${field}, of which it is a deprecated alias`,
      })),
    },
  );
}

/** The exact filters of GET /benchmarks. */
export function benchmarkFilters(query: Named): Where {
  const where = new Where();
  const named = unaliased(query, 'query');
  if (named.container_image !== undefined) where.add('container_image = ?', named.container_image);
  if (named.container_tag !== undefined) where.add('container_tag = ?', named.container_tag);
  return where;
}

/** What the benchmark writes below use besides the request's EntityManager. */
export interface BenchmarkServices {
  orm: MikroORM;
  schemas: SchemaCompiler;
  metrics: { values: MetricValues };
}

/**
 * Brings the metric values table in line with the benchmarks' schemas, in the background: on an
 * EntityManager of its own (the request's ends with the request); `reconcile` never rejects, it
 * logs a failure, which the next change or start mends.
 */
function reindex(services: BenchmarkServices): void {
  void services.metrics.values.reconcile(services.orm.em.fork());
}

/**
 * Creates a benchmark (approved at once when an administrator creates it) with its metric paths
 * chosen in the same transaction: its results are filtered and sorted from the metric values table
 * from the first upload on.
 */
export async function createBenchmark(em: EntityManager, caller: Caller, fields: Partial<BenchmarkRow>): Promise<BenchmarkRow> {
  return transaction(em, async (tx) => {
    const row = await createItem(tx, benchmarks, caller, fields);
    await choosePathsOfNewBenchmark(tx, row.id, row.json_schema);
    return row;
  });
}

/** Updates a benchmark; a changed schema may change its metric paths, which the table follows. */
export async function updateBenchmark(
  em: EntityManager,
  services: BenchmarkServices,
  id: string,
  body: Static<typeof BenchmarkUpdate>,
): Promise<BenchmarkRow> {
  const row = await updateItem(em, benchmarks, id, await benchmarkFields(body, services.schemas), body);
  reindex(services);
  return row;
}

/** Deletes a benchmark (its metric paths and values go with it: foreign keys and triggers). */
export async function deleteBenchmark(em: EntityManager, id: string, cascade?: boolean): Promise<void> {
  await removeItem(em, benchmarks, id, 'delete', cascade);
}

/** Approves a benchmark: its results can now be uploaded. */
export async function approveBenchmark(em: EntityManager, id: string): Promise<void> {
  await approveItem(em, benchmarks, id);
}
