import type { Core } from '../core.ts';
import type { ResultSortField } from '../builders.ts';
import type { ClaimSort } from '../contract/claims.ts';
import { PermissionError } from '../errors.ts';
import type { FieldsOf, ListQuery, RequestOptions } from '../types.ts';

/**
 * `client.self`: the caller (the identity of the token).
 * @example
 * const me = await client.self.upsert(); // registers on first use, accepting the terms of use
 * if (await client.self.isAdmin()) console.log(`${me.sub} is an administrator`);
 * for await (const r of client.self.results()) console.log(r.id, r.hidden);
 */
export function selfNamespace(core: Core) {
  return {
    /**
     * Registers the caller (201); a second call is a `ConflictError` with code `ALREADY_REGISTERED`.
     * @example
     * await client.self.register()
     */
    register: (options?: RequestOptions) => core.request('registerSelf', options),
    /**
     * Registers the caller if needed and returns the stored user.
     * @example
     * const me = await client.self.upsert()
     */
    upsert: (options?: RequestOptions) => core.request('upsertSelf', options),
    /**
     * The caller as registered; `NotFoundError` when not registered.
     * @example
     * const me = await client.self.get()
     */
    get: (options?: RequestOptions) => core.request('getSelf', options),
    /**
     * Refreshes the stored email from the token.
     * @example
     * await client.self.update()
     */
    update: (options?: RequestOptions) => core.request('updateSelf', options),
    /**
     * Resolves when the caller is an administrator, throws `PermissionError` otherwise.
     * @example
     * await client.self.tryAdmin()
     */
    tryAdmin: (options?: RequestOptions) => core.request('tryAdmin', options),
    /**
     * Whether the caller is an administrator: `tryAdmin()` as a boolean (other errors still throw).
     * @example if (await client.self.isAdmin()) showAdminMenu();
     */
    isAdmin: async (options?: RequestOptions): Promise<boolean> => {
      try {
        await core.request('tryAdmin', options);
        return true;
      } catch (err) {
        if (err instanceof PermissionError) return false;
        throw err;
      }
    },
    /**
     * The caller's results, hidden ones included; every results filter applies.
     * @example
     * client.self.results({ per_page: 10 })
     */
    results: (query?: ListQuery<'listSelfResults', ResultSortField>, options?: RequestOptions) =>
      core.list('listSelfResults', { ...options, query }),
    /**
     * The claims the caller filed.
     * @example
     * client.self.claims()
     */
    claims: (query?: ListQuery<'listSelfClaims', FieldsOf<typeof ClaimSort>>, options?: RequestOptions) =>
      core.list('listSelfClaims', { ...options, query }),
  };
}
