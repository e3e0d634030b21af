import type { Command } from 'commander';
import { watchColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addPageOptions, group, pageOf, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<ListOptions & { benchmark?: string }>;

export function register(program: Command): void {
  const command = group(program, 'watch')
    .command('list')
    .description("List your watches (an administrator: everyone's), newest first")
    .option('--benchmark <benchmark>', 'only the watches of this benchmark: id or image:tag');
  addPageOptions(command).addHelpText('after', '\nExample:\n  benchmarks watch list --benchmark ghcr.io/org/bench:1.0');
  command.action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const benchmark_id = options.benchmark && (await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.benchmark));
    await ctx.printList(ctx.client.watches.list({ ...(benchmark_id ? { benchmark_id } : {}), ...pageOf(options) }), watchColumns, options);
  });
}
