import type { Command } from 'commander';
import { MAX_BATCH_ITEMS, type UploadItem, type UploadProgress } from '@benchmarks/sdk';
import { CLIENT_RETRIES, withContext, type Context } from '../../context.ts';
import { AuthError, CliError, describeKnown, EXIT, UsageError } from '../../errors.ts';
import { positiveInteger, repeatable } from '../../global-options.ts';
import type { Io } from '../../io.ts';
import { renderList } from '../../output.ts';
import { Resolver } from '../../resolve.ts';
import { expandInputs, readItems, STDIN, type RawItem } from '../../upload/inputs.ts';
import { executionTime, prepare, type Defaults, type Prepared } from '../../upload/items.ts';
import { placeOf, uploadKey } from '../../upload/keys.ts';
import { progressBar } from '../../upload/progress.ts';
import { failureLine, itemReport, reportColumns, summarize, writeReport, type ItemReport } from '../../upload/report.ts';
import { schemaChecks } from '../../upload/validate.ts';
import { group, runs, type WithGlobals } from '../shared.ts';

export type Options = WithGlobals<{
  inputs: string[];
  benchmark?: string;
  flavor?: string;
  executedAt?: string;
  tag?: string[];
  dryRun?: boolean;
  concurrency?: number;
  batchSize?: number;
  report?: string;
}>;

export function register(program: Command): void {
  group(program, 'results')
    .command('upload')
    .description('Upload results from JSON or NDJSON files, directories, globs or stdin')
    .argument('<inputs...>', 'files (.json: one object or an array; .ndjson/.jsonl: one per line), directories, globs, or - for stdin')
    .option('--benchmark <benchmark>', 'benchmark of every result: id or image:tag')
    .option('--flavor <flavor>', 'flavor of every result: id or site/flavor')
    .option('--executed-at <datetime>', 'start of the execution, ISO 8601 with a zone (2025-01-31T10:00:00Z) or "now"')
    .option('--tag <tag>', 'tag of every result: id or name; repeatable', repeatable)
    .option('--dry-run', "check every result against its benchmark's JSON Schema; upload nothing")
    .option('--batch-size <n>', `results per request, all stored or none (default ${DEFAULT_BATCH_SIZE}, at most ${MAX_BATCH_ITEMS}); 1 sends each result alone`, positiveInteger('--batch-size', MAX_BATCH_ITEMS))
    .option('--concurrency <n>', `requests in flight at once (default ${DEFAULT_CONCURRENCY})`, positiveInteger('--concurrency', 64))
    .option('--report <file>', 'write the outcome of every item to this JSON file')
    .addHelpText(
      'after',
      `
Each item is a result object, or an envelope {benchmark_id, flavor_id, execution_datetime, tags_ids, json}
whose fields win over the flags (names work there too). Results are sent in batches of --batch-size; a
batch refused because of some items stores nothing, reports those items and is sent again without them.
Each request carries an Idempotency-Key derived from its content: running the same command again within
24 h (after an interruption or a timeout) stores nothing twice. Exits 1 when any item was not uploaded.

Examples:
  benchmarks results upload out.json --benchmark ghcr.io/org/bench:1.0 --flavor CESGA/c4.large --executed-at 2025-01-31T10:00:00Z
  benchmarks results upload results/ --benchmark ghcr.io/org/bench:1.0 --flavor CESGA/c4.large --executed-at now --report report.json
  run-bench | benchmarks results upload - --benchmark ghcr.io/org/bench:1.0 --flavor CESGA/c4.large --executed-at now
  benchmarks results upload 'runs/**/*.ndjson' --dry-run`,
    )
    .action(runs(run, ['inputs']));
}

const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_CONCURRENCY = 4;

/** Thrown instead of sending an item once the batch was stopped. */
class Skipped extends Error {}

async function readAllInputs(inputs: string[], io: Io): Promise<RawItem[]> {
  if (inputs.filter((i) => i === STDIN).length > 1) throw new UsageError('Give - (stdin) only once.');
  const files = await expandInputs(inputs);
  const items: RawItem[] = [];
  for (const file of files) items.push(...(await readItems(file, io.stdin)));
  if (items.length === 0) throw new CliError(`Nothing to upload: ${inputs.join(' ')} holds no results.`);
  return items;
}

async function dryRun(ctx: Context, prepared: Prepared[]): Promise<ItemReport[]> {
  const ready = prepared.filter((p) => p.upload);
  const checks = await schemaChecks(ctx.client, ready.map((p) => p.upload!.benchmark_id));
  return prepared.map((p) => {
    if (!p.upload) return itemReport(p.raw, 'invalid', { error: p.error });
    const problems = checks.get(p.upload.benchmark_id)!(p.upload.json);
    if (!problems) return itemReport(p.raw, 'valid');
    return itemReport(p.raw, 'invalid', {
      error: { message: "does not satisfy the benchmark's json_schema", errors: problems.map((m) => ({ in: 'json', ...splitProblem(m) })) },
    });
  });
}

function splitProblem(problem: string): { path: string; message: string } {
  const at = problem.indexOf(': ');
  return { path: problem.slice(0, at), message: problem.slice(at + 2) };
}

