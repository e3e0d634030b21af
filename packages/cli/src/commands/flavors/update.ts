import type { Command } from 'commander';
import { flavorColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { orNull, requireChanges } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string; name?: string; description?: string }>;

export function register(program: Command): void {
  group(program, 'flavors')
    .command('update')
    .description('Change fields of a flavor (admin); its site and the other fields stay')
    .argument('<flavor>', 'id or site/flavor')
    .option('--name <name>', 'new name, unique within the site')
    .option('--description <text>', 'new description ("" clears it)')
    .addHelpText('after', '\nExample:\n  benchmarks flavors update CESGA/c4.large --description "4 vCPU, 16 GiB, NVMe"')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  requireChanges(options, ['--name', '--description']);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).flavor(options.ref);
    const current = await ctx.client.flavors.get(id);
    const updated = await ctx.client.flavors.update(id, {
      name: options.name ?? current.name,
      description: orNull(options.description, current.description),
    });
    ctx.info(`Updated flavor ${updated.name}.`);
    ctx.printItem(updated, flavorColumns);
  });
}
