import type { Core } from '../core.ts';
import type { TagSort } from '../contract/tags.ts';
import type { Body, ListQuery, Query, FieldsOf, IdempotencyOptions, RequestOptions } from '../types.ts';

/**
 * `client.tags`: labels attached to results (reviewed like the rest of the catalogue).
 * @example
 * const created = await client.tags.create({ name: 'gpu', description: 'runs on a GPU' });
 * await adminClient.tags.approve(created.id);
 * for await (const each of client.tags.list()) console.log(each.name);
 */
export function tagsNamespace(core: Core) {
  return {
    /**
     * Approved tags (or `status`), filtered and sorted.
     * @example
     * await client.tags.list({ name: 'gpu' })
     */
    list: (query?: ListQuery<'listTags', FieldsOf<typeof TagSort>>, options?: RequestOptions) =>
      core.list('listTags', { ...options, query }),
    /**
     * Tags matching every term.
     * @example
     * client.tags.search({ terms: ['gpu'] })
     */
    search: (query?: ListQuery<'searchTags', FieldsOf<typeof TagSort>>, options?: RequestOptions) =>
      core.list('searchTags', { ...options, query }),
    /**
     * One tag by id, whatever its status.
     * @example
     * await client.tags.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getTag', { ...options, params: { id } }),
    /**
     * Uploads a tag (registered user); it starts on review unless an admin uploads it.
     * @example
     * await client.tags.create({ name: 'gpu', description: 'runs on a GPU' })
     */
    create: (body: Body<'createTag'>, options?: IdempotencyOptions) => core.request('createTag', { ...options, body }),
    /**
     * Replaces a tag's fields (admin).
     * @example
     * await client.tags.update(id, { ...fields, description: 'v2' })
     */
    update: (id: string, body: Body<'updateTag'>, options?: RequestOptions) =>
      core.request('updateTag', { ...options, params: { id }, body }),
    /**
     * Deletes a tag (admin); `{ cascade: true }` when results refer to it.
     * @example
     * await client.tags.delete(id, { cascade: true })
     */
    delete: (id: string, query?: Query<'deleteTag'>, options?: RequestOptions) =>
      core.request('deleteTag', { ...options, params: { id }, query }),
    /**
     * Approves a tag on review (admin).
     * @example
     * await client.tags.approve(id)
     */
    approve: (id: string, options?: RequestOptions) => core.request('approveTag', { ...options, params: { id } }),
    /**
     * Rejects (removes) a tag on review (admin).
     * @example
     * await client.tags.reject(id)
     */
    reject: (id: string, options?: RequestOptions) => core.request('rejectTag', { ...options, params: { id } }),
  };
}

/**
 * @example
 * const tags: TagsNamespace = client.tags;
 */
export type TagsNamespace = ReturnType<typeof tagsNamespace>;
