import type { Core } from '../core.ts';
import type { SiteSort } from '../contract/sites.ts';
import type { Body, ListQuery, Query, FieldsOf, IdempotencyOptions, RequestOptions } from '../types.ts';

/**
 * `client.sites`: deployment sites (institutions offering flavors).
 * @example
 * const created = await client.sites.create({ name: 'CESGA', address: 'Santiago de Compostela', description: 'Galician supercomputing centre' });
 * await adminClient.sites.approve(created.id);
 * for await (const each of client.sites.list()) console.log(each.name);
 */
export function sitesNamespace(core: Core) {
  return {
    /**
     * Approved sites (or `status`), filtered and sorted.
     * @example
     * await client.sites.list({ name: 'CESGA' })
     */
    list: (query?: ListQuery<'listSites', FieldsOf<typeof SiteSort>>, options?: RequestOptions) =>
      core.list('listSites', { ...options, query }),
    /**
     * Sites matching every term.
     * @example
     * client.sites.search({ terms: ['galicia'] })
     */
    search: (query?: ListQuery<'searchSites', FieldsOf<typeof SiteSort>>, options?: RequestOptions) =>
      core.list('searchSites', { ...options, query }),
    /**
     * One site by id, whatever its status.
     * @example
     * await client.sites.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getSite', { ...options, params: { id } }),
    /**
     * Uploads a site (registered user); it starts on review unless an admin uploads it.
     * @example
     * await client.sites.create({ name: 'CESGA', address: 'Santiago', description: '' })
     */
    create: (body: Body<'createSite'>, options?: IdempotencyOptions) => core.request('createSite', { ...options, body }),
    /**
     * Replaces a site's fields (admin).
     * @example
     * await client.sites.update(id, { ...fields, description: 'v2' })
     */
    update: (id: string, body: Body<'updateSite'>, options?: RequestOptions) =>
      core.request('updateSite', { ...options, params: { id }, body }),
    /**
     * Deletes a site (admin); `{ cascade: true }` when results refer to it.
     * @example
     * await client.sites.delete(id, { cascade: true })
     */
    delete: (id: string, query?: Query<'deleteSite'>, options?: RequestOptions) =>
      core.request('deleteSite', { ...options, params: { id }, query }),
    /**
     * Approves a site on review (admin).
     * @example
     * await client.sites.approve(id)
     */
    approve: (id: string, options?: RequestOptions) => core.request('approveSite', { ...options, params: { id } }),
    /**
     * Rejects (removes) a site on review (admin).
     * @example
     * await client.sites.reject(id)
     */
    reject: (id: string, options?: RequestOptions) => core.request('rejectSite', { ...options, params: { id } }),
  };
}

/**
 * @example
 * const sites: SitesNamespace = client.sites;
 */
export type SitesNamespace = ReturnType<typeof sitesNamespace>;
