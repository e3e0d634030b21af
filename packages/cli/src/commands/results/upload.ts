import { rename, stat, unlink } from 'node:fs/promises';
import { setFlagsFromString } from 'node:v8';
import type { Command } from 'commander';
import { ApiError } from '@benchmarks/sdk';
import { MAX_BATCH_ITEMS } from '@benchmarks/sdk/contract/results';
import { withContext, type Context } from '../../context.ts';
import { AuthError, CliError, describeKnown, EXIT, UsageError } from '../../errors.ts';
import { positiveInteger, repeatable } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { expandInputs, STDIN } from '../../upload/inputs.ts';
import { executionTime, prepare, resolveDefaults, type Defaults, type Prepared } from '../../upload/items.ts';
import { inOrder, segments } from '../../upload/pipeline.ts';
import { progressFor } from '../../progress.ts';
import { readInput } from '../../upload/read.ts';
import { itemReport, ReportFile, Tally, type ItemReport, type RecordedCommand } from '../../upload/report.ts';
import { recordedOptions, ResumeReport, type ResumableOptions } from '../../upload/resume.ts';
import { Sender, Skipped, type Outcome } from '../../upload/send.ts';
import { ItemsOut, stdoutMode, summaryJson, summaryText, type Ending } from '../../upload/summary.ts';
import { colorEnabled } from '../../terminal.ts';
import { checkSegment, SchemaChecks } from '../../upload/validate.ts';
import { Resolver } from '../../resolve.ts';
import { group, runs, type WithGlobals } from '../common.ts';

export type Options = WithGlobals<
  ResumableOptions & { inputs: string[]; dryRun?: boolean; concurrency?: number; report?: string; resume?: string }
>;

export function register(program: Command): void {
  group(program, 'results')
    .command('upload')
    .description('Upload results from JSON or NDJSON files, directories, globs or stdin, streamed in batches')
    .argument('[inputs...]', 'files (.json: one object or an array; .ndjson/.jsonl: one per line), directories, globs, or - for stdin')
    .option('--benchmark <benchmark>', 'benchmark of every result: id or image:tag')
    .option('--flavor <flavor>', 'flavor of every result: id or site/flavor')
    .option('--executed-at <datetime>', 'start of the execution, ISO 8601 with a zone (2025-01-31T10:00:00Z) or "now"')
    .option('--tag <tag>', 'tag of every result: id or name; repeatable', repeatable)
    .option('--dry-run', "check every result against its benchmark's JSON Schema; upload nothing")
    .option(
      '--batch-size <n>',
      `results per request, all stored or none (default ${DEFAULT_BATCH_SIZE}, at most ${MAX_BATCH_ITEMS}); 1 sends each result alone`,
      positiveInteger('--batch-size', MAX_BATCH_ITEMS),
    )
    .option('--concurrency <n>', `requests in flight at once (default ${DEFAULT_CONCURRENCY})`, positiveInteger('--concurrency', 64))
    .option('--report <file>', 'write the outcome of every item to this JSON file, as the upload goes')
    .option('--resume <report>', 'continue an interrupted upload from its --report file: what it stored is not sent again')
    .addHelpText(
      'after',
      `
Each item is a result object, or an envelope {benchmark_id, flavor_id, execution_datetime, tags_ids, json}
whose fields win over the flags (names work there too). The inputs are read as streams and sent in batches
of --batch-size as they are read, so a file of any size takes little memory. A batch refused because of
some items stores nothing, reports those items and is sent again without them. Each request carries an
Idempotency-Key derived from its content: running the same command again within 24 h stores nothing twice;
--resume REPORT also skips what the report says was stored. Exits 1 when any item was not uploaded.

Output: a progress line on a terminal, then one summary on stderr (the first 20 failures with their file
and line, the counts, the report's path), in a pipe or a CI log too. -q keeps only the failures and the
error. stdout stays empty unless --output asks: ndjson (one line per item), csv (one row per item) or
json (the summary as one object).

Examples:
  benchmarks results upload out.json --benchmark ghcr.io/org/bench:1.0 --flavor CESGA/c4.large --executed-at 2025-01-31T10:00:00Z
  benchmarks results upload results/ --benchmark ghcr.io/org/bench:1.0 --flavor CESGA/c4.large --executed-at now --report report.json
  benchmarks results upload --resume report.json
  run-bench | benchmarks results upload - --benchmark ghcr.io/org/bench:1.0 --flavor CESGA/c4.large --executed-at now
  benchmarks results upload 'runs/**/*.ndjson' --dry-run`,
    )
    .action(runs(run));
}

const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_CONCURRENCY = 4;

