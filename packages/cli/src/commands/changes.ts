import { InvalidArgumentError, Option, type Command } from 'commander';
import { ApiError, type ChangesQuery, type Reply } from '@benchmarks/sdk';
import { renderChangesSvg } from '@benchmarks/sdk/changes-chart';
import { changeRecordColumns } from '../columns.ts';
import { groupName, lookOf, num, paint, percentChange as percent, shorten, type Look } from '../compare/look.ts';
import { changesReport } from '../compare/reports.ts';
import type { Context } from '../context.ts';
import { CliError, UsageError } from '../errors.ts';
import { addListOptions, pageQuery, positiveInteger, type ListOptions } from '../global-options.ts';
import type { Io } from '../io.ts';
import { renderJson, renderNdjson } from '../output.ts';
import { Resolver } from '../resolve.ts';
import { addSummaryOption, appendSummary, explorerUrl, summaryFile, type SummaryOption } from '../summary.ts';
import { benchmarkName, withChart, writeOutput } from './compare.ts';
import { group, runs, runsInContext, type WithGlobals } from './common.ts';
import { addFilterOptions, filterQuery, metricPath, type FilterOptions } from './results/filters.ts';

type Changes = Reply<'findChanges'>;
type Group = Changes['groups'][number];

/** The parameters of a series (`changes`, `watch create`): those of GET /results:changes but changed_after. */
export type SeriesOptions = FilterOptions & {
  benchmark: string;
  metric: string;
  by?: 'flavor' | 'site';
  better?: 'higher' | 'lower';
  maxPvalue?: number;
  minMagnitude?: number;
  minSize?: number;
};

export type Options = WithGlobals<
  SeriesOptions & {
    since?: string;
    failOn?: 'regression' | 'any';
    out?: string;
    summary?: SummaryOption;
  }
>;

const DAY_MS = 86_400_000;

/** `30d` (days before now) or a date / date-time with a zone, as the server's `changed_after`. */
export function sinceOf(value: string, now = Date.now()): string {
  const days = /^(\d{1,5})d$/.exec(value);
  if (days) return new Date(now - Number(days[1]) * DAY_MS).toISOString();
  const date = /^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(date) || Number.isNaN(Date.parse(date))) {
    throw new InvalidArgumentError('--since must be a number of days (30d), a date (2026-05-01) or a date-time with a zone.');
  }
  return value;
}

function fraction(name: string, low: number, high: number, inclusiveLow: boolean) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || (inclusiveLow ? n < low : n <= low) || n >= high) {
      throw new InvalidArgumentError(
        `${name} must be a number ${inclusiveLow ? 'from' : 'above'} ${low} ${high === 1e300 ? 'up' : `below ${high}`}.`,
      );
    }
    return n;
  };
}

/**
 * `--benchmark`, `--metric`, `--by`, the filters, `--better` and the segmentation's thresholds.
 * `required`: commander checks the two required options (`changes` checks them itself, in
 * {@link checkSeries}: commander would require them of its subcommands too).
 */
export function addSeriesOptions(command: Command, required: boolean): Command {
  const option = (flags: string, description: string) =>
    required ? command.requiredOption(flags, description) : command.option(flags, description);
  option('--benchmark <benchmark>', 'benchmark id or image:tag');
  option('--metric <path>', 'the number followed, a JSON path such as json.result.score (the json. may be left out)');
  command.addOption(new Option('--by <group>', 'one series per flavor (default) or per site').choices(['flavor', 'site']));
  return addFilterOptions(command)
    .addOption(
      new Option('--better <direction>', "which direction is better (default: the metric's x-better in the schema, else higher)").choices([
        'higher',
        'lower',
      ]),
    )
    .option('--max-pvalue <p>', "Welch's p-value a change needs at most (default 0.001)", fraction('--max-pvalue', 0, 0.5, false))
    .option('--min-magnitude <x>', 'the least relative change of the mean (default 0.02)', fraction('--min-magnitude', 0, 1e300, true))
    .option('--min-size <n>', 'the fewest points of a segment, 2 at least (default 5)', positiveInteger('--min-size', 1_000_000));
}

