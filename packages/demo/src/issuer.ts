/**
 * A real OpenID provider (oidc-provider) on loopback: the provider that signs real tokens in the
 * tests, and the server's built-in one in demo mode. It listens only on a loopback address, keeps its
 * state in memory and, given a key file, persists its signing key so that its tokens outlive a restart.
 *
 * Clients: the CLI's (device flow) and, given redirect URIs, a public web client (authorization code
 * with PKCE, no secret) for a browser frontend, with CORS on the token and userinfo endpoints for its
 * origins (discovery and JWKS are open to any origin). Besides the standard endpoints it has:
 * - a tiny interaction UI at /interaction/:uid (a login form with a `login` field, any user name
 *   signs in, then a consent step), which `approveDevice` drives over HTTP and a browser fills in;
 * - a userinfo endpoint that also accepts the provider's own JWT access tokens (as most production
 *   providers do; stock oidc-provider only accepts opaque ones there).
 */
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type RequestListener } from 'node:http';
import { type AddressInfo, isIPv4 } from 'node:net';
import { dirname } from 'node:path';

import { calculateJwkThumbprint, createLocalJWKSet, exportJWK, generateKeyPair, jwtVerify, type JWK } from 'jose';
import type Provider from 'oidc-provider';
import type { Adapter, AdapterPayload, ClientMetadata, Configuration } from 'oidc-provider';

export interface IssuerAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  entitlements?: string[];
}

export interface StartIssuerOptions {
  /** Default '127.0.0.1'. Only loopback hosts are accepted (127.0.0.0/8, ::1, localhost). */
  host?: string;
  /** Default 0: a free port chosen by the OS. */
  port?: number;
  /** Private JWKS (one RS256 key) persisted here as JSON, mode 0600; created if absent, reused otherwise. */
  keyFile?: string;
  accounts?: IssuerAccount[];
  /** The `aud` of issued JWT access tokens. Default 'benchmarks-api'. */
  audience?: string;
  /** A public web client (authorization code + PKCE); none without it. */
  webClient?: WebClientOptions;
}

/** The browser frontend's client: where it may be sent back to, and which origins may call the provider. */
export interface WebClientOptions {
  /** Default 'benchmarks-web'. */
  clientId?: string;
  /** Exact redirect URIs (at least one), e.g. http://localhost:3000/oidc-redirect. */
  redirectUris: string[];
  /**
   * Origins whose scripts may call the token and userinfo endpoints with its tokens, besides the
   * origins of the redirect URIs; '*': any.
   */
  corsOrigins?: string[];
}

export interface RunningIssuer {
  issuer: string;
  cliClientId: string;
  /** The web client's id and redirect URIs, when it has one. */
  webClient?: { clientId: string; redirectUris: string[] };
  addAccount(account: IssuerAccount): void;
  mintAccessToken(opts: { sub: string; ttlSeconds?: number; audience?: string; claims?: boolean }): Promise<string>;
  mintOpaqueToken(sub: string): Promise<string>;
  signingKey(): Promise<JWK>;
  /** Requests received by the userinfo endpoint so far (tests count which tokens reach which provider). */
  readonly userinfoRequests: number;
  approveDevice(verificationUriComplete: string, sub: string, userCode?: string): Promise<void>;
  close(): Promise<void>;
}

const CLI_CLIENT_ID = 'benchmarks-cli';
const CLI_SCOPES = 'openid email profile offline_access eduperson_entitlement';
export const WEB_CLIENT_ID = 'benchmarks-web';
const DEFAULT_AUDIENCE = 'benchmarks-api';
/** Scopes put into minted tokens (no offline_access: nothing is refreshed). */
const MINT_SCOPES = 'openid email profile eduperson_entitlement';

type OidcProviderModule = typeof import('oidc-provider');
let modulePromise: Promise<OidcProviderModule> | undefined;

