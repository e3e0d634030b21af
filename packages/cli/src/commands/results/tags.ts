import type { Command } from 'commander';
import { withContext } from '../../context.ts';
import { UsageError } from '../../errors.ts';
import { repeatable } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { resultColumns } from '../../columns.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<{ id: string; tag?: string[]; clear?: boolean }>;

/** `results tags set <id> --tag ...`: replaces the tags of a result. */
export function register(program: Command): void {
  const tags = group(program, 'results').command('tags').description('Tags of a result');
  tags
    .command('set')
    .description('Replace the tags of a result you uploaded (or any, as an administrator)')
    .argument('<id>', 'result id')
    .option('--tag <tag>', 'tag id or name; repeat for several', repeatable)
    .option('--clear', 'remove every tag')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks results tags set 3f0c9d2e-... --tag gpu --tag nightly\n  benchmarks results tags set 3f0c9d2e-... --clear',
    )
    .action(runs(run, ['id']));
}

export async function run(options: Options, io: Io): Promise<void> {
  const refs = options.tag ?? [];
  if (refs.length === 0 && !options.clear)
    throw new UsageError('Give the new tags with --tag (repeatable), or --clear to remove them all.');
  if (refs.length > 0 && options.clear) throw new UsageError('--clear and --tag exclude each other.');
  await withContext(options, io, async (ctx) => {
    const resolver = new Resolver(ctx.client);
    const ids = await Promise.all(refs.map((ref) => resolver.tag(ref)));
    await ctx.client.results.setTags(options.id, ids);
    ctx.info(ids.length ? `Result ${options.id} now has ${ids.length} tag(s).` : `Result ${options.id} has no tags now.`);
    ctx.printItem(await ctx.client.results.get(options.id), resultColumns);
  });
}
