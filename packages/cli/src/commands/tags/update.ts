import type { Command } from 'commander';
import { tagColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { orNull, requireChanges } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string; name?: string; description?: string }>;

export function register(program: Command): void {
  group(program, 'tags')
    .command('update')
    .description('Change fields of a tag (admin); the others keep their values')
    .argument('<tag>', 'id or name')
    .option('--name <name>', 'new name, unique')
    .option('--description <text>', 'new description ("" clears it)')
    .addHelpText('after', '\nExample:\n  benchmarks tags update nightly --description "run every night by CI"')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  requireChanges(options, ['--name', '--description']);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).tag(options.ref);
    const current = await ctx.client.tags.get(id);
    const updated = await ctx.client.tags.update(id, {
      name: options.name ?? current.name,
      description: orNull(options.description, current.description),
    });
    ctx.info(`Updated tag ${updated.name}.`);
    ctx.printItem(updated, tagColumns);
  });
}
