import type Koa from 'koa';
import type { AuthLevel } from '@benchmarks/sdk/contract';
import { errors, unauthorized } from '../core/errors.ts';
import type { TokenVerifier } from '../auth/verifier.ts';
import type { Caller } from '../core/caller.ts';
import type { RequestState } from './handler.ts';
import { findUser } from '../services/catalogue/users.ts';

export interface Authenticator {
  authenticate(ctx: Koa.Context, level: AuthLevel): Promise<Caller | null>;
  /** Whether the request's token was verified recently (authenticating it asks no identity provider). */
  recognizes(ctx: Koa.Context): boolean;
  /** `iss sub` of the request's token when it was verified recently (asking no one), else null. */
  knownClient(ctx: Koa.Context): Promise<string | null>;
}

/** Reads `Authorization: Bearer <token>`; 401 when missing or malformed. */
export function bearerToken(ctx: Koa.Context): string | null {
  const header = ctx.get('authorization');
  if (!header) return null;
  const match = /^Bearer\s+([^\s]+)\s*$/i.exec(header);
  if (!match) throw unauthorized('INVALID_AUTHORIZATION_HEADER', 'The Authorization header must be "Bearer <access token>".', true);
  return match[1]!;
}

export function createAuthenticator(verifier: TokenVerifier | null, adminEntitlements: readonly string[]): Authenticator {
  const admins = new Set(adminEntitlements);
  return {
    recognizes(ctx) {
      let token: string | null;
      try {
        token = bearerToken(ctx);
      } catch {
        return false;
      }
      return token !== null && (verifier?.isVerified(token) ?? false);
    },
    async knownClient(ctx) {
      if (!this.recognizes(ctx)) return null;
      try {
        const identity = await verifier!.verify(bearerToken(ctx)!);
        return `${identity.iss} ${identity.sub}`;
      } catch {
        return null;
      }
    },
    async authenticate(ctx, level) {
      if (level === 'none') return null;
      const token = bearerToken(ctx);
      if (!token && level === 'optional') return null;
      if (!token) throw unauthorized('MISSING_TOKEN', 'This operation needs an access token: send Authorization: Bearer <token>.', false);
      if (!verifier) throw unauthorized('UNTRUSTED_ISSUER', 'No OpenID issuer is trusted by this server (configure OIDC_ISSUERS).', true);
      const identity = await verifier.verify(token);
      const { em } = ctx.state as RequestState;
      const user = await findUser(em, identity.iss, identity.sub);
      const isAdmin = user !== null && identity.entitlements.some((e) => admins.has(e));
      if (level === 'token' || level === 'optional') return { identity, user, isAdmin };
      if (!user) {
        throw errors.forbidden('NOT_REGISTERED', 'You are not registered: accept the terms of use with POST /api/v1/users:register first.');
      }
      if (level === 'admin' && !isAdmin) throw errors.forbidden('NOT_ADMIN', 'This operation is reserved to administrators.');
      return { identity, user, isAdmin };
    },
  };
}
