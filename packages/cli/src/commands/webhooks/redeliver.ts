import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string; deliveryId: string }>;

export function register(program: Command): void {
  group(program, 'webhooks')
    .command('redeliver')
    .description('Deliver an event again, with the same webhook-id')
    .argument('<id>', 'webhook id')
    .argument('<delivery-id>', 'delivery id, from `benchmarks webhooks deliveries`')
    .addHelpText('after', '\nExample:\n  benchmarks webhooks redeliver 3f0c9d2e-... 7a1b...')
    .action(runs(run, ['id', 'deliveryId']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    await ctx.client.webhooks.redeliver(options.id, options.deliveryId);
    ctx.info(`Delivery ${options.deliveryId} will be attempted again.`);
  });
}
