import type { Command } from 'commander';
import { flavorColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ site: string; name: string; description?: string }>;

export function register(program: Command): void {
  group(program, 'flavors')
    .command('create')
    .description('Submit a flavor of a site for review (the site may itself be on review)')
    .argument('<site>', 'site id or name')
    .argument('<name>', 'flavor name, unique within the site')
    .option('--description <text>', 'short description, e.g. "4 vCPU, 16 GiB"')
    .addHelpText('after', '\nExample:\n  benchmarks flavors create CESGA c4.large --description "4 vCPU, 16 GiB"')
    .action(runs(run, ['site', 'name']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const siteId = await new Resolver(ctx.client, { anyStatus: true }).site(options.site);
    const created = await ctx.client.flavors.create(siteId, { name: options.name, description: options.description ?? null });
    ctx.info(`Created flavor ${created.name} (${created.status === 'approved' ? 'approved' : 'waiting for review'}).`);
    ctx.printItem(created, flavorColumns);
  });
}
