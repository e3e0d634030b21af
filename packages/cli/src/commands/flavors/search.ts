import type { Command } from 'commander';
import { flavorColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from '../common.ts';
import { SORT_FIELDS } from './list.ts';

export type Options = WithGlobals<ReviewFilterOptions & { site: string; terms: string[] }>;

export function register(program: Command): void {
  const command = group(program, 'flavors')
    .command('search')
    .description("Search a site's flavors: every term must occur in the name or the description")
    .argument('<site>', 'site id or name')
    .argument('<terms...>', 'search terms (case-insensitive)');
  addReviewFilters(command);
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks flavors search CESGA gpu');
  command.action(runs(run, ['site', 'terms']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const siteId = await new Resolver(ctx.client, { anyStatus: true }).site(options.site);
    const request = ctx.client.flavors.search(siteId, { terms: options.terms, ...reviewQuery(options), ...pageQuery(options) });
    await ctx.printList(request, flavorColumns, options);
  });
}
