import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CompareQuery } from '@benchmarks/sdk';
import { renderCompareSvg } from '@benchmarks/sdk/chart';
import { lookOf, type Comparison } from '../compare/look.ts';
import { compareText } from '../compare/view.ts';
import { withContext, type Context } from '../context.ts';
import { UsageError } from '../errors.ts';
import { positiveInteger, type GlobalOptions } from '../global-options.ts';
import type { Io } from '../io.ts';
import { renderJson, renderNdjson } from '../output.ts';
import { isUuid, Resolver } from '../resolve.ts';
import { Sink } from '../sink.ts';
import { addSummaryOption, appendSummary, explorerUrl, summaryFile, type SummaryOption } from '../summary.ts';
import { compareReport } from '../compare/reports.ts';
import { runs, type WithGlobals } from './common.ts';
import { addFilterOptions, filterQuery, metricPath, type FilterOptions } from './results/filters.ts';

export type Options = WithGlobals<
  FilterOptions & {
    benchmark: string;
    metric: string;
    by?: 'flavor' | 'site';
    better?: 'higher' | 'lower';
    confidence?: number;
    minSamples?: number;
    rankBy?: 'metric' | 'price';
    currency?: string;
    baseline?: string;
    out?: string;
    summary?: SummaryOption;
  }
>;

const DEFAULT_MIN_SAMPLES = 5;

function confidenceLevel(value: string): number {
  const n = Number(value);
  if (!/^\s*0?\.\d+\s*$/.test(value) || !(n >= 0.5 && n <= 0.999)) {
    throw new InvalidArgumentError('--confidence must be a number from 0.5 to 0.999, e.g. 0.95.');
  }
  return n;
}

export function register(program: Command): void {
  const command = program
    .command('compare')
    .description(
      "Rank flavors (or sites) on one metric of a benchmark's results: medians with their intervals, ties declared, value for money",
    )
    .requiredOption('--benchmark <benchmark>', 'benchmark id or image:tag')
    .requiredOption('--metric <path>', 'the number compared, a JSON path such as json.result.score (the json. may be left out)')
    .addOption(new Option('--by <group>', 'one row per flavor (default) or per site').choices(['flavor', 'site']));
  addFilterOptions(command)
    .addOption(
      new Option('--better <direction>', "which direction wins (default: the metric's x-better in the schema, else higher)").choices([
        'higher',
        'lower',
      ]),
    )
    .option('--confidence <level>', 'confidence of the intervals, 0.5 to 0.999 (default 0.95)', confidenceLevel)
    .option(
      '--min-samples <n>',
      `groups with fewer values are listed, not ranked (default ${DEFAULT_MIN_SAMPLES})`,
      positiveInteger('--min-samples', 1_000_000),
    )
    .addOption(
      new Option('--rank-by <what>', 'rank by the metric (default) or by value for money (needs --currency)').choices(['metric', 'price']),
    )
    .option('--currency <code>', 'ISO 4217 code (EUR): with --rank-by price, flavors priced in it are ranked')
    .option(
      '--baseline <group>',
      'flavor id or site/flavor (with --by site: site id or name) that every other group is compared with: a column of ratios, "1.35× [1.30, 1.41]"',
    )
    .option('--out <file>', 'write the output to this file instead of stdout');
  addSummaryOption(command, 'with --baseline: the verdict against it, the table, a link to the explorer').addHelpText(
    'after',
    `
--output: table (the default, also when piped: a ranked table and a chart drawn in text), json (the
server's answer), csv (one row per group) or svg (the chart as an SVG image, drawn like the server's).
Ranks: groups whose medians' intervals overlap share a rank; groups with fewer than --min-samples values
are listed last, unranked. --baseline adds how many times the baseline's values each group's are (the
Hodges-Lehmann ratio and its interval; the Mann-Whitney p-value in json and csv).

Examples:
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric json.result.score
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric result.seconds --better lower --by site --filter 'machine.cpu.count >= 4'
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric json.result.score --rank-by price --currency EUR
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric json.result.score --baseline CESGA/hpc.2core-4ram
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric json.result.score --baseline CESGA/hpc.2core-4ram --summary
  benchmarks compare --benchmark ghcr.io/org/bench:1.0 --metric json.result.score --output svg --out compare.svg`,
  );
  command.action(runs(run));
}