/** oidc-provider, without the warning it prints at import on a runtime it does not list ("Unsupported runtime"): it works there. */
function loadOidcProvider(): Promise<OidcProviderModule> {
  modulePromise ??= (async () => {
    const original = console.warn;
    console.warn = (...args: unknown[]) => {
      if (typeof args[0] !== 'string' || !args[0].includes('oidc-provider WARNING: Unsupported runtime')) original.apply(console, args);
    };
    try {
      return await import('oidc-provider');
    } finally {
      console.warn = original;
    }
  })();
  return modulePromise;
}

export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  return isIPv4(h) && h.startsWith('127.');
}

function hostForUrl(host: string): string {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  return h.includes(':') ? `[${h}]` : h;
}

// ---------------------------------------------------------------------------------------------
// Signing key

/** A private RSA JWK as the provider signs with it: its thumbprint as kid (unless it has one), RS256. */
const signingKeyOf = async (jwk: JWK): Promise<JWK> => ({
  ...jwk,
  kid: jwk.kid ?? (await calculateJwkThumbprint(jwk)),
  alg: 'RS256',
  use: 'sig',
});
const newSigningKey = async () =>
  signingKeyOf(await exportJWK((await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 })).privateKey));

async function loadOrCreateKey(keyFile: string | undefined): Promise<JWK> {
  if (!keyFile) return newSigningKey();
  const text = await readFile(keyFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  if (typeof text === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Error(`The OpenID provider key file ${keyFile} is not valid JSON.`);
    }
    const k = ((parsed as { keys?: unknown[] })?.keys?.[0] ?? parsed) as Record<string, unknown> | null;
    if (typeof k !== 'object' || k === null || k.kty !== 'RSA' || ![k.n, k.e, k.d].every((v) => typeof v === 'string')) {
      throw new Error(`The OpenID provider key file ${keyFile} does not hold a private RSA JWK.`);
    }
    return signingKeyOf(k as JWK);
  }
  const jwk = await newSigningKey();
  await mkdir(dirname(keyFile), { recursive: true });
  await writeFile(keyFile, `${JSON.stringify({ keys: [jwk] }, null, 2)}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600);
  return jwk;
}

function publicPart(jwk: JWK): JWK {
  const { kty, n, e, kid, alg, use } = jwk;
  return { kty, n, e, kid, alg, use };
}

/**
 * The provider's storage: in memory, one per provider, unbounded (oidc-provider's own memory adapter
 * is one LRU of 1,000 entries that every instance shares). Entries are kept a minute past their expiry,
 * so that the provider says "expired" rather than "not found", and swept every 500 writes.
 */
function memoryAdapter(): (name: string) => Adapter {
  const entries = new Map<string, { payload: AdapterPayload; expiresAt: number }>();
  let writes = 0;
  const live = (key: string | undefined) => {
    const entry = key === undefined ? undefined : entries.get(key);
    if (entry && entry.expiresAt <= Date.now()) entries.delete(key!);
    else return entry?.payload;
  };
  return (name) => {
    const keyOf = (id: string) => `${name}:${id}`;
    /** The entry last written with this user code or session uid. */
    const findBy = async (field: 'userCode' | 'uid', value: string) => {
      let last: string | undefined;
      for (const [key, { payload }] of entries) if (key.startsWith(`${name}:`) && payload[field] === value) last = key;
      return live(last);
    };
    return {
      async upsert(id, payload, expiresIn) {
        const key = keyOf(id);
        entries.delete(key);
        entries.set(key, { payload, expiresAt: typeof expiresIn === 'number' ? Date.now() + expiresIn * 1000 + 60_000 : Infinity });
        if (++writes % 500 === 0) for (const [k, e] of entries) if (e.expiresAt <= Date.now()) entries.delete(k);
      },
      find: async (id) => live(keyOf(id)),
      findByUserCode: (userCode) => findBy('userCode', userCode),
      findByUid: (uid) => findBy('uid', uid),
      async consume(id) {
        const payload = live(keyOf(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        entries.delete(keyOf(id));
      },
      async revokeByGrantId(grantId) {
        for (const [key, { payload }] of entries) if (payload.grantId === grantId) entries.delete(key);
      },
    };
  };
}

// ---------------------------------------------------------------------------------------------
// Small HTML / HTTP helpers

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const NAMED: Record<string, string> = { quot: '"', lt: '<', gt: '>', amp: '&' };
const unescapeHtml = (value: string) =>
  value.replace(/&(?:#[xX]([0-9a-fA-F]+)|#(\d+)|(quot|lt|gt|amp));/g, (_, hex?: string, dec?: string, name?: string) =>
    hex ? String.fromCodePoint(parseInt(hex, 16)) : dec ? String.fromCodePoint(Number(dec)) : NAMED[name!]!,
  );

/** Answers with one of the provider's pages, named by `data-page` for `approveDevice` and the tests. */
function render(ctx: { status: number; type: string; body: unknown }, title: string, body: string, marker: string, status?: number) {
  if (status) ctx.status = status;
  ctx.type = 'html';
  ctx.body = `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}input,button{font-size:1rem;padding:.4rem;margin:.3rem 0}</style>
</head>
<body data-page="${marker}">
<h1>${escapeHtml(title)}</h1>
${body}
</body>
</html>`;
}

async function readForm(req: IncomingMessage, limit = 64 * 1024): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/** The forms of a page: action, method and the values of their named inputs. */
function parseForms(html: string): { action: string; method: string; inputs: Map<string, string> }[] {
  const attr = (tag: string, name: string): string | undefined => {
    const m = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)')`, 'i').exec(` ${tag}`);
    return m ? unescapeHtml(m[1] ?? m[2] ?? '') : undefined;
  };
  return [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)].map(([, open = '', inner = '']) => {
    const inputs = new Map<string, string>();
    for (const [, tag = ''] of inner.matchAll(/<input\b([^>]*)>/gi)) {
      const name = attr(tag, 'name');
      if (name) inputs.set(name, attr(tag, 'value') ?? '');
    }
    return { action: attr(open, 'action') ?? '', method: (attr(open, 'method') ?? 'get').toLowerCase(), inputs };
  });
}

