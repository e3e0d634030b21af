/** `watch create|list|delete`: series the server keeps segmented, each change point a record. */
import type { Body } from '@benchmarks/sdk';
import type { Command } from 'commander';
import { watchColumns } from '../columns.ts';
import { withContext } from '../context.ts';
import { addListOptions, pageQuery, type ListOptions } from '../global-options.ts';
import { Resolver } from '../resolve.ts';
import { checkCanConfirm, deleteItem } from './catalogue.ts';
import { addSeriesOptions, checkSeries, seriesQuery, type SeriesOptions } from './changes.ts';
import { group, runs, runsInContext, type WithGlobals } from './common.ts';

type Options = WithGlobals<SeriesOptions & ListOptions & { staleAfter?: string; id: string; yes?: boolean }>;

export function register(program: Command): void {
  const watch = group(program, 'watch');
  const create = watch
    .command('create')
    .description('Watch a series: the server keeps it segmented, each change point a record (the options of `benchmarks changes`)');
  addSeriesOptions(create, true)
    .option('--stale-after <duration>', 'a group without a new result for this long is stale (series.stale): 90m, 12h, 7d, 2w')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks watch create --benchmark ghcr.io/org/bench:1.0 --metric json.result.score\n' +
        '  benchmarks watch create --benchmark ghcr.io/org/bench:1.0 --metric result.seconds --flavor CESGA/hpc --stale-after 7d',
    )
    .action(
      runs(async (options: Options, io) => {
        checkSeries(options);
        await withContext(options, io, async (ctx) => {
          // The filters are strings here (--filter), which is what a watch keeps.
          const series = (await seriesQuery(ctx, options)) as Body<'createWatch'>;
          const stale = options.staleAfter ? { stale_after: options.staleAfter } : {};
          const created = await ctx.client.watches.create({ ...series, ...stale });
          ctx.info(`Created watch ${created.id}: \`benchmarks changes feed --watch ${created.id}\` lists its change records.`);
          ctx.printItem(created, watchColumns);
        });
      }),
    );
  const list = watch
    .command('list')
    .description("List your watches (an administrator: everyone's), newest first")
    .option('--benchmark <benchmark>', 'only the watches of this benchmark: id or image:tag');
  addListOptions(list)
    .addHelpText('after', '\nExample:\n  benchmarks watch list --benchmark ghcr.io/org/bench:1.0')
    .action(
      runsInContext(async (ctx, options: Options) => {
        const benchmark_id = options.benchmark && (await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.benchmark));
        await ctx.printList(
          ctx.client.watches.list({ ...(benchmark_id ? { benchmark_id } : {}), ...pageQuery(options) }),
          watchColumns,
          options,
        );
      }),
    );
  watch
    .command('delete')
    .description('Delete a watch and its change records (its owner or an administrator)')
    .argument('<id>', 'watch id, from `benchmarks watch list`')
    .option('-y, --yes', 'do not ask for confirmation (needed without a terminal)')
    .addHelpText('after', '\nExample:\n  benchmarks watch delete 3f0c9d2e-... --yes')
    .action(
      runs(async (options: Options, io) => {
        checkCanConfirm(io, options, `watch ${options.id}`);
        await withContext(options, io, async (ctx) => {
          const { id, metric } = await ctx.client.watches.get(options.id);
          await deleteItem(ctx, options, `watch ${id} (${metric}) with its change records`, () => ctx.client.watches.delete(id));
        });
      }),
    );
}
