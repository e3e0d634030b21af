import type { Command } from 'commander';
import { webhookColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { addPageOptions, group, pageOf, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<ListOptions>;

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
