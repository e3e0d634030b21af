import type { Command } from 'commander';
import { tagColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string }>;

export function register(program: Command): void {
  group(program, 'tags')
    .command('get')
    .description('Show one tag (any status)')
    .argument('<tag>', 'id or name')
    .addHelpText('after', '\nExample:\n  benchmarks tags get gpu')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).tag(options.ref);
    ctx.printItem(await ctx.client.tags.get(id), tagColumns);
  });
}
