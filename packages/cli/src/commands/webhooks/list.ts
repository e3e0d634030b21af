import type { Command } from 'commander';
import { webhookColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import { type ListOptions, positiveInteger } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<ListOptions>;

/** --page, --per-page and --all: these lists have one order, so no --sort. */
export function addPageOptions(command: Command): Command {
  return command
    .option('--page <n>', 'page to show (1-indexed)', positiveInteger('--page'))
    .option('--per-page <n>', 'items per page, 1 to 100 (default 100)', positiveInteger('--per-page', 100))
    .option('--all', 'follow every page and show every item');
}

export const pageOf = (o: ListOptions) => ({
  ...(o.page === undefined ? {} : { page: o.page }),
  ...(o.perPage === undefined ? {} : { per_page: o.perPage }),
});

export function register(program: Command): void {
  const command = group(program, 'webhooks').command('list').description('List your webhook endpoints, oldest first');
  addPageOptions(command).addHelpText('after', '\nExample:\n  benchmarks webhooks list');
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    await ctx.printList(ctx.client.webhooks.list(pageOf(options)), webhookColumns, options);
  });
}
