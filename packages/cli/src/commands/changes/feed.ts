import { Option, type Command } from 'commander';
import { changeRecordColumns } from '../../columns.ts';
import { withContext } from '../../context.ts';
import type { ListOptions } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { Resolver } from '../../resolve.ts';
import { sinceOf } from '../changes.ts';
import { addPageOptions, group, pageOf, runs, type WithGlobals } from '../common.ts';

const STATES = ['open', 'acknowledged', 'dismissed', 'gone', 'all'] as const;

export type Options = WithGlobals<
  ListOptions & {
    state?: (typeof STATES)[number];
    direction?: 'regression' | 'improvement';
    benchmark?: string;
    metric?: string;
    watch?: string;
    since?: string;
  }
>;

export function register(program: Command): void {
  const command = group(program, 'changes')
    .command('feed')
    .description("The change records of your watches (an administrator: every watch's), newest first: open ones unless --state says")
    .addOption(new Option('--state <state>', 'records in this state (default open), or all').choices(STATES))
    .addOption(new Option('--direction <direction>', 'only regressions or only improvements').choices(['regression', 'improvement']))
    .option('--benchmark <benchmark>', 'of this benchmark: id or image:tag')
    .option('--metric <path>', 'of this metric, a JSON path such as json.result.score (the json. may be left out)')
    .option('--watch <id>', 'of this watch')
    .option('--since <when>', 'first seen since then: a number of days (30d), a date or a date-time', (v) => sinceOf(v));
  addPageOptions(command)
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks changes feed --direction regression --since 7d\n  benchmarks changes feed --state all --watch 3f0c9d2e-... -o json',
    )
    .action(runs(run));
}

export async function run(options: Options, io: Io): Promise<void> {
  await withContext(options, io, async (ctx) => {
    const benchmark_id = options.benchmark && (await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.benchmark));
    const metric =
      options.metric && (options.metric === 'json' || options.metric.startsWith('json.') ? options.metric : `json.${options.metric}`);
    const query = {
      ...(options.state ? { state: options.state } : {}),
      ...(options.direction ? { direction: options.direction } : {}),
      ...(benchmark_id ? { benchmark_id } : {}),
      ...(metric ? { metric } : {}),
      ...(options.watch ? { watch_id: options.watch } : {}),
      ...(options.since ? { since: options.since } : {}),
      ...pageOf(options),
    };
    await ctx.printList(ctx.client.changes.list(query), changeRecordColumns, options);
  });
}
