import type { Command } from 'commander';
import { siteColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from '../common.ts';

export const SORT_FIELDS = ['name', 'address', 'description', 'status', 'upload_datetime', 'id'];

export type Options = WithGlobals<ReviewFilterOptions & { name?: string; address?: string }>;

export function register(program: Command): void {
  const command = group(program, 'sites')
    .command('list')
    .description('List sites (approved ones unless --status says otherwise)')
    .option('--name <name>', 'exact name')
    .option('--address <address>', 'exact address');
  addReviewFilters(command);
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks sites list --status on_review');
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const request = ctx.client.sites.list({
      ...(options.name ? { name: options.name } : {}),
      ...(options.address ? { address: options.address } : {}),
      ...reviewQuery(options),
      ...pageQuery(options),
    });
    await ctx.printList(request, siteColumns, options);
  });
}
