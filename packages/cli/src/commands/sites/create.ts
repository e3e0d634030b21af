import type { Command } from 'commander';
import { siteColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ name: string; address: string; description?: string }>;

export function register(program: Command): void {
  group(program, 'sites')
    .command('create')
    .description('Submit a site for review (approved at once when an administrator submits it)')
    .argument('<name>', 'institution name, unique')
    .requiredOption('--address <address>', 'physical or virtual address')
    .option('--description <text>', 'short description')
    .addHelpText('after', '\nExample:\n  benchmarks sites create CESGA --address "Santiago de Compostela, Spain"')
    .action(runs(run, ['name']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const created = await ctx.client.sites.create({
      name: options.name,
      address: options.address,
      description: options.description ?? null,
    });
    ctx.info(`Created site ${created.name} (${created.status === 'approved' ? 'approved' : 'waiting for review'}).`);
    ctx.printItem(created, siteColumns);
  });
}