/** A minimal cookie jar for a single origin (cookie paths are ignored, which is fine for this provider). */
class CookieJar {
  readonly #cookies = new Map<string, string>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';');
      const eq = pair.indexOf('=');
      if (eq <= 0) continue;
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key = '', val = ''] = attribute.split('=');
        const k = key.trim().toLowerCase();
        return (k === 'max-age' && Number(val) <= 0) || (k === 'expires' && Date.parse(val) <= Date.now());
      });
      if (expired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

// ---------------------------------------------------------------------------------------------
// The web client

/** The web client's registration and its CORS rule; undefined without redirect URIs. */
function webClientOf(options: WebClientOptions | undefined) {
  if (!options?.redirectUris.length) return undefined;
  const origins = new Set<string>();
  for (const uri of options.redirectUris) {
    const url = URL.parse(uri);
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hash) {
      throw new Error(`The web client's redirect URI must be an http(s) URL without a fragment, not '${uri}'.`);
    }
    origins.add(url.origin);
  }
  const any = options.corsOrigins?.includes('*') ?? false;
  for (const origin of options.corsOrigins ?? []) if (origin !== '*') origins.add(origin.replace(/\/+$/, ''));
  const metadata: ClientMetadata & { redirect_uris: string[] } = {
    client_id: options.clientId ?? WEB_CLIENT_ID,
    client_name: 'Benchmarks web frontend',
    application_type: 'web',
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    redirect_uris: [...options.redirectUris],
    scope: CLI_SCOPES,
  };
  return {
    metadata,
    allows: (origin: string) => origin !== 'null' && (any || origins.has(origin)),
  };
}

// ---------------------------------------------------------------------------------------------

