/**
 * The demo provider's web client, for a browser frontend (such as the origin service's Next.js
 * frontend) that logs in with the authorization code flow and PKCE: its redirect URIs come from the
 * server's CORS origins, the frontend's origins, unless BENCHMARKS_DEMO_REDIRECT_URIS names them.
 */
import { ConfigurationError } from '@benchmarks/server';
import type { WebClientOptions } from './issuer.ts';

/** Comma-separated exact redirect URIs of the web client, instead of those derived from the CORS origins. */
export const DEMO_REDIRECT_URIS_ENV = 'BENCHMARKS_DEMO_REDIRECT_URIS';

/**
 * Paths a frontend at a CORS origin is sent back to: the origin frontend's `/oidc-redirect`
 * (`NEXT_PUBLIC_OIDC_REDIRECT_HOST` + `/oidc-redirect`) and its root.
 */
export const REDIRECT_PATHS = ['/oidc-redirect', '/'];

/**
 * The web client for these CORS origins (`--cors-origins`), or for the redirect URIs `given` (the
 * environment variable's value); undefined when neither names a frontend (no origin, or only '*').
 * @example
 * demoWebClient(['http://localhost:3000']);
 * // { redirectUris: ['http://localhost:3000/oidc-redirect', 'http://localhost:3000/'], corsOrigins: ['http://localhost:3000'] }
 */
export function demoWebClient(corsOrigins: string[], given = process.env[DEMO_REDIRECT_URIS_ENV]): WebClientOptions | undefined {
  const listed = (given ?? '')
    .split(',')
    .map((uri) => uri.trim())
    .filter(Boolean);
  for (const uri of listed) {
    const url = URL.parse(uri);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hash) {
      throw new ConfigurationError(`${DEMO_REDIRECT_URIS_ENV} must list http(s) URLs without a fragment, not '${uri}'.`);
    }
  }
  const origins = corsOrigins.filter((origin) => origin !== '*').map((origin) => origin.replace(/\/+$/, ''));
  const redirectUris = listed.length ? listed : origins.flatMap((origin) => REDIRECT_PATHS.map((path) => `${origin}${path}`));
  return redirectUris.length ? { redirectUris, corsOrigins } : undefined;
}
