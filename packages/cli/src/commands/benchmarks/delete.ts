import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addDeleteOptions, checkCanConfirm, deleteItem, type DeleteOptions } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<DeleteOptions & { ref: string }>;

export function register(program: Command): void {
  addDeleteOptions(
    group(program, 'benchmarks')
      .command('delete')
      .description('Delete a benchmark, whatever its status (admin); one with results needs --cascade')
      .argument('<benchmark>', 'id or image:tag'),
    'also delete every result of the benchmark',
  )
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks benchmarks delete ghcr.io/org/bench:1.0\n  benchmarks benchmarks delete ghcr.io/org/bench:1.0 --cascade --yes',
    )
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  checkCanConfirm(io, options, `benchmark ${options.ref}`);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.ref);
    const benchmark = await ctx.client.benchmarks.get(id);
    await deleteItem(ctx, options, `benchmark ${benchmark.name} (${id})`, 'its results', () =>
      ctx.client.benchmarks.delete(id, options.cascade ? { cascade: true } : undefined),
    );
  });
}
