import type { Core } from '../core.ts';
import type { BenchmarkSort } from '../contract/benchmarks.ts';
import type { Body, ListQuery, Query, FieldsOf, IdempotencyOptions, RequestOptions } from '../types.ts';

/**
 * `client.benchmarks`: benchmark definitions (one container image and tag, with the JSON Schema
 * results must satisfy).
 * @example
 * const b = await client.benchmarks.create({ container_image: 'ghcr.io/acme/hpl', container_tag: '1.0', json_schema: {}, url: 'https://acme.example/hpl' });
 * await adminClient.benchmarks.approve(b.id);
 * for await (const each of client.benchmarks.list({ sort_by: [asc('name')] })) console.log(each.name);
 */
export function benchmarksNamespace(core: Core) {
  return {
    /**
     * Approved benchmarks (or `status`), filtered and sorted.
     * @example
     * await client.benchmarks.list({ container_image: 'ghcr.io/acme/hpl' })
     */
    list: (query?: ListQuery<'listBenchmarks', FieldsOf<typeof BenchmarkSort>>, options?: RequestOptions) =>
      core.list('listBenchmarks', { ...options, query }),
    /**
     * Benchmarks matching every term.
     * @example
     * client.benchmarks.search({ terms: ['hpl'] })
     */
    search: (query?: ListQuery<'searchBenchmarks', FieldsOf<typeof BenchmarkSort>>, options?: RequestOptions) =>
      core.list('searchBenchmarks', { ...options, query }),
    /**
     * One benchmark by id, whatever its status.
     * @example
     * await client.benchmarks.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getBenchmark', { ...options, params: { id } }),
    /**
     * Uploads a benchmark (registered user); it starts on review unless an admin uploads it.
     * @example
     * await client.benchmarks.create({ container_image, container_tag, json_schema: {}, url })
     */
    create: (body: Body<'createBenchmark'>, options?: IdempotencyOptions) => core.request('createBenchmark', { ...options, body }),
    /**
     * Replaces a benchmark's fields (admin).
     * @example
     * await client.benchmarks.update(id, { ...fields, description: 'v2' })
     */
    update: (id: string, body: Body<'updateBenchmark'>, options?: RequestOptions) =>
      core.request('updateBenchmark', { ...options, params: { id }, body }),
    /**
     * Deletes a benchmark (admin); `{ cascade: true }` when results refer to it.
     * @example
     * await client.benchmarks.delete(id, { cascade: true })
     */
    delete: (id: string, query?: Query<'deleteBenchmark'>, options?: RequestOptions) =>
      core.request('deleteBenchmark', { ...options, params: { id }, query }),
    /**
     * Approves a benchmark on review (admin).
     * @example
     * await client.benchmarks.approve(id)
     */
    approve: (id: string, options?: RequestOptions) => core.request('approveBenchmark', { ...options, params: { id } }),
    /**
     * Rejects (removes) a benchmark on review (admin).
     * @example
     * await client.benchmarks.reject(id)
     */
    reject: (id: string, options?: RequestOptions) => core.request('rejectBenchmark', { ...options, params: { id } }),
  };
}

/**
 * @example
 * const benchmarks: BenchmarksNamespace = client.benchmarks;
 */
export type BenchmarksNamespace = ReturnType<typeof benchmarksNamespace>;
