import type { UserRow } from '../entities/user.ts';

/** Who a verified token names (`auth/verifier.ts`). */
export interface Identity {
  iss: string;
  sub: string;
  email: string | null;
  entitlements: string[];
}

/** Who is calling: the verified token identity, the registered user (if any) and the admin flag. */
export interface Caller {
  identity: Identity;
  user: UserRow | null;
  isAdmin: boolean;
}