/** The options the server would refuse, refused here with the flag's name. */
function checkOptions(options: Options): { metric: string; currency: string | undefined } {
  const metric = metricPath(options.metric);
  const currency = options.currency?.toUpperCase();
  if (currency !== undefined && !/^[A-Z]{3}$/.test(currency)) {
    throw new UsageError(`--currency must be an ISO 4217 code of three letters (EUR, USD), not '${options.currency}'.`);
  }
  if (options.rankBy === 'price' && !currency) throw new UsageError('--rank-by price needs --currency (e.g. --currency EUR).');
  if (options.rankBy === 'price' && options.by === 'site')
    throw new UsageError('--rank-by price ranks flavors: it does not go with --by site.');
  if (options.summary !== undefined && options.baseline === undefined)
    throw new UsageError('--summary reports against a baseline: add --baseline (a flavor, or with --by site a site).');
  return { metric, currency };
}

/** The benchmark's `image:tag`, for titles: as given, or read when given by id. */
export async function benchmarkName(ctx: Context, ref: string, id: string): Promise<string> {
  return isUuid(ref) ? (await ctx.client.benchmarks.get(id)).name : ref;
}

/** `compare` and `changes`: `--output svg` is theirs, the other settings resolved as for any command, a table by default. */
export function withChart(options: GlobalOptions, io: Io, fn: (ctx: Context, format: string) => Promise<void>): Promise<void> {
  const svg = options.output === 'svg';
  const settingsOptions = svg ? { ...options, output: undefined } : options;
  return withContext(settingsOptions, io, (ctx) => fn(ctx, svg ? 'svg' : ctx.settings.output), { output: 'table' });
}

/** The output, to stdout or the file of `--out`. */
export async function writeOutput(ctx: Context, out: string | undefined, text: string): Promise<void> {
  const sink = await Sink.open(ctx.io, out);
  await sink.write(text);
  await sink.commit();
  if (sink.path) ctx.info(`Wrote ${sink.path}.`);
}

async function compare(
  ctx: Context,
  options: Options,
  format: string,
  checked: ReturnType<typeof checkOptions>,
  summary: string | undefined,
): Promise<void> {
  const { metric, currency } = checked;
  const resolver = new Resolver(ctx.client, { anyStatus: true });
  const benchmark_id = await resolver.benchmark(options.benchmark);
  const baseline =
    options.baseline === undefined
      ? undefined
      : options.by === 'site'
        ? await resolver.site(options.baseline)
        : await resolver.flavor(options.baseline);
  const query: CompareQuery = {
    ...(await filterQuery(ctx.client, { ...options, benchmark: benchmark_id })),
    benchmark_id,
    metric,
    group_by: options.by,
    better: options.better,
    confidence: options.confidence,
    min_samples: options.minSamples,
    rank_by: options.rankBy,
    currency,
    baseline,
  };
  let text: string;
  // The report needs the answer: read once, whatever the output.
  const answered = format === 'csv' && !summary ? undefined : await ctx.client.results.compare(query);
  if (summary && answered) {
    const { verdict, table } = compareReport(answered, await benchmarkName(ctx, options.benchmark, benchmark_id));
    await appendSummary(summary, verdict, table, explorerUrl(ctx.apiBase, 'rank', query));
  }
  if (format === 'csv') {
    text = await ctx.client.results.compareCsv(query);
  } else {
    const answer: Comparison = answered!;
    if (format === 'json') text = renderJson(answer);
    else if (format === 'ndjson') text = renderNdjson([answer]);
    else if (format === 'svg') text = renderCompareSvg(answer, await benchmarkName(ctx, options.benchmark, benchmark_id));
    else if (answer.groups.length === 0) {
      ctx.info(`No result has a number at ${metric} (${answer.matched} matched the filters).`);
      return;
    } else {
      const look = lookOf(ctx.io, options.out !== undefined);
      const name = await benchmarkName(ctx, options.benchmark, benchmark_id);
      text = compareText(answer, name, look, { minSamples: options.minSamples ?? DEFAULT_MIN_SAMPLES, currency });
    }
  }
  await writeOutput(ctx, options.out, text);
}

export async function run(options: Options, io: Io): Promise<void> {
  const checked = checkOptions(options);
  const summary = summaryFile(io, options.summary);
  await withChart(options, io, (ctx, format) => compare(ctx, options, format, checked, summary));
}
