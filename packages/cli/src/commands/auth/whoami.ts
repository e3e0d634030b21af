import type { Command } from 'commander';
import { NotFoundError, type Reply } from '@benchmarks/sdk';
import { jwtClaims } from '../../auth.ts';
import { withContext } from '../../context.ts';
import { AuthError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import type { Column } from '../../output.ts';
import { runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<object>;

export interface Identity {
  server: string;
  profile: string;
  iss: string | null;
  sub: string | null;
  email: string | null;
  registered: boolean;
  registration_datetime: string | null;
  terms_version: string | null;
  admin: boolean;
  token: 'login' | 'given';
}

const columns: Column<Identity>[] = [
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

export function register(program: Command): void {
  program
    .command('whoami')
    .description('Show who you are on the server: identity, registration, administrator or not')
    .addHelpText('after', '\nExample:\n  benchmarks whoami --output json')
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const token = await ctx.tokens.get();
    if (!token) throw new AuthError('Not logged in: run `benchmarks login` or pass --token.');
    const claims = jwtClaims(token) ?? {};
    let user: Reply<'getSelf'> | undefined;
    try {
      user = await ctx.client.self.get();
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    const admin = user ? await ctx.client.self.isAdmin() : false;
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    const identity: Identity = {
      server: ctx.apiBase,
      profile: ctx.settings.profile,
      iss: user?.iss ?? str(claims.iss),
      sub: user?.sub ?? str(claims.sub),
      email: user?.email ?? str(claims.email),
      registered: Boolean(user),
      registration_datetime: user?.registration_datetime ?? null,
      terms_version: user?.terms_version ?? null,
      admin,
      token: ctx.tokens.kind === 'login' ? 'login' : 'given',
    };
    ctx.printItem(identity, columns);
  });
}
