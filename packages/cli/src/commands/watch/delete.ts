import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { checkCanConfirm, deleteItem } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string; yes?: boolean }>;

export function register(program: Command): void {
  group(program, 'watch')
    .command('delete')
    .description('Delete a watch and its change records (its owner or an administrator)')
    .argument('<id>', 'watch id, from `benchmarks watch list`')
    .option('-y, --yes', 'do not ask for confirmation (needed without a terminal)')
    .addHelpText('after', '\nExample:\n  benchmarks watch delete 3f0c9d2e-... --yes')
    .action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  checkCanConfirm(io, options, `watch ${options.id}`);
  await withContext(options, io, async (ctx) => {
    const watch = await ctx.client.watches.get(options.id);
    await deleteItem(ctx, options, `watch ${watch.id} (${watch.metric}) with its change records`, () =>
      ctx.client.watches.delete(watch.id),
    );
  });
}
