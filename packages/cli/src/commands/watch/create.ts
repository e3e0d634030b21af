import type { Command } from 'commander';
import type { Body } from '@benchmarks/sdk';
import { watchColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { Io } from '../../io.ts';
import { addSeriesOptions, checkSeries, type SeriesOptions, seriesQuery } from '../changes.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<SeriesOptions & { staleAfter?: string }>;

export function register(program: Command): void {
  const command = group(program, 'watch')
    .command('create')
    .description('Watch a series: the server keeps it segmented, each change point a record (the options of `benchmarks changes`)');
  addSeriesOptions(command, true)
    .option('--stale-after <duration>', 'a group without a new result for this long is stale (series.stale): 90m, 12h, 7d, 2w')
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks watch create --benchmark ghcr.io/org/bench:1.0 --metric json.result.score\n' +
        '  benchmarks watch create --benchmark ghcr.io/org/bench:1.0 --metric result.seconds --flavor CESGA/hpc --stale-after 7d',
    )
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  checkSeries(options);
  await withContext(options, io, async (ctx) => {
    // The filters are strings here (--filter), which is what a watch keeps.
    const series = (await seriesQuery(ctx, options)) as Body<'createWatch'>;
    const created = await ctx.client.watches.create({ ...series, ...(options.staleAfter ? { stale_after: options.staleAfter } : {}) });
    ctx.info(`Created watch ${created.id}: \`benchmarks changes feed --watch ${created.id}\` lists its change records.`);
    ctx.printItem(created, watchColumns);
  });
}
