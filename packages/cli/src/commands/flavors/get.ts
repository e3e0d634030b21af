import type { Command } from 'commander';
import { flavorColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string }>;

export function register(program: Command): void {
  group(program, 'flavors')
    .command('get')
    .description('Show one flavor (any status)')
    .argument('<flavor>', 'id or site/flavor')
    .addHelpText('after', '\nExample:\n  benchmarks flavors get CESGA/c4.large')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).flavor(options.ref);
    ctx.printItem(await ctx.client.flavors.get(id), flavorColumns);
  });
}
