import type { Command } from 'commander';
import { tagColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from '../common.ts';

export const SORT_FIELDS = ['name', 'description', 'status', 'id'];

export type Options = WithGlobals<ReviewFilterOptions & { name?: string }>;

export function register(program: Command): void {
  const command = group(program, 'tags')
    .command('list')
    .description('List tags (approved ones unless --status says otherwise)')
    .option('--name <name>', 'exact name');
  addReviewFilters(command);
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks tags list --output csv > tags.csv');
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const request = ctx.client.tags.list({
      ...(options.name ? { name: options.name } : {}),
      ...reviewQuery(options),
      ...pageQuery(options),
    });
    await ctx.printList(request, tagColumns, options);
  });
}
