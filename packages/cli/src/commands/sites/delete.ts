import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addDeleteOptions, checkCanConfirm, deleteItem, type DeleteOptions } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<DeleteOptions & { ref: string }>;

export function register(program: Command): void {
  addDeleteOptions(
    group(program, 'sites')
      .command('delete')
      .description('Delete a site, whatever its status (admin); one with flavors or results needs --cascade')
      .argument('<site>', 'id or name'),
    'also delete its flavors and every result at the site',
  )
    .addHelpText('after', '\nExamples:\n  benchmarks sites delete CESGA\n  benchmarks sites delete CESGA --cascade --yes')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  checkCanConfirm(io, options, `site ${options.ref}`);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).site(options.ref);
    const site = await ctx.client.sites.get(id);
    await deleteItem(ctx, options, `site ${site.name} (${id})`, 'its flavors and results', () =>
      ctx.client.sites.delete(id, options.cascade ? { cascade: true } : undefined),
    );
  });
}
