/** Who you are: `login`, `logout`, `whoami`, `register` and `token`. */
import type { Command } from 'commander';
import { NotFoundError, ConflictError, type Reply } from '@benchmarks/sdk';
import { deviceLogin, jwtClaims, revoke, type DevicePrompt } from '../auth.ts';
import { updateProfile } from '../config.ts';
import { confirm } from '../confirm.ts';
import { createContext, type Context } from '../context.ts';
import { AuthError, UsageError } from '../errors.ts';
import type { Io } from '../io.ts';
import type { Column } from '../output.ts';
import { runs, runsInContext, type WithGlobals } from './common.ts';

type Options = WithGlobals<{ issuer?: string; clientId?: string; scopes?: string; acceptTerms?: boolean }>;
type User = Reply<'getSelf'>;

const NOT_LOGGED_IN = 'Not logged in: run `benchmarks login` or pass --token.';

/** The user, or undefined when the token's owner is not registered. */
const self = (ctx: Context) =>
  ctx.client.self.get().catch((err) => {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  });

function showPrompt(io: Io, device: DevicePrompt): void {
  const minutes = Math.max(1, Math.round(device.expires_in / 60));
  io.stderr.write(
    device.verification_uri_complete
      ? `To log in, open this address in a browser:\n\n  ${device.verification_uri_complete}\n\nand check that it shows the code ${device.user_code}.\n`
      : `To log in, open ${device.verification_uri} in a browser and enter the code ${device.user_code}.\n`,
  );
  io.stderr.write(`Waiting for your approval (the code expires in ${minutes} minute${minutes === 1 ? '' : 's'})...\n`);
}

async function login(ctx: Context, options: Options): Promise<void> {
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
    prompt: (device) => showPrompt(ctx.io, device),
  });
  await updateProfile(ctx.settings.configPath, ctx.settings.profile, (profile) => {
    profile.auth = auth;
    profile.server = ctx.settings.server;
  });
  const claims = jwtClaims(auth.access_token);
  const who = claims?.sub ? `${String(claims.sub)}${claims.email ? ` (${String(claims.email)})` : ''}` : 'you';
  ctx.warn(`Logged in to ${ctx.settings.server} as ${who}; tokens saved in profile "${ctx.settings.profile}".`);
  try {
    await ctx.newClient(async () => auth.access_token).self.get();
  } catch (err) {
    if (!(err instanceof NotFoundError)) throw err;
    ctx.warn('You are not registered yet: run `benchmarks register` to accept the terms of use before uploading.');
  }
}

async function logout(options: Options, io: Io): Promise<void> {
  const ctx = await createContext(options, io);
  const auth = ctx.settings.config.profiles?.[ctx.settings.profile]?.auth;
  if (!auth) {
    ctx.info(`Not logged in (profile "${ctx.settings.profile}").`);
  } else {
    await updateProfile(ctx.settings.configPath, ctx.settings.profile, (profile) => {
      delete profile.auth;
    });
    const revoked = await revoke(auth);
    ctx.info(`Logged out (profile "${ctx.settings.profile}")${revoked ? '; the refresh token was revoked' : ''}.`);
  }
  if (ctx.settings.token) ctx.warn('Note: a token is still given by --token, BENCHMARKS_TOKEN or the config file, and will be used.');
}

const identityColumns: Column<Awaited<ReturnType<typeof identityOf>>>[] = [
  { header: 'server', value: (i) => i.server },
  { header: 'profile', value: (i) => i.profile },
  { header: 'iss', value: (i) => i.iss },
  { header: 'sub', value: (i) => i.sub },
  { header: 'email', value: (i) => i.email },
  {
    header: 'registered',
    value: (i) =>
      i.registered ? `yes, ${i.registration_datetime} (terms ${i.terms_version})` : 'not registered (run `benchmarks register`)',
  },
  { header: 'admin', value: (i) => (i.admin ? 'yes' : 'no') },
  { header: 'token', value: (i) => (i.token === 'login' ? 'stored login' : 'given (--token, BENCHMARKS_TOKEN or config)') },
];

