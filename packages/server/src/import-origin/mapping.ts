/** How the original service's values map to ours where they differ (docs/migrating.md, "What maps to what"). */

export type ReviewStatus = 'on_review' | 'approved';

/** The uploader of what the original stored without one (its tags): no trusted issuer has this name, so none logs in as it. */
export const ORIGIN_SERVICE_USER = { iss: 'urn:benchmarks:origin-service', sub: 'origin-service' } as const;

/** The terms of use recorded for the users of the original service: they accepted its terms, not ours. */
export const ORIGIN_TERMS_VERSION = 'origin';

/**
 * A review status of the original (on_review, approved, or null). A null one had not been approved
 * there (left out of lists, no uploads to it), which is what on_review means here; `nullStatus`
 * tells, so that the import can report it.
 */
export function reviewStatus(status: string | null): { status: ReviewStatus; nullStatus: boolean } {
  if (status === 'approved') return { status: 'approved', nullStatus: false };
  return { status: 'on_review', nullStatus: status === null };
}

/** An email, or null when the original service kept none (null, empty or blank). */
export function userEmail(email: string | null): string | null {
  return email === null || email.trim() === '' ? null : email;
}

export interface Visibility {
  deleted: boolean;
  hidden: boolean;
  /** Listed there although a claim was linked to it: here every claim hides its result until it is rejected or deleted. */
  claimedButListed: boolean;
}

/**
 * A result's `deleted` and `hidden` from the original's `deleted` and its claim. The original
 * marked a claimed result `deleted` too; here the claim alone hides it, so a claimed result is not
 * `deleted`: rejecting its claim brings it back, as SPEC.md's claim review says.
 */
export function resultVisibility(sourceDeleted: boolean, claimed: boolean): Visibility {
  const deleted = sourceDeleted && !claimed;
  return { deleted, hidden: deleted || claimed, claimedButListed: claimed && !sourceDeleted };
}

/** The JSON pointer of the first string or key holding U+0000 (jsonb cannot store it), or null: as uploads check it. */
export { nulPointer } from '../services/results/uploads.ts';
