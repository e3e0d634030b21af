import type { Command } from 'commander';
import { resultColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string }>;

export function register(program: Command): void {
  group(program, 'results')
    .command('get')
    .description('Show one result, hidden ones included')
    .argument('<id>', 'result id')
    .addHelpText('after', '\nExample:\n  benchmarks results get 3f0c9d2e-... --output json | jq .json')
    .action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    ctx.printItem(await ctx.client.results.get(options.id), resultColumns);
  });
}
