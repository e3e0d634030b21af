import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { ConflictError, NotFoundError, type Reply } from '@benchmarks/sdk';
import { withContext } from '../../context.ts';
import { AuthError, CliError, UsageError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import type { Column } from '../../output.ts';
import { runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ acceptTerms?: boolean }>;
type User = Reply<'getSelf'>;

const columns: Column<User>[] = [
  { header: 'iss', value: (u) => u.iss },
  { header: 'sub', value: (u) => u.sub },
  { header: 'email', value: (u) => u.email },
  { header: 'registration_datetime', value: (u) => u.registration_datetime },
  { header: 'terms_version', value: (u) => u.terms_version },
];

export function register(program: Command): void {
  program
    .command('register')
    .description('Register with the service by accepting its terms of use (needed to upload)')
    .option('--accept-terms', 'accept the terms of use without asking (for scripts)')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks register\n  benchmarks register --accept-terms   # in CI, after reading the terms once',
    )
    .action(runs(run));
}

async function ask(io: Io, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream, terminal: false });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    // The user, e-mail included, is data for a person: --quiet (a CI log) prints nothing.
    const show = (user: User) => {
      if (!ctx.settings.quiet) ctx.printItem(user, columns);
    };
    if (!(await ctx.tokens.get())) throw new AuthError('Not logged in: run `benchmarks login` or pass --token, then register.');
    const existing = await ctx.client.self.get().catch((err) => {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    });
    if (existing) {
      ctx.info(`Already registered as ${existing.sub} (terms version ${existing.terms_version}).`);
      return show(existing);
    }
    const config = await ctx.client.call('getAuthConfig');
    const termsUrl = new URL(config.terms_url, `${ctx.apiBase}/`).href;
    const terms = `the terms of use of ${ctx.apiBase.replace(/\/api\/v1$/, '')} (version ${config.terms_version}): ${termsUrl}`;
    if (!options.acceptTerms) {
      if (!io.isTTY.stdin) throw new UsageError(`Registering means accepting ${terms}. Read them, then pass --accept-terms.`);
      io.stderr.write(`Registering means accepting ${terms}\n`);
      if (!(await ask(io, 'Do you accept them? [y/N] '))) throw new CliError('Not registered: the terms of use were not accepted.');
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
  });
}
