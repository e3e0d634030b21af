/**
 * `benchmarks-demo issuer [--port N]`: the demo's OpenID provider alone, on loopback, for trying a
 * real `benchmarks-server start` with a throwaway identity provider. Its signing key is kept in
 * memory only: its tokens end with it. Prints what a server needs to trust it, and two tokens.
 */
import { parseArgs } from 'node:util';
import { DEMO_ADMIN, DEMO_ADMIN_ENTITLEMENT, DEMO_TOKEN_TTL_SECONDS, DEMO_USER } from './demo.ts';
import { startIssuer } from './issuer.ts';

export async function runIssuer(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { port: { type: 'string', default: '0' } } });
  const issuer = await startIssuer({ port: Number(values.port), accounts: [DEMO_USER, DEMO_ADMIN] });
  const [user, admin] = await Promise.all(
    [DEMO_USER, DEMO_ADMIN].map(({ sub }) => issuer.mintAccessToken({ sub, ttlSeconds: DEMO_TOKEN_TTL_SECONDS })),
  );
  process.stdout.write(
    [
      `Issuer: ${issuer.issuer}`,
      `Device login client: ${issuer.cliClientId}  (benchmarks login: any user name signs in)`,
      `Admin entitlement: ${DEMO_ADMIN_ENTITLEMENT}  (${DEMO_ADMIN.sub} has it)`,
      '',
      'A server that trusts it:',
      `  benchmarks-server start --oidc-issuer ${issuer.issuer} --oidc-device-client-id ${issuer.cliClientId} --admin-entitlement ${DEMO_ADMIN_ENTITLEMENT}`,
      '',
      `Token of ${DEMO_USER.sub} (valid 7 days, while this runs):`,
      user,
      '',
      `Token of ${DEMO_ADMIN.sub} (valid 7 days, while this runs):`,
      admin,
      '',
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'),
  );
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void issuer.close().then(() => process.exit(0)));
}
