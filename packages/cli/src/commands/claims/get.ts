import type { Command } from 'commander';
import { claimColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string }>;

export function register(program: Command): void {
  group(program, 'claims')
    .command('get')
    .description('Show one claim (admin)')
    .argument('<id>', 'claim id')
    .addHelpText('after', '\nExample:\n  benchmarks claims get 3f0c9d2e-...    # then `benchmarks results get <resource_id>`')
    .action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    ctx.printItem(await ctx.client.claims.get(options.id), claimColumns);
  });
}