export async function startIssuer(options: StartIssuerOptions = {}): Promise<RunningIssuer> {
  const host = options.host ?? '127.0.0.1';
  if (!isLoopbackHost(host)) {
    throw new Error(
      `Refusing to start the built-in OpenID provider on host "${host}": it may only listen on a loopback address (127.0.0.0/8, ::1 or localhost).`,
    );
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`Invalid port ${String(port)} for the built-in OpenID provider.`);
  }
  const audience = options.audience ?? DEFAULT_AUDIENCE;
  // Resource indicators must be absolute URIs; the audience of the tokens need not be one.
  const indicatorOf = (aud: string) => (URL.canParse(aud) ? aud : `urn:benchmarks:resource:${aud}`);
  const resourceIndicator = indicatorOf(audience);

  const accounts = new Map<string, IssuerAccount>();
  const addAccount = (account: IssuerAccount): void => {
    if (!account || typeof account.sub !== 'string' || account.sub === '') {
      throw new Error('An account needs a non-empty sub.');
    }
    accounts.set(account.sub, { ...account, entitlements: account.entitlements ? [...account.entitlements] : undefined });
  };
  for (const account of options.accounts ?? []) addAccount(account);

  const [oidc, signingJwk] = await Promise.all([loadOidcProvider(), loadOrCreateKey(options.keyFile)]);
  const { default: ProviderClass, errors: oidcErrors } = oidc;
  const publicJwks = createLocalJWKSet({ keys: [publicPart(signingJwk)] });

  // Listen first: the issuer URL depends on the port the OS picks.
  let handler: RequestListener | undefined;
  const server = createServer((req, res) => {
    if (handler) return handler(req, res);
    res.statusCode = 503;
    res.end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const issuer = `http://${hostForUrl(host)}:${(server.address() as AddressInfo).port}`;

  /** Tokens minted with claims: false (extraTokenClaims leaves them alone). */
  const withoutClaims = new WeakSet<object>();
  const web = webClientOf(options.webClient);

  const accountClaims = (account: IssuerAccount, scope?: string): { sub: string; [claim: string]: unknown } => {
    const scopes = scope === undefined ? undefined : new Set(scope.split(' '));
    const allowed = (s: string) => scopes === undefined || scopes.has(s);
    const claims: { sub: string; [claim: string]: unknown } = { sub: account.sub };
    if (allowed('email') && account.email !== undefined) {
      claims.email = account.email;
      claims.email_verified = account.email_verified ?? true;
    }
    if (allowed('profile') && account.name !== undefined) claims.name = account.name;
    if (allowed('eduperson_entitlement')) claims.eduperson_entitlement = [...(account.entitlements ?? [])];
    return claims;
  };
  const resourceServerInfo = (aud: string) => ({
    audience: aud,
    scope: CLI_SCOPES,
    accessTokenFormat: 'jwt' as const,
    jwt: { sign: { alg: 'RS256' as const } },
  });

  // What oidc-provider does by default is left out (claims acr, sid, auth_time, iss; the interactions' URL; refresh tokens for offline_access).
  const configuration: Configuration = {
    adapter: memoryAdapter(),
    jwks: { keys: [signingJwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    clients: [
      {
        client_id: CLI_CLIENT_ID,
        client_name: 'Benchmarks CLI',
        application_type: 'native',
        token_endpoint_auth_method: 'none',
        grant_types: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
        response_types: [],
        redirect_uris: [],
        scope: CLI_SCOPES,
      },
      ...(web ? [web.metadata] : []),
    ],
    claims: { email: ['email', 'email_verified'], profile: ['name'], eduperson_entitlement: ['eduperson_entitlement'] },
    scopes: ['openid', 'offline_access', 'email', 'profile', 'eduperson_entitlement'],
    // Only the web client's tokens and code exchanges, from its origins: no other client runs in a browser.
    clientBasedCORS: (_ctx, origin, client) => web !== undefined && client.clientId === web.metadata.client_id && web.allows(origin),
    async findAccount(_ctx, sub) {
      const account = accounts.get(sub);
      return account && { accountId: sub, claims: () => accountClaims(account) };
    },
    async extraTokenClaims(_ctx, token) {
      if (withoutClaims.has(token)) return undefined;
      const t = token as { kind?: string; accountId?: string; resourceServer?: unknown };
      const account = t.kind === 'AccessToken' && t.resourceServer ? accounts.get(t.accountId ?? '') : undefined;
      return (
        account && {
          ...(account.email !== undefined ? { email: account.email } : {}),
          eduperson_entitlement: [...(account.entitlements ?? [])],
        }
      );
    },
    // oidc-provider prints a notice for each default it uses (none for the authorization code's 60 s); features left off need none.
    ttl: {
      AccessToken: 3600,
      DeviceCode: 600,
      Grant: 14 * 24 * 3600,
      IdToken: 3600,
      Interaction: 3600,
      RefreshToken: 14 * 24 * 3600,
      Session: 14 * 24 * 3600,
    },
    features: {
      devInteractions: { enabled: false },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      rpInitiatedLogout: { enabled: false },
      resourceIndicators: {
        defaultResource: async () => resourceIndicator,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== resourceIndicator) throw new oidcErrors.InvalidTarget();
          return resourceServerInfo(audience);
        },
      },
      deviceFlow: {
        enabled: true,
        userCodeInputSource: async (ctx, form, _out, err) => {
          const message = err
            ? '<p class="error">The code could not be used. Try again.</p>'
            : '<p>Enter the code shown on your device.</p>';
          render(
            ctx,
            'Device sign-in',
            `${message}\n${form}\n<button type="submit" form="op.deviceInputForm">Continue</button>`,
            'device-input',
          );
        },
        userCodeConfirmSource: async (ctx, form, client, _deviceInfo, userCode) => {
          const who = escapeHtml(client.clientName ?? client.clientId);
          render(
            ctx,
            'Confirm device',
            `<p><strong>${who}</strong> wants to sign in. The code on the device should be <code>${escapeHtml(userCode)}</code>.</p>\n${form}\n<button type="submit" form="op.deviceConfirmForm">Continue</button>`,
            'device-confirm',
          );
        },
        successSource: async (ctx) =>
          render(ctx, 'Sign-in complete', '<p>You can close this page and return to your device.</p>', 'device-success'),
      },
    },
    renderError: async (ctx, out) => {
      const details = Object.entries(out).map(([k, v]) => `<p><strong>${escapeHtml(k)}</strong>: ${escapeHtml(String(v))}</p>`);
      render(ctx, 'Sign-in error', details.join('\n'), 'error');
    },
  };

  let provider: Provider;
  try {
    provider = new ProviderClass(issuer, configuration);
  } catch (err) {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw err;
  }

  // ---- interaction UI: /interaction/:uid (GET), /interaction/:uid/login, /confirm, /abort (POST)
  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([A-Za-z0-9_-]+)(?:\/(login|confirm|abort))?$/.exec(ctx.path);
    if (!match) return next();
    const [, uid, action] = match;
    ctx.set('Cache-Control', 'no-store');
    const details = await provider.interactionDetails(ctx.req, ctx.res).catch(() => undefined);
    if (details?.uid !== uid) {
      const why = details ? 'does not match your session' : 'is unknown or has expired';
      return render(ctx, 'Sign-in error', `<p>This sign-in request ${why}.</p>`, 'error', 400);
    }
    const prompt = details.prompt.name;
    if (ctx.method === 'GET' && action === undefined) {
      if (prompt === 'login') {
        return render(
          ctx,
          'Sign in',
          `<form method="post" action="/interaction/${uid}/login">
<label>User name <input type="text" name="login" autofocus required></label>
<button type="submit">Sign in</button>
</form>
<form method="post" action="/interaction/${uid}/abort"><button type="submit">Cancel</button></form>`,
          'login',
        );
      }
      const clientId = String(details.params.client_id);
      const who = escapeHtml((await provider.Client.find(clientId))?.clientName ?? clientId);
      return render(
        ctx,
        'Authorize',
        `<p><strong>${who}</strong> asks for access to your account (scopes: ${escapeHtml(String(details.params.scope ?? ''))}).</p>
<form method="post" action="/interaction/${uid}/confirm"><input type="hidden" name="confirm" value="yes"><button type="submit">Allow</button></form>
<form method="post" action="/interaction/${uid}/abort"><button type="submit">Deny</button></form>`,
        'consent',
      );
    }
    if (ctx.method !== 'POST' || action === undefined) {
      ctx.status = 405;
      return;
    }
    const body = await readForm(ctx.req);
    const finish = async (result: Parameters<Provider['interactionResult']>[2], merge = false) => {
      const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
      ctx.status = 303;
      ctx.redirect(returnTo);
    };
    if (action === 'abort') return finish({ error: 'access_denied', error_description: 'End-User aborted interaction' });
    if (prompt !== (action === 'login' ? 'login' : 'consent')) {
      ctx.status = 400;
      return;
    }
    if (action === 'login') {
      const login = (body.get('login') ?? '').trim();
      if (!login) return render(ctx, 'Sign in', '<p>A user name is required.</p>', 'error', 400);
      if (!accounts.has(login)) addAccount({ sub: login });
      return finish({ login: { accountId: login } });
    }
    const { session, params, grantId } = details;
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    const grant = grantId
      ? await provider.Grant.find(grantId)
      : new provider.Grant({ accountId: session?.accountId, clientId: String(params.client_id) });
    if (!grant) {
      ctx.status = 400;
      return;
    }
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    await finish({ consent: { grantId: await grant.save() } }, true);
  });

  // ---- userinfo with the provider's own JWT access tokens
  const userinfoPath = new URL(provider.urlFor('userinfo')).pathname;
  let userinfoRequests = 0;
  provider.use(async (ctx, next) => {
    if (ctx.path !== userinfoPath || (ctx.method !== 'GET' && ctx.method !== 'POST')) return next();
    userinfoRequests++;
    const m = /^Bearer\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i.exec(ctx.get('authorization'));
    if (!m) return next();
    // Answered here, so without the provider's CORS: the web origins may read the answer, as they
    // may the provider's own (its preflight answers OPTIONS).
    const origin = ctx.get('origin');
    ctx.vary('Origin');
    if (origin && web?.allows(origin)) {
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate');
    }
    ctx.set('Cache-Control', 'no-store');
    const verified = await jwtVerify(m[1]!, publicJwks, { issuer, algorithms: ['RS256'], requiredClaims: ['sub', 'exp'] }).catch(
      () => undefined,
    );
    const account = verified && accounts.get(String(verified.payload.sub));
    if (!account) {
      const description = verified ? 'unknown account' : 'invalid access token';
      ctx.status = 401;
      ctx.set('WWW-Authenticate', `Bearer error="invalid_token", error_description="${description}"`);
      ctx.body = { error: 'invalid_token', error_description: description };
      return;
    }
    const { scope } = verified.payload;
    ctx.body = accountClaims(account, typeof scope === 'string' ? scope : undefined);
  });

  handler = provider.callback();

  /** An access token of the CLI client for `sub`, on a grant of its own: minted, not obtained by a flow. */
  const mint = async (sub: string, resource?: { indicator: string; audience: string; expiresIn: number }) => {
    if (!accounts.has(sub)) addAccount({ sub });
    const client = await provider.Client.find(CLI_CLIENT_ID);
    if (!client) throw new Error('The CLI client is not configured.');
    const grant = new provider.Grant({ accountId: sub, clientId: CLI_CLIENT_ID });
    grant.addOIDCScope(MINT_SCOPES);
    if (resource) grant.addResourceScope(resource.indicator, MINT_SCOPES);
    const fields = resource && {
      resourceServer: new provider.ResourceServer(resource.indicator, { ...resourceServerInfo(resource.audience), scope: MINT_SCOPES }),
      // a negative value gives an already expired token (iat now, exp in the past)
      expiresIn: resource.expiresIn,
    };
    return new provider.AccessToken({
      accountId: sub,
      client,
      grantId: await grant.save(),
      gty: 'urn:benchmarks:minted',
      scope: MINT_SCOPES,
      ...fields,
    });
  };

  let closed = false;

  return {
    issuer,
    cliClientId: CLI_CLIENT_ID,
    webClient: web && { clientId: web.metadata.client_id, redirectUris: [...web.metadata.redirect_uris] },
    addAccount,
    get userinfoRequests() {
      return userinfoRequests;
    },

    async mintAccessToken({ sub, ttlSeconds = 3600, audience: aud = audience, claims = true }) {
      if (!Number.isInteger(ttlSeconds) || ttlSeconds === 0) throw new Error('ttlSeconds must be a non-zero integer.');
      const token = await mint(sub, { indicator: indicatorOf(aud), audience: aud, expiresIn: ttlSeconds });
      if (!claims) withoutClaims.add(token);
      return token.save();
    },

    async mintOpaqueToken(sub) {
      return (await mint(sub)).save();
    },

    async signingKey() {
      return { ...signingJwk };
    },

    async approveDevice(verificationUri, sub, userCode) {
      const start = new URL(verificationUri, issuer);
      if (start.origin !== new URL(issuer).origin) {
        throw new Error(`The verification URI ${start.href} does not belong to the issuer ${issuer}.`);
      }
      if (userCode !== undefined) start.searchParams.set('user_code', userCode);
      const jar = new CookieJar();

      const request = async (url: URL, form?: Map<string, string>): Promise<{ url: URL; html: string; status: number }> => {
        let current = url;
        let method = form ? 'POST' : 'GET';
        let body: string | undefined = form ? new URLSearchParams([...form]).toString() : undefined;
        for (let hop = 0; hop < 20; hop++) {
          const cookie = jar.header();
          const headers = {
            accept: 'text/html',
            ...(cookie ? { cookie } : {}),
            ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded' }),
          };
          const response = await fetch(current, { method, headers, body, redirect: 'manual' });
          jar.store(response);
          const location = response.headers.get('location');
          if (response.status >= 300 && response.status < 400 && location) {
            await response.body?.cancel();
            current = new URL(location, current);
            if (current.origin !== start.origin) throw new Error(`Device approval was redirected off the provider, to ${current.origin}.`);
            method = 'GET';
            body = undefined;
            continue;
          }
          return { url: current, html: await response.text(), status: response.status };
        }
        throw new Error('Device approval: too many redirects.');
      };

      let result = await request(start);
      for (let step = 0; step < 10; step++) {
        if (result.html.includes('data-page="device-success"')) return;
        const marker = /data-page="([^"]+)"/.exec(result.html)?.[1];
        const form = parseForms(result.html).find((f) => f.method === 'post' && !f.action.endsWith('/abort'));
        if (marker === 'error' || marker === 'device-input' || !form) {
          const text = result.html
            .replace(/<style[\s\S]*?<\/style>|<script[\s\S]*?<\/script>/gi, '')
            .replace(/<[^>]+>/g, ' ')
            .replace(/\s+/g, ' ')
            .trim();
          throw new Error(`Device approval failed at ${result.url.pathname} (HTTP ${result.status}): ${text.slice(0, 300)}`);
        }
        if (form.inputs.has('login')) form.inputs.set('login', sub);
        result = await request(new URL(form.action || result.url.href, result.url), form.inputs);
      }
      throw new Error('Device approval did not complete.');
    },

    async close() {
      if (closed) return;
      closed = true;
      await new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}
