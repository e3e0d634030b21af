import type { Command } from 'commander';
import { benchmarkColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string }>;

export function register(program: Command): void {
  group(program, 'benchmarks')
    .command('get')
    .description('Show one benchmark, with its JSON Schema (any status)')
    .argument('<benchmark>', 'id or image:tag')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks benchmarks get ghcr.io/org/bench:1.0\n  benchmarks benchmarks get 3f0c... --output json | jq .json_schema',
    )
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.ref);
    const benchmark = await ctx.client.benchmarks.get(id);
    ctx.printItem(benchmark, [...benchmarkColumns, { header: 'json_schema', value: (b) => b.json_schema }]);
  });
}
