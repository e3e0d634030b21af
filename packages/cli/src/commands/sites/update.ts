import type { Command } from 'commander';
import { siteColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { orNull, requireChanges } from '../catalogue.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ ref: string; name?: string; address?: string; description?: string }>;

export function register(program: Command): void {
  group(program, 'sites')
    .command('update')
    .description('Change fields of a site (admin); the others keep their values')
    .argument('<site>', 'id or name')
    .option('--name <name>', 'new name, unique')
    .option('--address <address>', 'new address')
    .option('--description <text>', 'new description ("" clears it)')
    .addHelpText('after', '\nExample:\n  benchmarks sites update CESGA --address "Avenida de Vigo, Santiago de Compostela, Spain"')
    .action(runs(run, ['ref']));
}

export async function run(options: Options, io: Io): Promise<void> {
  requireChanges(options, ['--name', '--address', '--description']);
  await withContext(options, io, async (ctx) => {
    const id = await new Resolver(ctx.client, { anyStatus: true }).site(options.ref);
    const current = await ctx.client.sites.get(id);
    const updated = await ctx.client.sites.update(id, {
      name: options.name ?? current.name,
      address: options.address ?? current.address,
      description: orNull(options.description, current.description),
    });
    ctx.info(`Updated site ${updated.name}.`);
    ctx.printItem(updated, siteColumns);
  });
}
