import type { Command } from 'commander';
import { tagColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ name: string; description?: string }>;

export function register(program: Command): void {
  group(program, 'tags')
    .command('create')
    .description('Submit a tag for review (approved at once when an administrator submits it)')
    .argument('<name>', 'tag name, unique')
    .option('--description <text>', 'what the label means')
    .addHelpText('after', '\nExample:\n  benchmarks tags create gpu --description "ran on a GPU flavor"')
    .action(runs(run, ['name']));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const created = await ctx.client.tags.create({ name: options.name, description: options.description ?? null });
    ctx.info(`Created tag ${created.name} (${created.status === 'approved' ? 'approved' : 'waiting for review'}).`);
    ctx.printItem(created, tagColumns);
  });
}
