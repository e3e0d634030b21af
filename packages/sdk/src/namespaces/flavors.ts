import type { Core } from '../core.ts';
import type { FlavorSort } from '../contract/flavors.ts';
import type { Body, ListQuery, Query, FieldsOf, IdempotencyOptions, RequestOptions } from '../types.ts';

/**
 * `client.flavors`: virtual machine templates of a site. Listing, searching and creating go through
 * the site; the other verbs take the flavor's own id.
 * @example
 * const flavor = await client.flavors.create(siteId, { name: 'c4.large', description: '4 vCPU, 16 GiB' });
 * for await (const f of client.flavors.list(siteId)) console.log(f.name);
 * const site = await client.flavors.site(flavor.id);
 */
export function flavorsNamespace(core: Core) {
  return {
    /**
     * Approved flavors of a site (or `status`).
     * @example
     * client.flavors.list(siteId, { name: 'c4.large' })
     */
    list: (siteId: string, query?: ListQuery<'listFlavors', FieldsOf<typeof FlavorSort>>, options?: RequestOptions) =>
      core.list('listFlavors', { ...options, params: { id: siteId }, query }),
    /**
     * Flavors of a site matching every term.
     * @example
     * client.flavors.search(siteId, { terms: ['gpu'] })
     */
    search: (siteId: string, query?: ListQuery<'searchFlavors', FieldsOf<typeof FlavorSort>>, options?: RequestOptions) =>
      core.list('searchFlavors', { ...options, params: { id: siteId }, query }),
    /**
     * Uploads a flavor of a site (registered user).
     * @example
     * await client.flavors.create(siteId, { name: 'c4.large', description: '' })
     */
    create: (siteId: string, body: Body<'createFlavor'>, options?: IdempotencyOptions) =>
      core.request('createFlavor', { ...options, params: { id: siteId }, body }),
    /**
     * One flavor by id, whatever its status.
     * @example
     * await client.flavors.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getFlavor', { ...options, params: { id } }),
    /**
     * Replaces a flavor's fields (admin).
     * @example
     * await client.flavors.update(id, { name: 'c4.xlarge', description: '' })
     */
    update: (id: string, body: Body<'updateFlavor'>, options?: RequestOptions) =>
      core.request('updateFlavor', { ...options, params: { id }, body }),
    /**
     * Deletes a flavor (admin); `{ cascade: true }` when results refer to it.
     * @example
     * await client.flavors.delete(id)
     */
    delete: (id: string, query?: Query<'deleteFlavor'>, options?: RequestOptions) =>
      core.request('deleteFlavor', { ...options, params: { id }, query }),
    /**
     * The site a flavor belongs to.
     * @example
     * const site = await client.flavors.site(id)
     */
    site: (id: string, options?: RequestOptions) => core.request('getFlavorSite', { ...options, params: { id } }),
    /**
     * Approves a flavor on review (admin).
     * @example
     * await client.flavors.approve(id)
     */
    approve: (id: string, options?: RequestOptions) => core.request('approveFlavor', { ...options, params: { id } }),
    /**
     * Rejects (removes) a flavor on review (admin).
     * @example
     * await client.flavors.reject(id)
     */
    reject: (id: string, options?: RequestOptions) => core.request('rejectFlavor', { ...options, params: { id } }),
  };
}

/**
 * @example
 * const flavors: FlavorsNamespace = client.flavors;
 */
export type FlavorsNamespace = ReturnType<typeof flavorsNamespace>;
