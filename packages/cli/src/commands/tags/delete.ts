import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { addDeleteOptions, checkCanConfirm, deleteItem, type DeleteOptions } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<DeleteOptions & { ref: string }>;

export function register(program: Command): void {
  addDeleteOptions(
    group(program, 'tags')
      .command('delete')
      .description('Delete a tag, whatever its status (admin); one carried by results needs --cascade')
      .argument('<tag>', 'id or name'),
    'also remove the tag from the results that carry it (the results stay)',
  )
    .addHelpText('after', '\nExamples:\n  benchmarks tags delete nightly\n  benchmarks tags delete nightly --cascade --yes')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  checkCanConfirm(io, options, `tag ${options.ref}`);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).tag(options.ref);
    const tag = await ctx.client.tags.get(id);
    await deleteItem(ctx, options, `tag ${tag.name} (${id})`, 'its links to results', () =>
      ctx.client.tags.delete(id, options.cascade ? { cascade: true } : undefined),
    );
  });
}