/** Total size of the input files, for the progress bar; undefined with stdin. */
async function inputBytes(files: readonly string[]): Promise<number | undefined> {
  if (files.includes(STDIN)) return undefined;
  let total = 0;
  for (const file of files) total += (await stat(file).catch(() => undefined))?.size ?? 0;
  return total;
}

function outcomeReport(p: Prepared, outcome: Outcome | undefined): ItemReport {
  if (outcome?.ok) return itemReport(p.raw, 'uploaded', { resultId: outcome.id });
  if (!outcome || outcome.error instanceof Skipped) return itemReport(p.raw, 'skipped', { error: 'not sent: the upload was stopped' });
  return itemReport(p.raw, 'failed', { error: outcome.error });
}

/** An error that stops the upload: not authenticated or not allowed, or no answer at all. */
const stopsUpload = (error: unknown) =>
  !(error instanceof Skipped) && (!(error instanceof ApiError) || error.status === 401 || error.status === 403);

interface Plan {
  files: string[];
  defaults: Defaults;
  batchSize: number;
  resume?: ResumeReport;
  /** Where the report goes, and where it is written until the end (a resumed report is replaced only then). */
  report?: { path: string; writing: string };
}

async function upload(ctx: Context, options: Options, plan: Plan): Promise<void> {
  const { files, defaults, batchSize, resume } = plan;
  const dry = Boolean(options.dryRun);
  const resolver = new Resolver(ctx.client);
  if (resume && resume.command.server !== ctx.apiBase) {
    throw new UsageError(
      `${options.resume} records an upload to ${resume.command.server}, not ${ctx.apiBase}: resume it against the same server.`,
    );
  }
  // Names given as flags must resolve, or nothing can be uploaded.
  const resolved = await resolveDefaults(defaults, resolver);
  const recorded: RecordedCommand = {
    server: ctx.apiBase,
    inputs: options.inputs,
    benchmark: defaults.benchmark ?? null,
    flavor: defaults.flavor ?? null,
    executed_at: defaults.executedAt ?? null,
    tags: defaults.tags ?? [],
    batch_size: batchSize,
  };
  const sender = dry ? undefined : new Sender(ctx, batchSize);
  const checks = dry ? new SchemaChecks(ctx.client) : undefined;
  const tally = new Tally();
  const report = plan.report ? new ReportFile(plan.report.writing, { dry_run: dry, command: dry ? null : recorded }) : undefined;
  const mode = stdoutMode(ctx.settings.output, ctx.settings.outputChosen);
  const data = new ItemsOut(mode, ctx.io.stdout);
  const totalBytes = await inputBytes(files);
  let bytesRead = 0;
  let itemsRead = 0;
  // The inputs are streamed: how many results they hold is known only at the end, their size at once.
  // The reader runs ahead of the uploads, so the share done is the items done over the items the
  // input holds, estimated from the items and bytes read so far.
  const shareDone = (done: number) =>
    totalBytes && itemsRead > 0 ? Math.min(1, (done * bytesRead) / (itemsRead * totalBytes)) : undefined;
  const progress = progressFor(ctx.io, ctx.settings, { unit: 'results' });
  let stopError: unknown;

  async function* prepared(): AsyncGenerator<Prepared[]> {
    for (const file of files) {
      for await (const raws of readInput(file, ctx.io.stdin, (n) => (bytesRead += n))) {
        itemsRead += raws.length;
        const out: Prepared[] = new Array(raws.length);
        for (let i = 0; i < raws.length; i++) {
          let p = prepare(raws[i]!, defaults, resolved, resolver);
          if (p instanceof Promise) p = await p;
          if (resume) {
            const previous = await resume.next(raws[i]!);
            if (previous) p.previous = { status: previous.status, result_id: previous.result_id };
          }
          out[i] = p;
        }
        yield out;
      }
    }
  }

  const handle = (segment: Prepared[]): ItemReport[] | Promise<ItemReport[]> => {
    if (checks) return checkSegment(checks, segment);
    // A segment the earlier report covers whole: what it stored is skipped. One it covers in part
    // (the report was cut short there) is sent whole again, as the same batch with the same key.
    const covered = resume !== undefined && segment[segment.length - 1]!.previous !== undefined;
    const stored = (p: Prepared) => covered && p.previous?.status === 'uploaded';
    const toSend = segment.filter((p) => p.upload && !stored(p));
    const reports = (outcomes: Map<Prepared, Outcome>) =>
      segment.map((p) => {
        if (!p.upload) return itemReport(p.raw, 'failed', { error: p.error });
        if (stored(p)) {
          tally.resumed++;
          return itemReport(p.raw, 'uploaded', { resultId: p.previous!.result_id });
        }
        const outcome = outcomes.get(p);
        if (outcome && !outcome.ok && stopsUpload(outcome.error)) stopError ??= outcome.error;
        if (outcome?.ok && outcome.replayed) tally.duplicates++;
        return outcomeReport(p, outcome);
      });
    if (toSend.length === 0 || sender!.stopped !== undefined) return reports(new Map());
    return sender!.send(toSend).then((outcomes) => reports(new Map(toSend.map((p, i) => [p, outcomes[i]!]))));
  };

  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
    if (sender) sender.stopped ??= 'interrupted';
    ctx.warn('\nInterrupted: finishing the requests in flight (Ctrl-C again to quit at once).');
    process.once('SIGINT', () => process.exit(130));
  };
  const emit = (reports: ItemReport[]) => {
    tally.add(reports);
    report?.add(reports);
    data.add(reports);
    progress.update({ done: tally.summary.total, failed: tally.bad, fraction: shareDone(tally.summary.total) });
  };
  process.once('SIGINT', interrupt);
  let complete: boolean;
  try {
    complete = await inOrder(segments(prepared(), batchSize), {
      concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
      handle,
      emit,
      stop: () => interrupted,
    });
    // An interrupted resume keeps what the earlier report knows of the items it did not reach.
    if (!complete && resume) for await (const items of resume.rest()) emit(items);
  } catch (err) {
    report?.close(tally.summary);
    if (plan.report && plan.report.writing !== plan.report.path) await unlink(plan.report.writing).catch(() => undefined);
    throw err;
  } finally {
    process.removeListener('SIGINT', interrupt);
    progress.clear();
  }
  report?.close(tally.summary);
  if (plan.report && plan.report.writing !== plan.report.path) await rename(plan.report.writing, plan.report.path);
  const { summary } = tally;
  if (summary.total === 0) throw new CliError(`Nothing to upload: ${options.inputs.join(' ')} holds no results.`);

  const ending: Ending = { dryRun: dry, complete, report: plan.report?.path, resumedFrom: resume ? options.resume : undefined };
  if (mode === 'summary') ctx.out(summaryJson(tally, ending));
  const text = summaryText(tally, ending, colorEnabled(ctx.io, 'stderr'));
  for (const line of text.failures) ctx.warn(line);
  if (dry) {
    if (summary.invalid) throw new CliError(text.counts);
    if (interrupted) throw new CliError(`${text.counts} Interrupted.`);
    ctx.info(text.counts);
    return;
  }
  for (const line of text.lines) ctx.info(line);
  if (summary.uploaded === summary.total && complete) return;
  if (interrupted) throw new CliError('Upload interrupted.');
  if (sender!.stopped !== undefined) {
    // The reason the upload stopped, as one line: not logged in, not registered, unreachable.
    const known = describeKnown(stopError ?? sender!.stopped);
    if (known?.exitCode === EXIT.AUTH) throw new AuthError(known.message);
    if (known) throw new CliError(known.message);
  }
  throw new CliError(`${summary.total - summary.uploaded} of ${summary.total} results were not uploaded (see above).`);
}

