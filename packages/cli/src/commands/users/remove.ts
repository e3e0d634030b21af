import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import { CliError, UsageError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../shared.ts';

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
  const selectors = { ...(options.iss ? { iss: options.iss } : {}), ...(options.sub ? { sub: options.sub } : {}), ...(options.email ? { email: options.email } : {}) };
  const described = Object.entries(selectors).map(([k, v]) => `${k}=${v}`).join(' ');
  if (!described) throw new UsageError('Say whom to remove with --iss, --sub and/or --email.');
  if (!options.yes) {
    if (!io.isTTY.stdin) throw new UsageError(`Removing users cannot be undone: pass --yes to remove ${described}.`);
    const rl = createInterface({ input: io.stdin, output: io.stderr as NodeJS.WritableStream, terminal: false });
    const answer = await rl.question(`Remove every user with ${described}? Their email is erased. [y/N] `).finally(() => rl.close());
    if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('Nothing removed.');
  }
  await withContext(options, io, async (ctx) => {
    await ctx.client.users.remove(selectors);
    ctx.info(`Removed the users with ${described} (if any).`);
  });
}
