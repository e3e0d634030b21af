import type { Static } from '@sinclair/typebox';
import type { BenchmarkInput, BenchmarkSort } from '@benchmarks/sdk/contract/benchmarks';
import { Benchmark, type BenchmarkRow } from '../entities/catalogue.ts';
import { AppError } from '../core/errors.ts';
import type { CatalogueKind } from './catalogue.ts';
import type { SchemaCompiler } from './schema-compiler.ts';
import { Where } from './sql.ts';

type SortField = (typeof BenchmarkSort.fields)[number];

import { benchmarkView } from './views.ts';

export { benchmarkView };

const RESULTS = 'from result where benchmark_id = ?';

export const benchmarks: CatalogueKind<BenchmarkRow, ReturnType<typeof benchmarkView>> = {
  type: 'benchmark',
  label: 'Benchmark',
  table: 'benchmark',
  entity: Benchmark,
  view: benchmarkView,
  title: (row) => `${row.container_image}:${row.container_tag}`,
  duplicate: (f) => `Benchmark ${f.container_image}:${f.container_tag} already exists.`,
  sortColumns: {
    id: ['id'],
    name: ['container_image', 'container_tag'],
    container_image: ['container_image'],
    container_tag: ['container_tag'],
    description: ['description'],
    url: ['url'],
    status: ['status'],
    upload_datetime: ['upload_datetime'],
  } satisfies Record<SortField, readonly string[]>,
  defaultSort: '+container_image,+container_tag',
  searchColumns: ['container_image', 'container_tag', 'description'],
  references: {
    async count(em, id) {
      const [row] = await em.execute<{ n: number }[]>(`select count(*)::int as n ${RESULTS}`, [id]);
      return { count: row!.n };
    },
    async cascade(em, id) {
      await em.execute(`delete ${RESULTS}`, [id]);
    },
    cascadeHint: 'delete them too',
  },
};

/**
 * The stored fields of a creation or update body: json_schema checked (its size here, the rest in a
 * worker thread), optional text null when absent.
 */
export async function benchmarkFields(body: Static<typeof BenchmarkInput>, schemas: SchemaCompiler): Promise<Partial<BenchmarkRow>> {
  const problems = await schemas.check(body.json_schema);
  if (problems) {
    throw new AppError(422, 'INVALID_JSON_SCHEMA', 'json_schema is not a valid JSON Schema.', { errors: problems });
  }
  return {
    container_image: body.container_image,
    container_tag: body.container_tag,
    json_schema: body.json_schema,
    description: body.description ?? null,
    url: body.url ?? null,
  };
}

/** The exact filters of GET /benchmarks. */
export function benchmarkFilters(query: { container_image?: string; container_tag?: string }): Where {
  const where = new Where();
  if (query.container_image !== undefined) where.add('container_image = ?', query.container_image);
  if (query.container_tag !== undefined) where.add('container_tag = ?', query.container_tag);
  return where;
}