export async function run(options: Options, io: Io): Promise<void> {
  // An upload makes much short-lived garbage for as long as it runs. With the heap limit Node sets
  // on a large machine (a quarter of its memory), V8 lets the old generation grow to several times
  // its live size between collections: 160-170 MB of RSS where 115-120 MB do, at the same speed
  // (docs/performance.md, "CLI uploads: streaming"). A growing factor of 1.2 keeps it there; V8
  // reads it at each collection, so setting it now works, and only this long-running command does.
  setFlagsFromString('--heap-growing-percent=20');
  let resume: ResumeReport | undefined;
  if (options.resume) {
    if (options.dryRun) throw new UsageError('--resume continues an upload: it cannot be combined with --dry-run.');
    resume = await ResumeReport.open(options.resume);
    // The report's server unless --server names one (upload() refuses another).
    options = { ...options, ...recordedOptions(options, options.resume, resume.command), server: options.server ?? resume.command.server };
  }
  if (!options.inputs?.length) throw new UsageError('Give the files to upload (or - for stdin), or --resume REPORT.');
  if (options.inputs.filter((i) => i === STDIN).length > 1) throw new UsageError('Give - (stdin) only once.');
  // `now` is one time for the whole upload (and recorded as such in the report, for --resume).
  const executedAt = options.executedAt === undefined ? undefined : executionTime(options.executedAt);
  const files = await expandInputs(options.inputs);
  const reportPath = options.report ?? options.resume;
  const plan: Plan = {
    files,
    defaults: { benchmark: options.benchmark, flavor: options.flavor, executedAt, tags: options.tag },
    batchSize: options.batchSize ?? DEFAULT_BATCH_SIZE,
    resume,
    report: reportPath ? { path: reportPath, writing: reportPath === options.resume ? `${reportPath}.partial` : reportPath } : undefined,
  };
  await withContext(options, io, (ctx) => upload(ctx, options, plan));
}
