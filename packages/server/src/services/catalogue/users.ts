import type { EntityManager } from '@mikro-orm/postgresql';
import { User, type UserRow } from '../../entities/user.ts';
import type { Identity } from '../../core/caller.ts';
import { AppError } from '../../core/errors.ts';
import { formatTimestamp } from '../../core/format.ts';

/** The registered (and not removed) user of an identity, or null. */
export async function findUser(em: EntityManager, iss: string, sub: string): Promise<UserRow | null> {
  // Every authenticated request asks this: one plain statement, no entity tracking.
  const rows = await em.execute<UserRow[]>('select * from app_user where iss = ? and sub = ? and removed_datetime is null', [iss, sub]);
  return rows[0] ?? null;
}

/** A user's columns as administrators see them (app_user's, or an uploader's joined under other names). */
export interface UserAdminRow {
  iss: string;
  sub: string;
  email: string | null;
  registration_datetime: Date | string;
  terms_version: string;
  removed_datetime: Date | string | null;
}

/** A user as administrators see it, email included: null when the user has none, or was removed. */
export function userAdminView(row: UserAdminRow) {
  return {
    iss: row.iss,
    sub: row.sub,
    email: row.removed_datetime != null ? null : (row.email ?? null),
    registration_datetime: formatTimestamp(row.registration_datetime),
    terms_version: row.terms_version,
    removed: row.removed_datetime != null,
  };
}

/**
 * The uploader's user columns, from its row joined as `u` (uploader.ts, UPLOADER_JOIN), named so
 * that they clash with no column of the uploaded row. Administrator views only: it selects the email.
 */
export const UPLOADER_ADMIN_COLUMNS =
  'u.email as uploader_email, u.registration_datetime as uploader_registration_datetime, ' +
  'u.terms_version as uploader_terms_version, u.removed_datetime';

/** A row with its uploader's columns (UPLOADER_ADMIN_COLUMNS). */
export interface UploaderAdminColumns {
  uploader_iss: string;
  uploader_sub: string;
  uploader_email: string | null;
  uploader_registration_datetime: Date | string;
  uploader_terms_version: string;
  removed_datetime: Date | string | null;
}

/** The uploader as administrators see it (SPEC.md's Submit and Claim carry it as a User). */
export function uploaderAdminView(row: UploaderAdminColumns) {
  return userAdminView({
    iss: row.uploader_iss,
    sub: row.uploader_sub,
    email: row.uploader_email,
    registration_datetime: row.uploader_registration_datetime,
    terms_version: row.uploader_terms_version,
    removed_datetime: row.removed_datetime,
  });
}

export function userView(user: UserRow) {
  return {
    sub: user.sub,
    iss: user.iss,
    email: user.email ?? null,
    registration_datetime: formatTimestamp(user.registration_datetime),
    terms_version: user.terms_version,
  };
}

/**
 * Registers an identity, recording the terms of use it accepts now. Returns whether the user was
 * created. A user removed by an administrator stays removed (403 USER_REMOVED) until an
 * administrator restores it (POST /users:restore): removal is how abusive accounts are stopped.
 */
export async function register(em: EntityManager, identity: Identity, termsVersion: string): Promise<{ user: UserRow; created: boolean }> {
  const existing = await em.findOne(User, { iss: identity.iss, sub: identity.sub });
  if (existing?.removed_datetime) {
    throw new AppError(
      403,
      'USER_REMOVED',
      'This account was removed by an administrator and cannot register again unless an administrator restores it.',
    );
  }
  if (existing) return { user: existing, created: false };
  const now = new Date();
  const user = em.create(User, {
    iss: identity.iss,
    sub: identity.sub,
    email: identity.email,
    registration_datetime: now,
    terms_version: termsVersion,
    removed_datetime: null,
  });
  try {
    await em.flush();
  } catch (err) {
    // Two registrations racing: the second finds the first.
    if ((err as { code?: string }).code === '23505' || (err as Error).name === 'UniqueConstraintViolationException') {
      em.clear();
      const user = await em.findOneOrFail(User, { iss: identity.iss, sub: identity.sub });
      return { user, created: false };
    }
    throw err;
  }
  return { user, created: true };
}

export async function refreshEmail(em: EntityManager, user: UserRow, identity: Identity): Promise<void> {
  if (!identity.email) {
    throw new AppError(422, 'EMAIL_MISSING', 'The access token carries no email address (request the email scope).');
  }
  await em.execute('update app_user set email = ? where iss = ? and sub = ?', [identity.email, user.iss, user.sub]);
  user.email = identity.email;
}
