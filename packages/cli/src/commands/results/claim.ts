import type { Command } from 'commander';
import { claimColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string; message: string }>;

export function register(program: Command): void {
  group(program, 'results')
    .command('claim')
    .description('File a claim against a result: it is hidden until an administrator reviews the claim')
    .argument('<id>', 'result id')
    .requiredOption('-m, --message <text>', 'what is wrong with the result')
    .addHelpText('after', '\nExample:\n  benchmarks results claim 3f0c9d2e-... --message "The score is ten times the hardware peak"')
    .action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const claim = await ctx.client.results.claim(options.id, options.message);
    ctx.info(`Claim filed: result ${options.id} is hidden until an administrator reviews it.`);
    ctx.printItem(claim, claimColumns);
  });
}