/** Before anything is asked of the server: the series' options that commander does not check. */
export function checkSeries(options: Partial<SeriesOptions>): void {
  for (const [flag, value] of [
    ['--benchmark <benchmark>', options.benchmark],
    ['--metric <path>', options.metric],
  ] as const) {
    if (value === undefined) throw new UsageError(`required option '${flag}' not specified`);
  }
  if (options.minSize !== undefined && options.minSize < 2) throw new UsageError('--min-size must be 2 or more.');
}

/** The query of the series, names resolved to ids. */
export async function seriesQuery(ctx: Context, options: SeriesOptions): Promise<ChangesQuery> {
  const metric = metricPath(options.metric);
  const benchmark_id = await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.benchmark);
  return {
    ...(await filterQuery(ctx.client, { ...options, benchmark: benchmark_id })),
    benchmark_id,
    metric,
    group_by: options.by,
    better: options.better,
    max_pvalue: options.maxPvalue,
    min_magnitude: options.minMagnitude,
    min_size: options.minSize,
  };
}

const STATES = ['open', 'acknowledged', 'dismissed', 'gone', 'all'] as const;

type RecordOptions = WithGlobals<
  ListOptions & {
    state?: (typeof STATES)[number];
    direction?: 'regression' | 'improvement';
    benchmark?: string;
    metric?: string;
    watch?: string;
    since?: string;
    id: string;
    note?: string;
  }
>;

/** `changes feed`. */
async function listRecords(ctx: Context, options: RecordOptions): Promise<void> {
  const benchmark_id = options.benchmark && (await new Resolver(ctx.client, { anyStatus: true }).benchmark(options.benchmark));
  const metric = options.metric && metricPath(options.metric);
  const query = {
    ...(options.state ? { state: options.state } : {}),
    ...(options.direction ? { direction: options.direction } : {}),
    ...(benchmark_id ? { benchmark_id } : {}),
    ...(metric ? { metric } : {}),
    ...(options.watch ? { watch_id: options.watch } : {}),
    ...(options.since ? { since: options.since } : {}),
    ...pageQuery(options),
  };
  await ctx.printList(ctx.client.changes.list(query), changeRecordColumns, options);
}

type Decision = 'acknowledge' | 'dismiss' | 'reopen';

/** The triage of a change record: each decision's description and what it says once done. */
const DECISIONS: Record<Decision, [description: string, done: string]> = {
  acknowledge: ['Acknowledge a change record as expected: the CI gate passes it', 'Acknowledged'],
  dismiss: ['Dismiss a change record as not real: the CI gate passes it', 'Dismissed'],
  reopen: ['Reopen an acknowledged or dismissed change record: the CI gate fails on it again', 'Reopened'],
};