async function upload(ctx: Context, prepared: Prepared[], concurrency: number, batchSize: number): Promise<{ reports: ItemReport[]; stopped?: unknown }> {
  // After a 401/403 or a lost connection the other items would fail the same way: skip them. The
  // SDK retries a request whose connection was lost (its key makes that safe): the upload stops only
  // once one request failed on every attempt.
  let stopped: unknown;
  const lostAttempts = new Map<string, number>();
  const client = ctx.newClient(
    () => ctx.tokens.get(),
    (outcome, key) => {
      if (outcome === 401 || outcome === 403) stopped ??= outcome;
      else if (outcome instanceof Error) {
        const lost = (lostAttempts.get(key ?? '') ?? 0) + 1;
        lostAttempts.set(key ?? '', lost);
        if (key === undefined || lost > CLIENT_RETRIES) stopped ??= outcome;
      }
    },
  );
  const interrupt = () => {
    stopped ??= 'interrupted';
    ctx.warn('\nInterrupted: finishing the uploads in flight (Ctrl-C again to quit at once).');
    process.once('SIGINT', () => process.exit(130));
  };
  process.once('SIGINT', interrupt);

  const ready = prepared.filter((p) => p.upload);
  // Each request's key comes from its content and places (upload/keys.ts); it is asked once per
  // request, before the first attempt, which is where a stopped upload skips what it has not sent.
  const places = new Map(ready.map((p) => [p.upload!, placeOf(p.raw)]));
  const server = ctx.apiBase;
  const idempotencyKey = (items: readonly UploadItem[], operation: string) => {
    if (stopped) throw new Skipped();
    return uploadKey(server, operation, items.map((item) => ({ place: places.get(item) ?? '', item })));
  };
  const bar = ctx.io.isTTY.stderr && !ctx.settings.quiet && ready.length > 1 ? progressBar(ctx.io.stderr) : undefined;
  let outcomes: ({ ok: true; id: string } | { ok: false; error: unknown })[];
  try {
    const uploads = ready.map((p) => p.upload as UploadItem);
    const onProgress = bar ? (p: UploadProgress) => bar.update(p) : undefined;
    // One result per request (POST /results) with --batch-size 1, else batches (POST /results:batch).
    outcomes =
      batchSize === 1
        ? (await client.results.uploadMany(uploads, { concurrency, onProgress, idempotencyKey })).map((o) => (o.ok ? { ok: true as const, id: o.result.id } : o))
        : await client.results.uploadInBatches(uploads, { batchSize, concurrency, onProgress, idempotencyKey });
  } finally {
    process.removeListener('SIGINT', interrupt);
    bar?.clear();
  }
  const byItem = new Map(ready.map((p, i) => [p, outcomes[i]]));
  let firstError: unknown;
  const reports = prepared.map((p) => {
    const outcome = byItem.get(p);
    if (!outcome) return itemReport(p.raw, 'failed', { error: p.error });
    if (outcome.ok) return itemReport(p.raw, 'uploaded', { resultId: outcome.id });
    if (outcome.error instanceof Skipped) return itemReport(p.raw, 'skipped', { error: 'not sent: the upload was stopped' });
    firstError ??= outcome.error;
    return itemReport(p.raw, 'failed', { error: outcome.error });
  });
  return { reports, stopped: stopped === undefined ? undefined : stopped === 'interrupted' ? 'interrupted' : firstError };
}

export async function run(options: Options, io: Io): Promise<void> {
  if (options.executedAt) executionTime(options.executedAt);
  const raws = await readAllInputs(options.inputs, io);
  await withContext(options, io, async (ctx) => {
    const resolver = new Resolver(ctx.client);
    // Names given as flags must resolve, or nothing can be uploaded.
    await Promise.all([
      options.benchmark && resolver.benchmark(options.benchmark),
      options.flavor && resolver.flavor(options.flavor),
      ...(options.tag ?? []).map((t) => resolver.tag(t)),
    ]);
    const defaults: Defaults = { benchmark: options.benchmark, flavor: options.flavor, executedAt: options.executedAt, tags: options.tag };
    const prepared = await Promise.all(raws.map((raw) => prepare(raw, defaults, resolver)));

    const { reports, stopped } = options.dryRun
      ? { reports: await dryRun(ctx, prepared), stopped: undefined }
      : await upload(ctx, prepared, options.concurrency ?? DEFAULT_CONCURRENCY, options.batchSize ?? DEFAULT_BATCH_SIZE);
    const summary = summarize(reports);
    if (options.report) await writeReport(options.report, { dry_run: Boolean(options.dryRun), summary, items: reports });
    if (ctx.settings.output !== 'table') io.stdout.write(renderList(ctx.settings.output, reports, reportColumns));

    const bad = reports.filter((r) => r.status === 'failed' || r.status === 'invalid');
    if (bad.length) {
      ctx.warn(options.dryRun ? 'Invalid:' : 'Failed:');
      for (const item of bad) ctx.warn(`  ${failureLine(item)}`);
    }
    if (options.dryRun) {
      const line = `Dry run: ${summary.valid} of ${summary.total} results valid, ${summary.invalid} invalid; nothing was uploaded.`;
      if (summary.invalid) throw new CliError(line);
      ctx.info(line);
      return;
    }
    const line = `Uploaded ${summary.uploaded} of ${summary.total} results: ${summary.failed} failed, ${summary.skipped} skipped.`;
    if (summary.uploaded === summary.total) {
      ctx.info(line);
      return;
    }
    ctx.warn(line);
    if (options.report) ctx.info(`The outcome of every item is in ${options.report}.`);
    if (stopped === 'interrupted') throw new CliError('Upload interrupted.');
    if (stopped !== undefined) {
      // The reason the batch stopped, as one line: not logged in, not registered, unreachable.
      const known = describeKnown(stopped);
      if (known?.exitCode === EXIT.AUTH) throw new AuthError(known.message);
      if (known) throw new CliError(known.message);
    }
    throw new CliError(`${summary.total - summary.uploaded} of ${summary.total} results were not uploaded (see above).`);
  });
}
