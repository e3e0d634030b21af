import type { Core } from '../core.ts';
import type { BenchmarkSort } from '../contract/benchmarks.ts';
import type { SiteSort } from '../contract/sites.ts';
import type { TagSort } from '../contract/tags.ts';
import type { PageRequest } from '../pagination.ts';
import type { OperationId } from '../contract/index.ts';
import type { Body, FieldsOf, IdempotencyOptions, Item, ListQuery, Query, Reply, RequestOptions } from '../types.ts';

/** The catalogue resources whose verbs are the same: their operations are `list${N}s`, `get${N}`, … */
export type Reviewed = 'Benchmark' | 'Site' | 'Tag';
interface Sorts {
  Benchmark: typeof BenchmarkSort;
  Site: typeof SiteSort;
  Tag: typeof TagSort;
}

/**
 * The verbs on one item of a reviewed catalogue resource, by its id, each typed by the contract's
 * operation of that name (`client.sites.get` is `getSite`); flavors have these too.
 * @example
 * await adminClient.flavors.approve(id);
 * const site = await client.sites.get(id);
 */
// The ids are parameters (their defaults derived from N) so that TypeScript resolves each one
// alone rather than over the union of every resource's operations.
export interface ReviewedItemVerbs<
  N extends Reviewed | 'Flavor',
  G extends OperationId = `get${N}`,
  U extends OperationId = `update${N}`,
  D extends OperationId = `delete${N}`,
> {
  /**
   * One item by id, whatever its status.
   * @example
   * await client.sites.get(id)
   */
  get(id: string, options?: RequestOptions): Promise<Reply<G>>;
  /**
   * Replaces the editable fields (admin).
   * @example
   * await client.sites.update(id, { ...fields, description: 'v2' })
   */
  update(id: string, body: Body<U>, options?: RequestOptions): Promise<Reply<U>>;
  /**
   * Deletes an item (admin); `{ cascade: true }` when others refer to it.
   * @example
   * await client.benchmarks.delete(id, { cascade: true })
   */
  delete(id: string, query?: Query<D>, options?: RequestOptions): Promise<void>;
  /**
   * Approves an item on review (admin).
   * @example
   * await adminClient.benchmarks.approve(id)
   */
  approve(id: string, options?: RequestOptions): Promise<void>;
  /**
   * Rejects (removes) an item on review (admin).
   * @example
   * await adminClient.tags.reject(id)
   */
  reject(id: string, options?: RequestOptions): Promise<void>;
}

/**
 * `client.benchmarks`, `client.sites`, `client.tags`: a reviewed catalogue resource, each verb typed
 * by the contract's operation of that name (`client.sites.create` is `createSite`).
 * @example
 * const created = await client.sites.create({ name: 'CESGA', address: 'Santiago de Compostela', description: null });
 * await adminClient.sites.approve(created.id);
 * for await (const each of client.sites.list({ sort_by: [asc('name')] })) console.log(each.name);
 */
export interface ReviewedNamespace<
  N extends Reviewed,
  L extends OperationId = `list${N}s`,
  S extends OperationId = `search${N}s`,
  C extends OperationId = `create${N}`,
> extends ReviewedItemVerbs<N> {
  /**
   * Approved items (or `status`), filtered and sorted.
   * @example
   * await client.benchmarks.list({ container_image: 'ghcr.io/acme/hpl' })
   */
  list(query?: ListQuery<L, FieldsOf<Sorts[N]>>, options?: RequestOptions): PageRequest<Item<L>>;
  /**
   * Items matching every term, ordered as the list.
   * @example
   * client.tags.search({ terms: ['gpu'] })
   */
  search(query?: ListQuery<S, FieldsOf<Sorts[N]>>, options?: RequestOptions): PageRequest<Item<S>>;
  /**
   * Submits an item (registered user); it starts on review unless an administrator submits it.
   * @example
   * await client.tags.create({ name: 'gpu', description: 'runs on a GPU' })
   */
  create(body: Body<C>, options?: IdempotencyOptions): Promise<Reply<C>>;
}

type Verb = 'list' | 'search' | 'get' | 'create' | 'update' | 'delete' | 'approve' | 'reject';

/** The namespace of resource `name`: each verb calls the operation `${verb}${name}` (`listSites` for lists). */
export function reviewedNamespace(core: Core, name: 'Benchmark'): ReviewedNamespace<'Benchmark'>;
export function reviewedNamespace(core: Core, name: 'Site'): ReviewedNamespace<'Site'>;
export function reviewedNamespace(core: Core, name: 'Tag'): ReviewedNamespace<'Tag'>;
/** Flavors are listed, searched and created through their site (`flavorsNamespace`): only their verbs by id are these. */
export function reviewedNamespace(core: Core, name: 'Flavor'): ReviewedItemVerbs<'Flavor'>;
// One untyped implementation: the overloads above are what callers see, each resolved on its own.
export function reviewedNamespace(core: Core, name: Reviewed | 'Flavor'): Partial<Record<Verb, (...args: never[]) => unknown>> {
  const byId = (verb: string) => (id: string, options?: RequestOptions) => core.invoke(`${verb}${name}`, { ...options, params: { id } });
  return {
    list: (query?: Record<string, unknown>, options?: RequestOptions) => core.invokeList(`list${name}s`, { ...options, query }),
    search: (query?: Record<string, unknown>, options?: RequestOptions) => core.invokeList(`search${name}s`, { ...options, query }),
    get: byId('get'),
    create: (body: unknown, options?: IdempotencyOptions) => core.invoke(`create${name}`, { ...options, body }),
    update: (id: string, body: unknown, options?: RequestOptions) => core.invoke(`update${name}`, { ...options, params: { id }, body }),
    delete: (id: string, query?: object, options?: RequestOptions) => core.invoke(`delete${name}`, { ...options, params: { id }, query }),
    approve: byId('approve'),
    reject: byId('reject'),
  };
}