export function register(program: Command): void {
  const command = group(program, 'changes')
    .description("Find change points over time in one metric of a benchmark's results, per flavor (or site): regressions and improvements")
    // `changes feed --benchmark X`: the options after a subcommand's name are the subcommand's.
    .enablePositionalOptions();
  addSeriesOptions(command, false)
    .option('--since <when>', 'report only changes since then: a number of days (30d), a date or a date-time', (v) => sinceOf(v))
    .addOption(
      new Option('--fail-on <kind>', 'exit 1 when a reported change is a regression (or any change), naming it: for CI jobs').choices([
        'regression',
        'any',
      ]),
    )
    .option('--out <file>', 'write the output to this file instead of stdout');
  addSummaryOption(command, 'the verdict, the change points, a link to the explorer').addHelpText(
    'after',
    `
--output: table (the default, also when piped: the change points of each group, with a sparkline of its
segments' means on a terminal), json (the server's answer), csv (one row per change point) or svg (small
multiples, as the server draws them).

Examples:
  benchmarks changes --benchmark ghcr.io/org/bench:1.0 --metric json.result.score
  benchmarks changes --benchmark ghcr.io/org/bench:1.0 --metric result.seconds --since 30d --fail-on regression
  benchmarks changes --benchmark ghcr.io/org/bench:1.0 --metric result.seconds --fail-on regression --summary
  benchmarks changes --benchmark ghcr.io/org/bench:1.0 --metric json.result.score --output svg --out changes.svg`,
  );
  command.action(runs(run));
  const feed = command
    .command('feed')
    .description("The change records of your watches (an administrator: every watch's), newest first: open ones unless --state says")
    .addOption(new Option('--state <state>', 'records in this state (default open), or all').choices(STATES))
    .addOption(new Option('--direction <direction>', 'only regressions or only improvements').choices(['regression', 'improvement']))
    .option('--benchmark <benchmark>', 'of this benchmark: id or image:tag')
    .option('--metric <path>', 'of this metric, a JSON path such as json.result.score (the json. may be left out)')
    .option('--watch <id>', 'of this watch')
    .option('--since <when>', 'first seen since then: a number of days (30d), a date or a date-time', (v) => sinceOf(v));
  addListOptions(feed)
    .addHelpText(
      'after',
      '\nExamples:\n  benchmarks changes feed --direction regression --since 7d\n  benchmarks changes feed --state all --watch 3f0c9d2e-... -o json',
    )
    .action(runsInContext(listRecords));
  for (const decision of Object.keys(DECISIONS) as Decision[]) {
    command
      .command(decision)
      .description(`${DECISIONS[decision][0]} (its watch's owner or an administrator)`)
      .argument('<id>', 'change record id, from `benchmarks changes feed`')
      .option('--note <text>', 'why, kept with who decided and when (at most 1000 characters)')
      .addHelpText('after', `\nExample:\n  benchmarks changes ${decision} 3f0c9d2e-... --note 'new compiler, expected'`)
      .action(
        runsInContext(async (ctx, options: RecordOptions) => {
          const record = await ctx.client.changes[decision](options.id, options.note);
          ctx.info(`${DECISIONS[decision][1]} change ${record.id}.`);
          ctx.printItem(record, changeRecordColumns);
        }),
      );
  }
}

const SPARKS = '▁▂▃▄▅▆▇█';

/** The series' segment means over its time span, one character per column (on a terminal only). */
export function sparkline(group: Group, width: number): string {
  const means = group.segments.map((s) => s.mean);
  const lo = Math.min(...means);
  const hi = Math.max(...means);
  const first = Date.parse(`${group.first}Z`);
  const last = Date.parse(`${group.last}Z`);
  let out = '';
  for (let i = 0; i < width; i++) {
    const t = first + ((last - first) * (i + 0.5)) / width;
    const segment = group.segments.find((s) => Date.parse(`${s.to}Z`) >= t) ?? group.segments.at(-1)!;
    const at = hi > lo ? (segment.mean / 2 - lo / 2) / (hi / 2 - lo / 2) : 0.5;
    out += SPARKS[Math.min(SPARKS.length - 1, Math.max(0, Math.round(at * (SPARKS.length - 1))))];
  }
  return out;
}

/** The table: a line per group, then one per change point. */
export function changesText(answer: Changes, name: string, look: Look): string {
  const lines = [`${name}: ${answer.metric} over time (${answer.better} is better), by ${answer.group_by}`, ''];
  for (const g of answer.groups) {
    const label = shorten(groupName(g), 50, look);
    const spark = look.unicode ? `  ${sparkline(g, 24)}` : '';
    const count = g.changes.length === 0 ? 'no change' : `${g.changes.length} change${g.changes.length === 1 ? '' : 's'}`;
    lines.push(`${paint(look, 'bold', label)} (${g.n})${spark}  ${count}`);
    for (const c of g.changes) {
      const how = c.direction === 'regression' ? paint(look, 'red', 'regression ') : paint(look, 'green', 'improvement');
      lines.push(
        `  ${c.at.slice(0, 16).replace('T', ' ')}  ${how}  ${percent(c.magnitude).padStart(8)}  ${num(c.before.mean)} -> ${num(c.after.mean)}  p=${c.pvalue.toPrecision(2)}`,
      );
    }
  }
  lines.push('', `${answer.matched} results matched, ${answer.excluded} without a number at ${answer.metric}.`);
  return `${lines.join('\n')}\n`;
}

/** A change point `--fail-on` fails on, as a line naming it. */
const failure = (group: string, c: { direction: string; at: string; magnitude: number | null; pvalue: number }, which: string) =>
  `${group}: ${c.direction} at ${c.at} (${percent(c.magnitude)}, p=${c.pvalue.toPrecision(2)}, ${which})`;

