import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addDeleteOptions, checkCanConfirm, deleteItem, type DeleteOptions } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<DeleteOptions & { ref: string }>;

export function register(program: Command): void {
  addDeleteOptions(
    group(program, 'flavors')
      .command('delete')
      .description('Delete a flavor, whatever its status (admin); one with results needs --cascade')
      .argument('<flavor>', 'id or site/flavor'),
    'also delete every result on the flavor',
  )
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks flavors delete CESGA/c4.large\n  benchmarks flavors delete CESGA/c4.large --cascade --yes',
    )
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  checkCanConfirm(io, options, `flavor ${options.ref}`);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).flavor(options.ref);
    const flavor = await ctx.client.flavors.get(id);
    await deleteItem(ctx, options, `flavor ${flavor.name} (${id})`, 'its results', () =>
      ctx.client.flavors.delete(id, options.cascade ? { cascade: true } : undefined),
    );
  });
}
