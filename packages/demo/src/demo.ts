/**
 * `benchmarks-server start --demo`: a built-in OpenID provider on loopback that the server trusts,
 * a seeded catalogue, and two printed tokens. Its signing key and port are kept in the data
 * directory, so the tokens it printed stay valid across restarts.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigurationError, freePort, registerUser, User, type Logger, type RunningDemo, type ServerConfig } from '@benchmarks/server';
import { isLoopbackHost, startIssuer, type RunningIssuer } from './issuer.ts';
import { seedOnce, type SeedOutcome } from './seed.ts';
import { demoWebClient } from './web-client.ts';

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

const SEED_MESSAGES: Record<SeedOutcome, string> = {
  seeded: 'demo catalogue seeded',
  'held data': 'demo catalogue not seeded: the catalogue already holds data (it never will be)',
  'decided before': 'demo catalogue not seeded: it is seeded only once per database',
};

/**
 * The demo's built-in OpenID provider on loopback, on `--demo-issuer-port` (remembered), else on the
 * port it used last time; with a web client for the frontends at the CORS origins (web-client.ts).
 */
export async function startDemoIssuer(config: ServerConfig): Promise<RunningIssuer> {
  if (!isLoopbackHost(config.host)) {
    throw new ConfigurationError(
      `Demo mode serves a built-in OpenID provider that signs tokens for anyone, so it only runs on a loopback host; ` +
        `--host ${config.host} is not one. Run without --demo and configure OIDC_ISSUERS for a real provider.`,
    );
  }
  const webClient = demoWebClient(config.corsOrigins);
  await mkdir(config.dataDir, { recursive: true });
  const stateFile = join(config.dataDir, 'demo-issuer.json');
  let remembered: number | undefined;
  try {
    remembered = (JSON.parse(await readFile(stateFile, 'utf8')) as { port: number }).port;
  } catch {
    // first start: none
  }
  const port = config.demoIssuerPort ?? remembered ?? (await freePort());
  let issuer: RunningIssuer;
  try {
    issuer = await startIssuer({
      host: '127.0.0.1',
      port,
      keyFile: join(config.dataDir, 'demo-issuer-key.json'),
      accounts: [DEMO_USER, DEMO_ADMIN],
      audience: config.oidcAudience,
      webClient,
    });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      const which = config.demoIssuerPort === undefined ? ', the one it used last time (the demo tokens printed then name it),' : '';
      throw new ConfigurationError(
        `Port ${port} on 127.0.0.1${which} for the demo OpenID provider is already in use: ` +
          'stop what holds it, or choose another with --demo-issuer-port (BENCHMARKS_DEMO_ISSUER_PORT).',
      );
    }
    throw new ConfigurationError(`The demo OpenID provider cannot start on 127.0.0.1:${port}: ${(err as Error).message}`);
  }
  if (port !== remembered) await writeFile(stateFile, `${JSON.stringify({ port })}\n`);
  return issuer;
}

/**
 * Starts the demo's provider; once the server listens, registers the demo administrator, seeds the
 * catalogue (once per database, unless `config.demoSeed` is false: `seedOnce`) and prints both tokens.
 * @example
 * import * as demo from '@benchmarks/demo';
 * import { main } from '@benchmarks/server';
 * await main(['node', 'benchmarks-server', 'start', '--demo'], { demo });
 */
export async function startDemo(config: ServerConfig, logger: Logger, signal?: AbortSignal): Promise<RunningDemo> {
  signal?.throwIfAborted();
  const issuer = await startDemoIssuer(config);
  if (signal?.aborted) {
    // The server was asked to stop while the provider started: nothing of it is kept.
    await issuer.close();
    signal.throwIfAborted();
  }
  return {
    issuer: issuer.issuer,
    adminEntitlement: DEMO_ADMIN_ENTITLEMENT,
    cliClientId: issuer.cliClientId,
    close: () => issuer.close(),
    async ready(server, stopping) {
      if (stopping?.aborted) return;
      const em = server.context.orm.em.fork();
      const admin = { iss: issuer.issuer, sub: DEMO_ADMIN.sub, email: DEMO_ADMIN.email, entitlements: DEMO_ADMIN.entitlements };
      await registerUser(em, admin, config.termsVersion);
      if (stopping?.aborted) return;
      if (config.demoSeed) {
        const outcome = await em.transactional((tx) => seedOnce(tx, { iss: issuer.issuer, sub: DEMO_ADMIN.sub }));
        logger.info(SEED_MESSAGES[outcome], { outcome });
      } else {
        logger.info('demo catalogue not seeded: --demo-seed false');
      }
      if (stopping?.aborted) return;
      const userToken = await issuer.mintAccessToken({ sub: DEMO_USER.sub, ttlSeconds: DEMO_TOKEN_TTL_SECONDS });
      const adminToken = await issuer.mintAccessToken({ sub: DEMO_ADMIN.sub, ttlSeconds: DEMO_TOKEN_TTL_SECONDS });
      const user = await em.findOne(User, { iss: issuer.issuer, sub: DEMO_USER.sub });
      const userStatus = !user ? 'not registered yet' : user.removed_datetime ? 'removed by an administrator' : 'registered';
      if (stopping?.aborted) return;
      process.stdout.write(
        [
          '',
          `Benchmark results service (demo) at ${server.url}/   (Swagger UI; API at ${server.url}/api/v1)`,
          `Explorer: ${server.url}/explore`,
          `Built-in OpenID provider: ${issuer.issuer}  (device login client: ${issuer.cliClientId})`,
          issuer.webClient
            ? `Web login client: ${issuer.webClient.clientId} (authorization code + PKCE; redirect URIs: ${issuer.webClient.redirectUris.join(', ')})`
            : 'Web login client: none (give --cors-origins the web frontend origin to have one)',
          '',
          `Demo user token (${DEMO_USER.sub}, ${userStatus}; valid 7 days):`,
          userToken,
          '',
          `Demo admin token (${DEMO_ADMIN.sub}, registered administrator; valid 7 days):`,
          adminToken,
          '',
          `Try: curl -X POST -H "Authorization: Bearer $TOKEN" ${server.url}/api/v1/users:register`,
          'Press Ctrl-C to stop.',
          '',
        ].join('\n'),
      );
    },
  };
}
