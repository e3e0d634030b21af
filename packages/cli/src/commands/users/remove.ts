import type { Command } from 'commander';
import { confirm, mustBeAbleToAsk } from '../../confirm.ts';
import { withContext } from '../../context.ts';
import { UsageError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ iss?: string; sub?: string; email?: string; yes?: boolean }>;

export function register(program: Command): void {
  group(program, 'users')
    .command('remove')
    .description('Remove the users matching every selector: their email is erased, their uploads kept (admin)')
    .option('--iss <issuer>', 'exact issuer')
    .option('--sub <subject>', 'exact subject')
    .option('--email <email>', 'exact email')
    .option('-y, --yes', 'do not ask for confirmation (needed without a terminal)')
    .addHelpText('after', '\nExample:\n  benchmarks users remove --iss https://aai.example.org --sub 1234 --yes')
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  const selectors = {
    ...(options.iss ? { iss: options.iss } : {}),
    ...(options.sub ? { sub: options.sub } : {}),
    ...(options.email ? { email: options.email } : {}),
  };
  const described = Object.entries(selectors)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  if (!described) throw new UsageError('Say whom to remove with --iss, --sub and/or --email.');
  mustBeAbleToAsk(io, options.yes, `Removing users cannot be undone: pass --yes to remove ${described}.`);
  await confirm(io, options.yes, `Remove every user with ${described}? Their email is erased.`, 'Nothing removed.');
  await withContext(options, io, async (ctx) => {
    await ctx.client.users.remove(selectors);
    ctx.info(`Removed the users with ${described} (if any).`);
  });
}
