import type { Command } from 'commander';
import { webhookAttemptColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { addPageOptions, group, pageOf, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<ListOptions & { id: string }>;

export function register(program: Command): void {
  const command = group(program, 'webhooks')
    .command('deliveries')
    .description("List the attempts of a webhook's deliveries, newest first: status, duration, answer")
    .argument('<id>', 'webhook id');
  addPageOptions(command).addHelpText('after', '\nExample:\n  benchmarks webhooks deliveries 3f0c9d2e-... -o json');
  command.action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    await ctx.printList(ctx.client.webhooks.deliveries(options.id, pageOf(options)), webhookAttemptColumns, options);
  });
}
