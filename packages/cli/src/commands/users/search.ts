import type { Command } from 'commander';
import { userColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery, type ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { SORT_FIELDS } from './list.ts';

export type Options = WithGlobals<ListOptions & { terms: string[] }>;

export function register(program: Command): void {
  const command = group(program, 'users')
    .command('search')
    .description('Search users: every term must occur in the email or the subject (admin)')
    .argument('<terms...>', 'search terms (case-insensitive)');
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks users search example.org');
  command.action(runs(run, ['terms']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    await ctx.printList(ctx.client.users.search({ terms: options.terms, ...pageQuery(options) }), userColumns, options);
  });
}
