/**
 * How the original service's values map to ours where they differ (docs/migrating.md, "What maps to
 * what"; docs/decisions.md, "Importing from the original service"). Pure functions: the import
 * applies them row by row, the tests read them.
 */

export type ReviewStatus = 'on_review' | 'approved';

/**
 * The identity that uploads what the original service stored without an uploader (its tags): it
 * cannot log in (no trusted issuer has this name) and stands for the original service.
 */
export const ORIGIN_SERVICE_USER = { iss: 'urn:benchmarks:origin-service', sub: 'origin-service' } as const;

/** The terms of use recorded for the users of the original service: they accepted its terms, not ours. */
export const ORIGIN_TERMS_VERSION = 'origin';

/**
 * A review status of the original service (the enum `resourcestatus`: on_review or approved; the
 * column is nullable). A null status had not been approved there: its lists left the item out and
 * results could not be uploaded to it, which is what on_review means here; administrators find it
 * in GET /reports/submits. `nullStatus` tells that it was null, so that the import can report it.
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
  /**
   * The result was listed by the original service although a claim was linked to it (a claim it
   * stopped hiding by hand): here every claim hides its result until it is rejected or deleted.
   */
  claimedButListed: boolean;
}

/**
 * A result's `deleted` and `hidden` flags from the original's `deleted` and whether a claim is
 * linked to it. The original marked a result `deleted` both when an administrator deleted it and
 * when a user claimed it; here the claim alone hides the result (services/catalogue/claims.ts, refreshHidden:
 * hidden = deleted or has a claim), so a claimed result is not `deleted`: rejecting its claim brings
 * it back, as SPEC.md's claim review says. A deleted result without a claim stays deleted and hidden.
 */
export function resultVisibility(sourceDeleted: boolean, claimed: boolean): Visibility {
  const deleted = sourceDeleted && !claimed;
  return { deleted, hidden: deleted || claimed, claimedButListed: claimed && !sourceDeleted };
}

/** The JSON pointer of the first string or key holding U+0000 (jsonb cannot store it), or null: as uploads check it. */
export { nulPointer } from '../services/results/uploads.ts';