/** Who the token says you are, and what the server knows of you. */
async function identityOf(ctx: Context) {
  const token = await ctx.tokens.get();
  if (!token) throw new AuthError(NOT_LOGGED_IN);
  const claims = jwtClaims(token) ?? {};
  const user = await self(ctx);
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  return {
    server: ctx.apiBase,
    profile: ctx.settings.profile,
    iss: user?.iss ?? str(claims.iss),
    sub: user?.sub ?? str(claims.sub),
    email: user?.email ?? str(claims.email),
    registered: Boolean(user),
    registration_datetime: user?.registration_datetime ?? null,
    terms_version: user?.terms_version ?? null,
    admin: user ? await ctx.client.self.isAdmin() : false,
    token: ctx.tokens.kind === 'login' ? 'login' : 'given',
  };
}

const userColumns: Column<User>[] = [
  { header: 'iss', value: (u) => u.iss },
  { header: 'sub', value: (u) => u.sub },
  { header: 'email', value: (u) => u.email },
  { header: 'registration_datetime', value: (u) => u.registration_datetime },
  { header: 'terms_version', value: (u) => u.terms_version },
];

async function registerUser(ctx: Context, options: Options): Promise<void> {
  // The user, e-mail included, is data for a person: --quiet (a CI log) prints nothing.
  const show = (user: User) => {
    if (!ctx.settings.quiet) ctx.printItem(user, userColumns);
  };
  if (!(await ctx.tokens.get())) throw new AuthError('Not logged in: run `benchmarks login` or pass --token, then register.');
  const existing = await self(ctx);
  if (existing) {
    ctx.info(`Already registered as ${existing.sub} (terms version ${existing.terms_version}).`);
    return show(existing);
  }
  const config = await ctx.client.call('getAuthConfig');
  const termsUrl = new URL(config.terms_url, `${ctx.apiBase}/`).href;
  const terms = `the terms of use of ${ctx.apiBase.replace(/\/api\/v1$/, '')} (version ${config.terms_version}): ${termsUrl}`;
  if (!options.acceptTerms) {
    if (!ctx.io.isTTY.stdin) throw new UsageError(`Registering means accepting ${terms}. Read them, then pass --accept-terms.`);
    ctx.io.stderr.write(`Registering means accepting ${terms}\n`);
    await confirm(ctx.io, false, 'Do you accept them?', 'Not registered: the terms of use were not accepted.');
  } else {
    ctx.info(`Accepting ${terms}`);
  }
  let user: User;
  try {
    user = await ctx.client.self.register();
    ctx.info(`Registered as ${user.sub}: you can upload now.`);
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    user = await ctx.client.self.get();
    ctx.info(`Already registered as ${user.sub} (terms version ${user.terms_version}).`);
  }
  show(user);
}

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
    .action(runsInContext(login));
  program
    .command('logout')
    .description('Forget the stored login of the profile (and revoke its refresh token)')
    .addHelpText('after', '\nExample:\n  benchmarks logout --profile staging')
    .action(runs(logout));
  program
    .command('whoami')
    .description('Show who you are on the server: identity, registration, administrator or not')
    .addHelpText('after', '\nExample:\n  benchmarks whoami --output json')
    .action(runsInContext(async (ctx) => ctx.printItem(await identityOf(ctx), identityColumns)));
  program
    .command('register')
    .description('Register with the service by accepting its terms of use (needed to upload)')
    .option('--accept-terms', 'accept the terms of use without asking (for scripts)')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks register\n  benchmarks register --accept-terms   # in CI, after reading the terms once',
    )
    .action(runsInContext(registerUser));
  program
    .command('token')
    .description('Print the access token (refreshed if needed), e.g. for curl. Keep it secret.')
    .addHelpText(
      'after',
      '\nExample:\n  curl -H "Authorization: Bearer $(benchmarks token)" https://performance.example.org/api/v1/users/self',
    )
    .action(
      runsInContext(async (ctx) => {
        const token = await ctx.tokens.get();
        if (!token) throw new AuthError(NOT_LOGGED_IN);
        ctx.io.stdout.write(`${token}\n`);
      }),
    );
}
