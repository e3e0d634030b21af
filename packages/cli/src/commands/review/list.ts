import { Option, type Command } from 'commander';
import { NotFoundError } from '@benchmarks/sdk';
import { submitColumns, type Submit } from '../../columns.ts';
import { type Context, withContext } from '../../context.ts';
import { addListOptions, pageQuery, type ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export const KINDS = ['benchmark', 'site', 'flavor', 'tag'] as const;
export type Kind = (typeof KINDS)[number];

export type Options = WithGlobals<ListOptions & { type?: Kind; uploadedBefore?: string; uploadedAfter?: string }>;

export function register(program: Command): void {
  const command = group(program, 'review')
    .command('list')
    .description('List the benchmarks, sites, flavors and tags waiting for review (admin)')
    .addOption(new Option('--type <kind>', 'only this kind').choices(KINDS))
    .option('--uploaded-before <date>', 'uploaded before this date or date-time')
    .option('--uploaded-after <date>', 'uploaded after this date or date-time');
  addListOptions(command, ['upload_datetime', 'resource_type', 'resource_id']).addHelpText(
    'after',
    '\nExamples:\n  benchmarks review list --type site\n  benchmarks review approve site <id>\n  benchmarks sites get <id>    # to look at it first',
  );
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const request = ctx.client.submissions.list({
      ...(options.type ? { resource_type: options.type } : {}),
      ...(options.uploadedBefore ? { upload_before: options.uploadedBefore } : {}),
      ...(options.uploadedAfter ? { upload_after: options.uploadedAfter } : {}),
      ...pageQuery(options),
    });
    const names = new Map<string, string>();
    await ctx.printList(request, submitColumns(names), options, (items) => lookUpNames(ctx, items, names));
  });
}

/** Each item's name, one GET each (an item rejected meanwhile has none). */
async function lookUpNames(ctx: Context, items: Submit[], names: Map<string, string>): Promise<void> {
  const { benchmarks, sites, flavors, tags } = ctx.client;
  const get = { benchmark: benchmarks.get, site: sites.get, flavor: flavors.get, tag: tags.get };
  await Promise.all(
    items.map(async (s) => {
      const item = await get[s.resource_type](s.resource_id).catch((err) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      if (item) names.set(s.resource_id, item.name);
    }),
  );
}
