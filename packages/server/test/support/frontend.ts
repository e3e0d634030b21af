/**
 * A stand-in for a browser frontend on an origin of its own (the origin service's Next.js frontend
 * is not ours to ship): a blank page whose scripts call the API across origins, and the two pages
 * of an OpenID login with the authorization code flow and PKCE, as oidc-client-ts performs it
 * (discovery, `/authorize` with an S256 challenge, then at `/oidc-redirect` the code exchanged at
 * the token endpoint and userinfo read, all by `fetch` from this origin).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The scopes the origin frontend asks for (docs/migrating.md, "Trying the frontend against the demo"). */
export const FRONTEND_SCOPES = 'openid email profile eduperson_entitlement offline_access';

/** What `/oidc-redirect` leaves in `window.loginResult`. */
export interface LoginResult {
  error?: string;
  state?: boolean;
  token?: { status: number; body: Record<string, unknown> };
  userinfo?: { status: number; body: Record<string, unknown> };
  jwksKeys?: number;
  self?: { status: number; body: Record<string, unknown> };
  accessToken?: string;
}

const LOGIN_SCRIPT = `
const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const given = new URLSearchParams(location.search);
const authority = given.get('authority');
const discovery = await (await fetch(authority + '/.well-known/openid-configuration')).json();
const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
const challenge = b64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
const state = b64url(crypto.getRandomValues(new Uint8Array(16)));
const clientId = given.get('client_id');
sessionStorage.setItem('oidc', JSON.stringify({ verifier, state, discovery, clientId, api: given.get('api') }));
const url = new URL(discovery.authorization_endpoint);
url.search = new URLSearchParams({
  client_id: clientId,
  redirect_uri: location.origin + '/oidc-redirect',
  response_type: 'code',
  scope: given.get('scope'),
  state,
  code_challenge: challenge,
  code_challenge_method: 'S256',
}).toString();
location.assign(url.href);
`;

const REDIRECT_SCRIPT = `
const out = {};
let step = 'state';
try {
  const saved = JSON.parse(sessionStorage.getItem('oidc'));
  const back = new URLSearchParams(location.search);
  out.state = back.get('state') === saved.state;
  if (back.get('error')) throw new Error('authorization refused: ' + back.get('error'));
  step = 'token endpoint';
  const tokenRes = await fetch(saved.discovery.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: back.get('code'),
      redirect_uri: location.origin + '/oidc-redirect',
      client_id: saved.clientId,
      code_verifier: saved.verifier,
    }),
  });
  out.token = { status: tokenRes.status, body: await tokenRes.json() };
  const bearer = { authorization: 'Bearer ' + out.token.body.access_token };
  step = 'userinfo';
  const info = await fetch(saved.discovery.userinfo_endpoint, { headers: bearer });
  out.userinfo = { status: info.status, body: await info.json() };
  step = 'jwks';
  out.jwksKeys = (await (await fetch(saved.discovery.jwks_uri)).json()).keys.length;
  step = 'users/self';
  const self = await fetch(saved.api + '/users/self', { headers: { ...bearer, accept: 'application/json, text/plain, */*' } });
  out.self = { status: self.status, body: await self.json() };
  out.accessToken = out.token.body.access_token;
} catch (err) {
  out.error = step + ': ' + String(err);
}
window.loginResult = out;
`;

function html(title: string, script = ''): string {
  const tag = script ? `<script type="module">${script}</script>` : '';
  return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body>${tag}</body></html>`;
}

export interface Frontend {
  /** e.g. http://127.0.0.1:41234 */
  origin: string;
  close(): Promise<void>;
}

/** Serves `/` (blank), `/login` and `/oidc-redirect` on a free loopback port. */
export async function startFrontend(): Promise<Frontend> {
  const pages: Record<string, string> = {
    '/': html('frontend'),
    '/login': html('login', LOGIN_SCRIPT),
    '/oidc-redirect': html('oidc-redirect', REDIRECT_SCRIPT),
  };
  const server: Server = createServer((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(page ? 200 : 404, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(page ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
