import type { Reply } from '@benchmarks/sdk';
import { type Answer, run, useAnswer } from '../api.ts';
import { type SchemaPath, schemaPaths } from '../schema.ts';

export type Benchmark = Reply<'getBenchmark'>;

/** The benchmark a view is about, with the paths its schema describes. */
export function useBenchmark(id: string | null): Answer<{ benchmark: Benchmark; paths: SchemaPath[] }> {
  return useAnswer(`benchmark ${id}`, async (signal) => {
    if (!id) throw new Error('no benchmark_id in the address: choose a benchmark first');
    const benchmark = await run<Benchmark>(
      { operationId: 'getBenchmark', path: '/benchmarks/{id}', params: { id }, sdk: '', cli: '' },
      signal,
    );
    return { benchmark, paths: schemaPaths(benchmark.json_schema) };
  });
}

type Named = { id: string; name: string };

/** A group's name: `site / flavor` (or the site's, grouped by site). */
export const groupName = (g: { site: Named; flavor: Named | null }) => (g.flavor ? `${g.site.name} / ${g.flavor.name}` : g.site.name);
/** The id a group is chosen by (`baseline`, `flavor_id` or `site_id`). */
export const groupId = (g: { site: Named; flavor: Named | null }) => (g.flavor ? g.flavor.id : g.site.id);
