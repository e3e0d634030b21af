/**
 * Access token verification. A JWT is verified against the JWKS of its issuer (OpenID discovery),
 * one of the trusted issuers; an opaque token at the userinfo endpoint of the one issuer configured
 * for them only (another issuer would learn the token, and could replay it). Results are cached by
 * the token's SHA-256: successes up to 60 s, opaque tokens refused by their issuer for 60 s (a bad
 * token repeated costs the provider nothing). Tokens are never logged nor put into errors.
 */
import { createHash } from 'node:crypto';
import { isIPv4 } from 'node:net';

import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeJwt,
  decodeProtectedHeader,
  errors as joseErrors,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import * as oidc from 'openid-client';
import { LRUCache } from 'lru-cache';

import { AppError, errors, unauthorized } from '../core/errors.ts';
import type { Identity } from '../core/caller.ts';

export interface VerifierOptions {
  /** Trusted issuer URLs (exact match with the token's iss; a trailing slash difference is tolerated). */
  issuers: string[];
  /** When set, the JWT `aud` must contain it. */
  audience?: string;
  /** Default 60_000. Successful verifications are cached, never beyond the token's exp. 0 disables the cache. */
  cacheTtlMs?: number;
  /**
   * The trusted issuer that checks opaque (non-JWT) tokens at its userinfo endpoint. Default: the
   * only trusted issuer; with several and none named, opaque tokens are refused.
   */
  opaqueIssuer?: string;
  /** Default 60_000. How long an opaque token refused by its issuer is refused without asking it again. */
  failureTtlMs?: number;
  /** Default 30. */
  clockToleranceSec?: number;
}

const ALLOWED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const MAX_CACHE_ENTRIES = 10_000;
const MAX_TOKEN_LENGTH = 16 * 1024;
/** RFC 6750 b64token. */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;
const DISCOVERY_TIMEOUT_SEC = 10;
const JWKS_TIMEOUT_MS = 5_000;

export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return isIPv4(h) && h.startsWith('127.');
}

function stripSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url;
}

/** Raised when an issuer cannot be reached (or answers nonsense) and nothing usable is cached. */
class IssuerUnavailable extends Error {
  constructor(
    readonly issuer: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`The OpenID provider ${issuer} could not be reached (${reason}); tokens from it cannot be checked right now.`, options);
  }
}

interface IssuerMetadata {
  /** The issuer identifier as the provider declares it in its discovery document. */
  issuer: string;
  config: oidc.Configuration;
  jwks?: JWTVerifyGetKey;
  hasUserinfo: boolean;
}

interface TrustedIssuer {
  configured: string;
  /** Comparison key: no trailing slash. */
  key: string;
  url: URL;
  loopback: boolean;
  metadata?: IssuerMetadata;
  pending?: Promise<IssuerMetadata>;
}

/** Errors from the network or from a bad HTTP answer when fetching a JWKS (as opposed to verification errors). */
function isJwksFetchFailure(err: unknown): boolean {
  // fetch failed, or the key set timed out or is not one
  if (err instanceof TypeError || err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid) return true;
  const name = (err as { name?: unknown })?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return true;
  // jose uses its generic JOSEError for "Expected 200 OK ..." and unparsable JSON
  return err instanceof joseErrors.JOSEError && err.code === 'ERR_JOSE_GENERIC';
}

/** A network failure, a timeout or a 5xx answer (as opposed to the provider refusing the token). */
function isUnreachable(err: unknown): boolean {
  if (err instanceof TypeError) return true;
  const e = err as { name?: unknown; status?: unknown; cause?: unknown } | undefined;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return true;
  const status = typeof e?.status === 'number' ? e.status : e?.cause instanceof Response ? e.cause.status : undefined;
  return status === undefined ? !(err instanceof oidc.ClientError) : status >= 500;
}

function stringList(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string' && v !== '');
  return [];
}

function entitlementsOf(...sources: Array<Record<string, unknown> | undefined>): string[] {
  const all = new Set<string>();
  for (const source of sources) {
    if (!source) continue;
    for (const claim of ['eduperson_entitlement', 'entitlements', 'groups']) {
      for (const v of stringList(source[claim])) all.add(v);
    }
  }
  return [...all];
}

