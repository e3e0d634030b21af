import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import { AuthError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<object>;

export function register(program: Command): void {
  program
    .command('token')
    .description('Print the access token (refreshed if needed), e.g. for curl. Keep it secret.')
    .addHelpText(
      'after',
      '\nExample:\n  curl -H "Authorization: Bearer $(benchmarks token)" https://performance.example.org/api/v1/users/self',
    )
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const token = await ctx.tokens.get();
    if (!token) throw new AuthError('Not logged in: run `benchmarks login` or pass --token.');
    io.stdout.write(`${token}\n`);
  });
}