/** The change points `--fail-on` fails on, as lines naming them. */
function failing(answer: Changes, failOn: 'regression' | 'any'): string[] {
  return answer.groups.flatMap((g) =>
    g.changes.filter((c) => failOn === 'any' || c.direction === 'regression').map((c) => failure(groupName(g), c, `result ${c.result_id}`)),
  );
}

type Watch = Reply<'getWatch'>;
const FILTER_KEYS = ['site_id', 'flavor_id', 'tags_ids', 'upload_before', 'upload_after', 'execution_before', 'execution_after', 'filters'];

/** Whether a watch segments the series of this query (the server's defaults resolved). */
function sameSeries(w: Watch, q: ChangesQuery): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  return (
    w.metric === q.metric &&
    w.group_by === (q.group_by ?? 'flavor') &&
    same(w.better, q.better) &&
    w.max_pvalue === (q.max_pvalue ?? 0.001) &&
    w.min_magnitude === (q.min_magnitude ?? 0.02) &&
    w.min_size === (q.min_size ?? 5) &&
    FILTER_KEYS.every((k) => same((w as Record<string, unknown>)[k], (q as Record<string, unknown>)[k]))
  );
}

/** The watch of this series, created (and said so) when there is none; null when the caller may not. */
async function watchOf(ctx: Context, query: ChangesQuery): Promise<Watch | null> {
  const mine = await ctx.client.watches.list({ benchmark_id: query.benchmark_id }).toArray({ max: 10_000 });
  const found = mine.find((w) => sameSeries(w, query));
  if (found) return found;
  const { changed_after: _since, ...series } = query;
  try {
    const created = await ctx.client.watches.create(series as Parameters<Context['client']['watches']['create']>[0]);
    ctx.info(`Created watch ${created.id} for this series: --fail-on now reads its change records.`);
    return created;
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    ctx.warn(`No watch for this series (${err.message}): --fail-on reads the changes reported now instead.`);
    return null;
  }
}

/** The open records of the series' watch that --fail-on fails on, as lines naming them. */
async function failingRecords(ctx: Context, watch: Watch, options: Options): Promise<string[]> {
  const records = await ctx.client.changes
    .list({
      watch_id: watch.id,
      state: 'open',
      ...(options.failOn === 'regression' ? { direction: 'regression' as const } : {}),
      ...(options.since ? { since: options.since } : {}),
    })
    .toArray({ max: 10_000 });
  return records.map((r) => failure(groupName(r), r, `change ${r.id}`));
}

async function changes(ctx: Context, options: Options, format: string, summary: string | undefined): Promise<void> {
  const query: ChangesQuery = { ...(await seriesQuery(ctx, options)), changed_after: options.since };
  // Logged in, the gate reads the series' change records (open ones: not acknowledged or dismissed);
  // its watch comes first, so that the answer marks the records too.
  const watch = options.failOn && ctx.tokens.kind !== 'none' ? await watchOf(ctx, query) : null;
  const answer = await ctx.client.results.changes(query);
  const name = await benchmarkName(ctx, options.benchmark, query.benchmark_id);
  let text: string;
  if (format === 'csv') text = await ctx.client.results.changesCsv(query);
  else if (format === 'json') text = renderJson(answer);
  else if (format === 'ndjson') text = renderNdjson([answer]);
  else if (format === 'svg') text = renderChangesSvg(answer, name);
  else text = changesText(answer, name, lookOf(ctx.io, options.out !== undefined));
  await writeOutput(ctx, options.out, text);
  const found = options.failOn
    ? ((watch ? await failingRecords(ctx, watch, options) : null) ?? failing(answer, options.failOn))
    : undefined;
  const what = options.failOn === 'any' ? 'change' : 'regression';
  if (summary) {
    const { verdict, table } = changesReport(answer, name, found && { what, count: found.length });
    await appendSummary(summary, verdict, table, explorerUrl(ctx.apiBase, 'series', query));
  }
  if (found?.length) throw new CliError(`${found.length} ${what}${found.length === 1 ? '' : 's'} found:\n${found.join('\n')}`);
}

export async function run(options: Options, io: Io): Promise<void> {
  checkSeries(options);
  const summary = summaryFile(io, options.summary);
  await withChart(options, io, (ctx, format) => changes(ctx, options, format, summary));
}
