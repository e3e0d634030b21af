import type { Command } from 'commander';
import { benchmarkColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from '../common.ts';
import { SORT_FIELDS } from './list.ts';

export type Options = WithGlobals<ReviewFilterOptions & { terms: string[] }>;

export function register(program: Command): void {
  const command = group(program, 'benchmarks')
    .command('search')
    .description('Search benchmarks: every term must occur in the image, the tag or the description')
    .argument('<terms...>', 'search terms (case-insensitive)');
  addReviewFilters(command);
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks benchmarks search hpl gpu');
  command.action(runs(run, ['terms']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const request = ctx.client.benchmarks.search({ terms: options.terms, ...reviewQuery(options), ...pageQuery(options) });
    await ctx.printList(request, benchmarkColumns, options);
  });
}
