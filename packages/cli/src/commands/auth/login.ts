import type { Command } from 'commander';
import { NotFoundError } from '@benchmarks/sdk';
import { deviceLogin, jwtClaims, type DevicePrompt } from '../../auth.ts';
import { updateProfile } from '../../config.ts';
import { withContext } from '../../context.ts';
import { UsageError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ issuer?: string; clientId?: string; scopes?: string }>;

export function register(program: Command): void {
  program
    .command('login')
    .description('Log in with your identity provider (OAuth device flow) and store the tokens in the profile')
    .option('--issuer <url>', 'identity provider to use (default: the one the server trusts)')
    .option('--client-id <id>', 'OAuth client id for the device flow (default: the one the server names)')
    .option('--scopes <scopes>', 'scopes to ask for (default: the ones the server names)')
    .addHelpText(
      'after',
      `
Shows an address and a code: open the address in any browser, sign in, check the code. The access
and refresh tokens are stored in the config file (mode 0600) and refreshed when they expire.

Examples:
  benchmarks login --server https://performance.example.org
  benchmarks login --profile staging --server https://staging.example.org`,
    )
    .action(runs(run));
}

function showPrompt(io: Io, device: DevicePrompt): void {
  const minutes = Math.max(1, Math.round(device.expires_in / 60));
  io.stderr.write(
    device.verification_uri_complete
      ? `To log in, open this address in a browser:\n\n  ${device.verification_uri_complete}\n\nand check that it shows the code ${device.user_code}.\n`
      : `To log in, open ${device.verification_uri} in a browser and enter the code ${device.user_code}.\n`,
  );
  io.stderr.write(`Waiting for your approval (the code expires in ${minutes} minute${minutes === 1 ? '' : 's'})...\n`);
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const config = await ctx.client.call('getAuthConfig');
    const issuer = options.issuer ?? (config.issuers.length === 1 ? config.issuers[0] : undefined);
    if (!issuer) {
      throw new UsageError(
        config.issuers.length === 0
          ? 'The server trusts no identity provider: it cannot accept logins.'
          : `The server trusts several identity providers: choose one with --issuer (${config.issuers.join(', ')}).`,
      );
    }
    if (!config.issuers.includes(issuer)) ctx.warn(`Warning: the server does not trust ${issuer}; it will refuse its tokens.`);
    const clientId = options.clientId ?? config.device_client_id;
    if (!clientId) {
      throw new UsageError('The server names no OAuth client for the device login: pass --client-id (ask the operators of the service).');
    }
    const auth = await deviceLogin({
      issuer,
      clientId,
      scopes: options.scopes ?? config.scopes,
      prompt: (device) => showPrompt(io, device),
    });
    await updateProfile(ctx.settings.configPath, ctx.settings.profile, (profile) => {
      profile.auth = auth;
      profile.server = ctx.settings.server;
    });

    const claims = jwtClaims(auth.access_token);
    const who = claims?.sub ? `${String(claims.sub)}${claims.email ? ` (${String(claims.email)})` : ''}` : 'you';
    ctx.warn(`Logged in to ${ctx.settings.server} as ${who}; tokens saved in profile "${ctx.settings.profile}".`);
    const client = ctx.newClient(async () => auth.access_token);
    try {
      await client.self.get();
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      ctx.warn('You are not registered yet: run `benchmarks register` to accept the terms of use before uploading.');
    }
  });
}
