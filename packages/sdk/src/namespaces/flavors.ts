import type { Core } from '../core.ts';
import { reviewedNamespace } from './reviewed.ts';
import type { FlavorSort } from '../contract/flavors.ts';
import type { Body, ListQuery, FieldsOf, IdempotencyOptions, RequestOptions } from '../types.ts';

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
    ...reviewedNamespace(core, 'Flavor'),
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
     * The site a flavor belongs to.
     * @example
     * const site = await client.flavors.site(id)
     */
    site: (id: string, options?: RequestOptions) => core.request('getFlavorSite', { ...options, params: { id } }),
  };
}
