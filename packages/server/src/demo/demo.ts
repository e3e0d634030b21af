import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ServerConfig } from '../config.ts';
import { ConfigurationError, freePort } from '../db/embedded.ts';
import { startIssuer, type RunningIssuer } from '../oidc/provider.ts';

export const DEMO_ADMIN_ENTITLEMENT = 'urn:benchmarks:demo:admin';
export const DEMO_USER = { sub: 'demo-user', email: 'user@demo.example', name: 'Demo User', email_verified: true, entitlements: [] };
export const DEMO_ADMIN = {
  sub: 'demo-admin',
  email: 'admin@demo.example',
  name: 'Demo Admin',
  email_verified: true,
  entitlements: [DEMO_ADMIN_ENTITLEMENT],
};
export const DEMO_TOKEN_TTL_SECONDS = 7 * 24 * 3600;

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * The demo's built-in OpenID provider on loopback. Its signing key and port are kept in the data
 * directory, so tokens it printed stay valid across restarts.
 */
export async function startDemoIssuer(config: ServerConfig): Promise<RunningIssuer> {
  if (!isLoopback(config.host)) {
    throw new ConfigurationError(
      `Demo mode serves a built-in OpenID provider that signs tokens for anyone, so it only runs on a loopback host; ` +
        `--host ${config.host} is not one. Run without --demo and configure OIDC_ISSUERS for a real provider.`,
    );
  }
  await mkdir(config.dataDir, { recursive: true });
  const stateFile = join(config.dataDir, 'demo-issuer.json');
  let port: number;
  try {
    port = (JSON.parse(await readFile(stateFile, 'utf8')) as { port: number }).port;
  } catch {
    port = await freePort();
    await writeFile(stateFile, JSON.stringify({ port }) + '\n');
  }
  try {
    return await startIssuer({
      host: '127.0.0.1',
      port,
      keyFile: join(config.dataDir, 'demo-issuer-key.json'),
      accounts: [DEMO_USER, DEMO_ADMIN],
      audience: config.oidcAudience,
    });
  } catch (err) {
    throw new ConfigurationError(`The demo OpenID provider cannot start on 127.0.0.1:${port}: ${(err as Error).message}`);
  }
}