function emailOf(source: Record<string, unknown> | undefined): string | null {
  const email = source?.email;
  return typeof email === 'string' && email !== '' ? email : null;
}

export class TokenVerifier {
  readonly #issuers: TrustedIssuer[];
  readonly #audience?: string;
  readonly #cacheTtlMs: number;
  readonly #clockTolerance: number;
  /** Verified tokens' identities, each until the earlier of `cacheTtlMs` and the token's `exp`. */
  readonly #cache: LRUCache<string, Identity>;
  /** Opaque tokens their issuer refused, for `failureTtlMs`. */
  readonly #failures: LRUCache<string, AppError>;
  readonly #failureTtlMs: number;
  readonly #opaqueIssuer: TrustedIssuer | null;
  readonly #inflight = new Map<string, Promise<Identity>>();

  /** The trusted issuer URLs, as configured. */
  get issuers(): string[] {
    return this.#issuers.map((i) => i.configured);
  }

  constructor(options: VerifierOptions) {
    this.#issuers = (options.issuers ?? []).map((configured) => {
      let url: URL;
      try {
        url = new URL(configured);
      } catch {
        throw new Error(`Trusted issuer "${configured}" is not a valid URL.`);
      }
      const loopback = isLoopbackHostname(url.hostname);
      if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
        throw new Error(`Trusted issuer "${configured}" must use https (http is only allowed on loopback).`);
      }
      return { configured, key: stripSlash(configured), url, loopback };
    });
    this.#audience = options.audience || undefined;
    this.#cacheTtlMs = Math.max(0, options.cacheTtlMs ?? 60_000);
    this.#failureTtlMs = Math.max(0, options.failureTtlMs ?? 60_000);
    this.#clockTolerance = Math.max(0, options.clockToleranceSec ?? 30);
    this.#cache = new LRUCache({ max: MAX_CACHE_ENTRIES, ttl: Math.max(1, this.#cacheTtlMs) });
    this.#failures = new LRUCache({ max: MAX_CACHE_ENTRIES, ttl: Math.max(1, this.#failureTtlMs) });
    if (options.opaqueIssuer) {
      const found = this.#findIssuer(options.opaqueIssuer);
      if (!found) throw new Error(`The issuer for opaque tokens "${options.opaqueIssuer}" is not one of the trusted issuers.`);
      this.#opaqueIssuer = found;
    } else {
      this.#opaqueIssuer = this.#issuers.length === 1 ? this.#issuers[0]! : null;
    }
  }

  /** The issuer whose userinfo endpoint checks opaque tokens (null: opaque tokens are refused). */
  get opaqueIssuer(): string | null {
    return this.#opaqueIssuer?.configured ?? null;
  }

  /**
   * Whether the token was verified recently and is remembered (verify() answers it without asking
   * any provider): the rate limiter charges the others to their address before they are verified.
   */
  isVerified(token: string): boolean {
    return this.#cache.has(tokenKey(token.trim()));
  }

  async verify(token: string): Promise<Identity> {
    token = typeof token === 'string' ? token.trim() : '';
    if (token === '' || token.length > MAX_TOKEN_LENGTH || !B64TOKEN.test(token)) throw refused('The access token is malformed.');
    const key = tokenKey(token);
    const cached = this.#cache.get(key);
    if (cached) return { ...cached, entitlements: [...cached.entitlements] };
    const failed = this.#failures.get(key);
    if (failed) throw refused(failed.detail, failed.code);
    let pending = this.#inflight.get(key);
    if (!pending) {
      pending = this.#verifyUncached(token, key).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, pending);
    }
    const identity = await pending;
    return { ...identity, entitlements: [...identity.entitlements] };
  }

  // -------------------------------------------------------------------------------------------

  async #verifyUncached(token: string, cacheKey: string): Promise<Identity> {
    let verified: { identity: Identity; exp?: number };
    if (JWT_SHAPE.test(token)) {
      // Refusals are decided here, from cached keys: not remembered (a token refused for its nbf,
      // or signed with a key just rotated in, may be valid seconds later).
      verified = await this.#verifyJwt(token);
    } else {
      try {
        verified = await this.#verifyOpaque(token);
      } catch (err) {
        if (err instanceof AppError && err.status === 401 && this.#failureTtlMs > 0) this.#failures.set(cacheKey, err);
        throw err;
      }
    }
    this.#remember(cacheKey, verified.identity, verified.exp);
    return verified.identity;
  }

  #remember(key: string, identity: Identity, exp: number | undefined): void {
    const ttl = exp === undefined ? this.#cacheTtlMs : Math.min(this.#cacheTtlMs, Math.floor(exp * 1000 - Date.now()));
    if (ttl > 0) this.#cache.set(key, identity, { ttl });
  }

  #findIssuer(iss: string): TrustedIssuer | undefined {
    const key = stripSlash(iss);
    return this.#issuers.find((i) => i.key === key);
  }

  async #metadata(issuer: TrustedIssuer): Promise<IssuerMetadata> {
    if (issuer.metadata) return issuer.metadata;
    issuer.pending ??= (async () => {
      let config: oidc.Configuration;
      try {
        config = await oidc.discovery(issuer.url, 'benchmarks-api', undefined, undefined, {
          timeout: DISCOVERY_TIMEOUT_SEC,
          ...(issuer.loopback ? { execute: [oidc.allowInsecureRequests] } : {}),
        });
      } catch (err) {
        throw new IssuerUnavailable(issuer.configured, 'OpenID discovery failed', { cause: err });
      }
      const server = config.serverMetadata();
      const jwks = server.jwks_uri ? this.#keyResolver(issuer.configured, new URL(server.jwks_uri)) : undefined;
      const metadata: IssuerMetadata = { issuer: server.issuer, config, jwks, hasUserinfo: !!server.userinfo_endpoint };
      issuer.metadata = metadata;
      return metadata;
    })().finally(() => {
      issuer.pending = undefined;
    });
    return issuer.pending;
  }

  /**
   * The issuer's remote JWKS (jose keeps it cached and refreshes it when stale or when an unknown
   * kid shows up). When a refresh fails, the last keys fetched keep working.
   */
  #keyResolver(issuer: string, jwksUri: URL): JWTVerifyGetKey {
    const remote = createRemoteJWKSet(jwksUri, { timeoutDuration: JWKS_TIMEOUT_MS });
    return async (header, token) => {
      try {
        return await remote(header, token);
      } catch (err) {
        if (!isJwksFetchFailure(err)) throw err;
        const last = remote.jwks();
        if (last) {
          try {
            return await createLocalJWKSet(last)(header, token);
          } catch (localErr) {
            if (!(localErr instanceof joseErrors.JWKSNoMatchingKey)) throw localErr;
          }
        }
        throw new IssuerUnavailable(issuer, 'its key set could not be fetched', { cause: err });
      }
    };
  }

  async #verifyJwt(token: string): Promise<{ identity: Identity; exp?: number }> {
    let alg: unknown;
    let claims: JWTPayload;
    try {
      alg = decodeProtectedHeader(token).alg;
      claims = decodeJwt(token);
    } catch {
      throw refused('The access token is malformed.');
    }
    if (typeof alg !== 'string' || alg.toLowerCase() === 'none') throw refused('Unsigned access tokens are not accepted.');
    if (/^HS/i.test(alg)) throw refused(`Access tokens signed with ${alg} (a shared secret) are not accepted.`);
    if (!ALLOWED_ALGORITHMS.includes(alg)) throw refused(`Access tokens signed with ${alg} are not accepted.`);
    if (typeof claims.iss !== 'string' || claims.iss === '') throw refused('The access token names no issuer.');
    const trusted = this.#findIssuer(claims.iss);
    if (!trusted) {
      const shown = claims.iss.length > 200 ? `${claims.iss.slice(0, 200)}…` : claims.iss;
      throw refused(`Tokens from issuer ${shown} are not accepted here.`, 'UNTRUSTED_ISSUER');
    }

    const metadata = await this.#metadataOr503(trusted);
    if (!metadata.jwks) {
      throw errors.unavailable('ISSUER_UNAVAILABLE', `The OpenID provider ${trusted.configured} publishes no signing keys (jwks_uri).`);
    }

    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, metadata.jwks, {
        algorithms: ALLOWED_ALGORITHMS,
        issuer: [...new Set([metadata.issuer, stripSlash(metadata.issuer), `${stripSlash(metadata.issuer)}/`, claims.iss])],
        audience: this.#audience,
        clockTolerance: this.#clockTolerance,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      throw this.#jwtError(err, trusted);
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') throw refused('The access token names no subject.');

    const tokenClaims = payload as Record<string, unknown>;
    let email = emailOf(tokenClaims);
    let entitlements = entitlementsOf(tokenClaims);
    if (email === null && metadata.hasUserinfo) {
      try {
        const info = (await oidc.fetchUserInfo(metadata.config, token, payload.sub)) as Record<string, unknown>;
        email = emailOf(info);
        entitlements = entitlementsOf(tokenClaims, info);
      } catch {
        // not fatal: the token itself was valid
      }
    }
    return {
      identity: { iss: metadata.issuer, sub: payload.sub, email, entitlements },
      exp: typeof payload.exp === 'number' ? payload.exp : undefined,
    };
  }

  #jwtError(err: unknown, issuer: TrustedIssuer): AppError {
    if (err instanceof AppError) return err;
    if (err instanceof IssuerUnavailable) return errors.unavailable('ISSUER_UNAVAILABLE', err.message);
    if (err instanceof joseErrors.JWTExpired) return refused('The access token has expired.', 'TOKEN_EXPIRED');
    if (err instanceof joseErrors.JWTClaimValidationFailed) {
      switch (err.claim) {
        case 'nbf':
          return refused('The access token is not valid yet.', 'TOKEN_NOT_YET_VALID');
        case 'aud':
          return refused(`The access token is not meant for this service (audience ${this.#audience ?? ''}).`, 'INVALID_AUDIENCE');
        case 'iss':
          return refused(`The access token's issuer does not match the provider ${issuer.configured}.`, 'UNTRUSTED_ISSUER');
        default:
          return refused(`The access token is invalid (${err.claim} claim).`);
      }
    }
    if (err instanceof joseErrors.JWKSNoMatchingKey) return refused('The access token was not signed by a key of its issuer.');
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) return refused('The access token signature is invalid.');
    return refused('The access token is invalid.');
  }

  async #metadataOr503(issuer: TrustedIssuer): Promise<IssuerMetadata> {
    try {
      return await this.#metadata(issuer);
    } catch (err) {
      if (err instanceof IssuerUnavailable) throw errors.unavailable('ISSUER_UNAVAILABLE', err.message);
      throw err;
    }
  }

  /** An opaque token, checked at the userinfo endpoint of the issuer configured for them, and no other. */
  async #verifyOpaque(token: string): Promise<{ identity: Identity; exp?: number }> {
    if (this.#issuers.length === 0) throw refused('The access token is not accepted here.');
    const issuer = this.#opaqueIssuer;
    if (!issuer) {
      throw refused(
        'Opaque (non-JWT) access tokens are not accepted here: several OpenID providers are trusted and none is configured to check them (OIDC_OPAQUE_ISSUER). Send a JWT access token.',
      );
    }
    const metadata = await this.#metadataOr503(issuer);
    if (!metadata.hasUserinfo) {
      throw refused(`Opaque access tokens cannot be checked: the OpenID provider ${issuer.configured} has no userinfo endpoint.`);
    }
    let info: Record<string, unknown>;
    try {
      info = (await oidc.fetchUserInfo(metadata.config, token, oidc.skipSubjectCheck)) as Record<string, unknown>;
    } catch (err) {
      // An HTTP answer below 500 (401, 403, ...) means the provider does not accept the token.
      if (isUnreachable(err)) {
        throw errors.unavailable(
          'ISSUER_UNAVAILABLE',
          `The OpenID provider ${issuer.configured} could not be reached to check the access token.`,
        );
      }
      throw refused(
        'The access token is not valid (opaque tokens are checked at the userinfo endpoint of the issuer configured for them).',
      );
    }
    if (typeof info.sub !== 'string' || info.sub === '') throw refused('The access token names no subject at its issuer.');
    return { identity: { iss: metadata.issuer, sub: info.sub, email: emailOf(info), entitlements: entitlementsOf(info) } };
  }
}

/** A 401 for a token that was sent: all this module refuses. */
function refused(detail: string, code = 'INVALID_TOKEN'): AppError {
  return unauthorized(code, detail, true);
}

function tokenKey(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
