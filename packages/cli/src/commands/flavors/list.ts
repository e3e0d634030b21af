import type { Command } from 'commander';
import { flavorColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { addListOptions, pageQuery } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addReviewFilters, group, reviewQuery, runs, type ReviewFilterOptions, type WithGlobals } from '../common.ts';

export const SORT_FIELDS = ['name', 'description', 'status', 'upload_datetime', 'site_id', 'id'];

export type Options = WithGlobals<ReviewFilterOptions & { site: string; name?: string }>;

export function register(program: Command): void {
  const command = group(program, 'flavors')
    .command('list')
    .description("List a site's flavors (approved ones unless --status says otherwise)")
    .argument('<site>', 'site id or name')
    .option('--name <name>', 'exact flavor name');
  addReviewFilters(command);
  addListOptions(command, SORT_FIELDS).addHelpText('after', '\nExample:\n  benchmarks flavors list CESGA');
  command.action(runs(run, ['site']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const siteId = await new Resolver(ctx.client, { anyStatus: true }).site(options.site);
    const request = ctx.client.flavors.list(siteId, {
      ...(options.name ? { name: options.name } : {}),
      ...reviewQuery(options),
      ...pageQuery(options),
    });
    await ctx.printList(request, flavorColumns, options);
  });
}
