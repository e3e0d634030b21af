import type { Command } from 'commander';
import { userColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery, type ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export const SORT_FIELDS = ['iss', 'sub', 'email', 'registration_datetime'];

export type Options = WithGlobals<ListOptions & { iss?: string; sub?: string; email?: string }>;

export function register(program: Command): void {
  const command = group(program, 'users')
    .command('list')
    .description('List registered users, removed ones included (admin)')
    .option('--iss <issuer>', 'exact issuer')
    .option('--sub <subject>', 'exact subject')
    .option('--email <email>', 'exact email');
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks users list --email someone@example.org');
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const request = ctx.client.users.list({
      ...(options.iss ? { iss: options.iss } : {}),
      ...(options.sub ? { sub: options.sub } : {}),
      ...(options.email ? { email: options.email } : {}),
      ...pageQuery(options),
    });
    await ctx.printList(request, userColumns, options);
  });
}
