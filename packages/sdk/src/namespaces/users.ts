import type { Core } from '../core.ts';
import type { UserSort } from '../contract/admin.ts';
import type { ListQuery, Query, FieldsOf, RequestOptions } from '../types.ts';

/**
 * `client.users`: registered users, for administrators (these views include emails).
 * @example
 * for await (const u of admin.users.list({ per_page: 50 })) console.log(u.sub, u.email);
 */
export function usersNamespace(core: Core) {
  return {
    /**
     * Registered users (admin).
     * @example
     * admin.users.list()
     */
    list: (query?: ListQuery<'listUsers', FieldsOf<typeof UserSort>>, options?: RequestOptions) =>
      core.list('listUsers', { ...options, query }),
    /**
     * Users matching every term (admin).
     * @example
     * admin.users.search({ terms: ['example.org'] })
     */
    search: (query?: ListQuery<'searchUsers', FieldsOf<typeof UserSort>>, options?: RequestOptions) =>
      core.list('searchUsers', { ...options, query }),
    /**
     * Removes users: deletes their personal data, keeps their uploads (admin).
     * @example
     * await admin.users.remove({ sub: 'alice' })
     */
    remove: (query: Query<'removeUsers'>, options?: RequestOptions) => core.request('removeUsers', { ...options, query }),
    /**
     * Restores removed users: registered again, without an email until they refresh it (admin).
     * A removed user cannot register again by itself.
     * @example
     * await admin.users.restore({ iss: 'https://aai.example.org', sub: 'alice' })
     */
    restore: (query: Query<'restoreUsers'>, options?: RequestOptions) => core.request('restoreUsers', { ...options, query }),
  };
}
