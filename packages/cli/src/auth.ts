/**
 * Identity: the OIDC device authorization grant (`login`), the stored tokens, and refreshing them
 * before they expire. openid-client is loaded only when a login or a refresh needs it.
 */
import type * as openid from 'openid-client';
import { updateProfile, type StoredAuth } from './config.ts';
import { AuthError, CliError } from './errors.ts';
import type { Settings } from './global-options.ts';

/** A token this close to its expiry is refreshed first, so it cannot expire in flight. */
const EXPIRY_MARGIN_SECONDS = 60;

const now = () => Math.floor(Date.now() / 1000);

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** openid-client and the discovery of an issuer; plain http is allowed only on loopback (a local or test provider). */
async function issuerConfig(issuer: string, clientId: string): Promise<{ client: typeof openid; config: openid.Configuration }> {
  const client = await import('openid-client');
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new CliError(`The issuer '${issuer}' is not a URL.`);
  }
  const insecure = url.protocol === 'http:';
  if (insecure && !isLoopbackHost(url.hostname)) {
    throw new CliError(`Refusing to log in over plain http to ${issuer}: only loopback issuers may use http.`);
  }
  try {
    const options = insecure ? { execute: [client.allowInsecureRequests] } : undefined;
    return { client, config: await client.discovery(url, clientId, undefined, client.None(), options) };
  } catch (err) {
    throw new CliError(`Cannot use the identity provider ${issuer}: ${oauthReason(err)}.`);
  }
}

function oauthReason(err: unknown): string {
  const e = err as { error?: string; error_description?: string; message?: string; cause?: unknown };
  if (e?.error) return e.error_description ? `${e.error}: ${e.error_description}` : e.error;
  const cause = e?.cause as { code?: string; message?: string } | undefined;
  return [e?.message, cause?.code ?? cause?.message].filter(Boolean).join(': ') || String(err);
}

function toStored(
  issuer: string,
  clientId: string,
  tokens: { access_token: string; refresh_token?: string; expires_in?: number; scope?: string },
  previous?: StoredAuth,
): StoredAuth {
  return {
    issuer,
    client_id: clientId,
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token ?? previous?.refresh_token,
    expires_at: tokens.expires_in !== undefined ? now() + tokens.expires_in : (jwtClaims(tokens.access_token)?.exp as number | undefined),
    scope: tokens.scope ?? previous?.scope,
  };
}

export interface DevicePrompt {
  verification_uri: string;
  verification_uri_complete?: string;
  user_code: string;
  expires_in: number;
}

/**
 * The device authorization grant: asks the issuer for a code, lets `prompt` show it, then polls
 * until the user approved it in a browser (or it expired, or `signal` aborted).
 */
export async function deviceLogin(options: {
  issuer: string;
  clientId: string;
  scopes: string;
  prompt: (device: DevicePrompt) => void;
  signal?: AbortSignal;
}): Promise<StoredAuth> {
  const { client, config } = await issuerConfig(options.issuer, options.clientId);
  let device: openid.DeviceAuthorizationResponse;
  try {
    device = await client.initiateDeviceAuthorization(config, { scope: options.scopes });
  } catch (err) {
    throw new CliError(`The identity provider ${options.issuer} refused the device login: ${oauthReason(err)}.`);
  }
  options.prompt(device);
  try {
    const tokens = await client.pollDeviceAuthorizationGrant(config, device, undefined, { signal: options.signal });
    return toStored(options.issuer, options.clientId, tokens);
  } catch (err) {
    const code = (err as { error?: string }).error;
    if (code === 'access_denied') throw new AuthError('Login denied in the browser.');
    if (code === 'expired_token' || (err as Error).name === 'TimeoutError') {
      throw new AuthError('The login code expired before it was approved: run `benchmarks login` again.');
    }
    if ((err as Error).name === 'AbortError') throw new AuthError('Login cancelled.');
    throw new CliError(`Login failed: ${oauthReason(err)}.`);
  }
}

/** Revokes a refresh token at its issuer; best effort (logout works offline too). */
export async function revoke(auth: StoredAuth): Promise<boolean> {
  if (!auth.refresh_token) return false;
  try {
    const { client, config } = await issuerConfig(auth.issuer, auth.client_id);
    await client.tokenRevocation(config, auth.refresh_token, { token_type_hint: 'refresh_token' });
    return true;
  } catch {
    return false;
  }
}

/** The claims of a JWT, unverified: for display only (the server verifies tokens). */
export function jwtClaims(token: string): Record<string, unknown> | undefined {
  const parts = token.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
    return claims && typeof claims === 'object' ? claims : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The token of this invocation: the one given (flag, environment, config key), else the stored
 * login, refreshed first when it is about to expire. Concurrent callers share one refresh.
 */
export class TokenSource {
  #pending: Promise<string | undefined> | undefined;
  #auth: StoredAuth | undefined;

  constructor(private readonly settings: Settings) {
    this.#auth = settings.stored.auth;
  }

  /** Where the token comes from, for messages. */
  get kind(): 'given' | 'login' | 'none' {
    return this.settings.token ? 'given' : this.#auth ? 'login' : 'none';
  }

  get(): Promise<string | undefined> {
    if (this.settings.token) return Promise.resolve(this.settings.token);
    const auth = this.#auth;
    if (!auth) return Promise.resolve(undefined);
    if (auth.expires_at === undefined || auth.expires_at - EXPIRY_MARGIN_SECONDS > now()) return Promise.resolve(auth.access_token);
    this.#pending ??= this.#refresh(auth).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #refresh(auth: StoredAuth): Promise<string> {
    if (!auth.refresh_token) throw new AuthError('Your login has expired: run `benchmarks login` again.');
    const { client, config } = await issuerConfig(auth.issuer, auth.client_id);
    let refreshed: StoredAuth;
    try {
      refreshed = toStored(auth.issuer, auth.client_id, await client.refreshTokenGrant(config, auth.refresh_token), auth);
    } catch (err) {
      if ((err as { error?: string }).error)
        throw new AuthError(`Your login has expired (${oauthReason(err)}): run \`benchmarks login\` again.`);
      throw new CliError(`Cannot refresh the login at ${auth.issuer}: ${oauthReason(err)}.`);
    }
    this.#auth = refreshed;
    await updateProfile(this.settings.configPath, this.settings.profile, (profile) => {
      profile.auth = refreshed;
    });
    return refreshed.access_token;
  }
}
