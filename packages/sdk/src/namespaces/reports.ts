import type { Core } from '../core.ts';
import type { SubmitSort } from '../contract/admin.ts';
import type { ClaimSort } from '../contract/claims.ts';
import type { ListQuery, FieldsOf, RequestOptions } from '../types.ts';

/**
 * `client.claims`: claims filed against results, for administrators (`/reports/claims`).
 * @example
 * for await (const claim of admin.claims.list({ status: 'on_review' })) {
 *   await admin.claims.reject(claim.id); // the result is restored
 * }
 */
export function claimsNamespace(core: Core) {
  return {
    /**
     * Claims, filtered by status, claimant (`uploader_iss`, `uploader_sub`) and upload dates (admin).
     * @example
     * admin.claims.list({ status: 'on_review', uploader_sub: 'alice' })
     */
    list: (query?: ListQuery<'listClaims', FieldsOf<typeof ClaimSort>>, options?: RequestOptions) =>
      core.list('listClaims', { ...options, query }),
    /**
     * One claim (admin).
     * @example
     * await admin.claims.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getClaim', { ...options, params: { id } }),
    /**
     * Upholds a claim: the result stays hidden (admin).
     * @example
     * await admin.claims.approve(id)
     */
    approve: (id: string, options?: RequestOptions) => core.request('approveClaim', { ...options, params: { id } }),
    /**
     * Rejects a claim: it is removed and the result restored (admin).
     * @example
     * await admin.claims.reject(id)
     */
    reject: (id: string, options?: RequestOptions) => core.request('rejectClaim', { ...options, params: { id } }),
    /**
     * Rejects up to 500 claims at once, in one transaction; reports the ids that named no claim and
     * the upheld claims it left alone (admin).
     * @example
     * const flood = await admin.claims.list({ uploader_iss: iss, uploader_sub: 'spammer', per_page: 100 });
     * const { rejected } = await admin.claims.rejectMany(flood.items.map((c) => c.id));
     */
    rejectMany: (ids: string[], options?: RequestOptions) => core.request('rejectClaims', { ...options, body: { ids } }),
    /**
     * Deletes a claim, restoring the result (admin).
     * @example
     * await admin.claims.delete(id)
     */
    delete: (id: string, options?: RequestOptions) => core.request('deleteClaim', { ...options, params: { id } }),
  };
}

/**
 * `client.submissions`: the items waiting for review (`/reports/submits`), for administrators.
 * @example
 * for await (const s of admin.submissions.list()) console.log(s.resource_type, s.resource_id);
 */
export function submissionsNamespace(core: Core) {
  return {
    /**
     * Uploads waiting for review (admin).
     * @example
     * admin.submissions.list({ per_page: 20 })
     */
    list: (query?: ListQuery<'listSubmits', FieldsOf<typeof SubmitSort>>, options?: RequestOptions) =>
      core.list('listSubmits', { ...options, query }),
  };
}
