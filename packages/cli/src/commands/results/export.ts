import { Option, type Command } from 'commander';
import { IncompleteResponseError, type Client, type ExportCsvQuery } from '@benchmarks/sdk';
import { withContext, type Context } from '../../context.ts';
import { CliError, describeKnown, UsageError } from '../../errors.ts';
import type { Io } from '../../io.ts';
import { progressFor, showsProgress, type Progress } from '../../progress.ts';
import { Sink } from '../../sink.ts';
import { group, runs, type WithGlobals } from '../common.ts';
import { addFilterOptions, filterQuery, type FilterOptions } from './filters.ts';

export type Options = WithGlobals<FilterOptions & { format?: 'ndjson' | 'csv'; columns?: string; out?: string }>;

/** NDJSON lines are gathered into writes of about this many characters. */
const WRITE_SIZE = 64 * 1024;

export function register(program: Command): void {
  const command = group(program, 'results')
    .command('export')
    .description('Export every matching result, no pages, as NDJSON (one result a line) or CSV, streamed')
    .option('--benchmark <benchmark>', 'benchmark id or image:tag');
  addFilterOptions(command)
    .addOption(
      new Option('--format <format>', 'ndjson (default): one result a line; csv: a header and one row per result').choices([
        'ndjson',
        'csv',
      ]),
    )
    .option(
      '--columns <columns>',
      'CSV columns, comma-separated: id, execution_datetime, upload_datetime, benchmark_name, site_name, flavor_name, tags, json.<path> (implies --format csv)',
    )
    .option('--out <file>', 'write to this file (as FILE.partial, renamed when complete) instead of stdout')
    .addHelpText(
      'after',
      `
Results come in execution_datetime order, hidden ones left out, in constant memory however many there
are. The CSV's default columns are id, execution_datetime, benchmark_name, site_name, flavor_name, tags,
and the benchmark's suggested metrics when --benchmark is given. An export cut short exits 1 and, with
--out, leaves only FILE.partial.

Examples:
  benchmarks results export --benchmark ghcr.io/org/bench:1.0 --out results.ndjson
  benchmarks results export --benchmark ghcr.io/org/bench:1.0 --filter 'machine.cpu.count >= 4' --columns id,flavor_name,json.result.score > scores.csv
  benchmarks results export --flavor CESGA/c4.large --executed-after 2025-01-01 | jq -c '.json.result'`,
    );
  command.action(runs(run));
}

/** The CSV columns of `--columns`: comma-separated, blanks around names ignored. */
function columnsOf(text: string): string[] {
  const columns = text
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean);
  if (columns.length === 0) throw new UsageError('--columns needs at least one column, e.g. --columns id,flavor_name,json.result.score.');
  return columns;
}

async function writeNdjson(client: Client, query: ExportCsvQuery, sink: Sink, progress: Progress): Promise<number> {
  let count = 0;
  let pending = '';
  try {
    for await (const result of client.results.export(query)) {
      pending += `${JSON.stringify(result)}\n`;
      count++;
      progress.update({ done: count });
      if (pending.length >= WRITE_SIZE) {
        await sink.write(pending);
        pending = '';
      }
    }
  } finally {
    // Also when the export breaks off: the results that arrived whole are written.
    if (pending) await sink.write(pending);
  }
  return count;
}

/**
 * Counts the records of a CSV as its bytes go by: a line break ends one unless it is inside a
 * quoted cell (RFC 4180 doubles a quote inside one, which toggles twice and so changes nothing).
 */
export class CsvRecords {
  #quoted = false;
  /** Records ended so far, the header included. */
  count = 0;

  add(chunk: Uint8Array): void {
    for (const byte of chunk) {
      if (byte === 0x22) this.#quoted = !this.#quoted;
      else if (byte === 0x0a && !this.#quoted) this.count++;
    }
  }
}

/** Writes the CSV as it arrives; returns how many results (rows after the header) it held. */
async function writeCsv(client: Client, query: ExportCsvQuery, sink: Sink, progress: Progress): Promise<number> {
  const reader = client.results.exportCsv(query).getReader();
  const records = new CsvRecords();
  const rows = () => Math.max(0, records.count - 1);
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      await sink.write(chunk.value);
      records.add(chunk.value);
      progress.update({ done: rows() });
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return rows();
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  return bytes < 1024 * 1024 ? `${Math.round(bytes / 1024)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/**
 * The export does not say how many results it holds; for the time left, the list of the same
 * filters does (the first page of one item, asked alongside the export, only when progress is
 * shown). Without its answer the progress line shows no time left.
 */
function countInBackground(ctx: Context, query: ExportCsvQuery, progress: Progress): void {
  const { columns: _columns, ...filters } = query;
  ctx.client.results
    .list({ ...filters, per_page: 1 })
    .then((page) => progress.setTotal(page.total))
    .catch(() => undefined);
}

async function exportTo(ctx: Context, options: Options, format: 'ndjson' | 'csv', columns: string[] | undefined): Promise<void> {
  const query: ExportCsvQuery = { ...(await filterQuery(ctx.client, options)), ...(columns ? { columns } : {}) };
  const sink = await Sink.open(ctx.io, options.out);
  const progress = progressFor(ctx.io, ctx.settings, { unit: 'results' });
  if (showsProgress(ctx.io, ctx.settings)) countInBackground(ctx, query, progress);
  let count: number;
  try {
    count = format === 'ndjson' ? await writeNdjson(ctx.client, query, sink, progress) : await writeCsv(ctx.client, query, sink, progress);
    progress.clear();
    await sink.commit();
  } catch (err) {
    progress.clear();
    const partial = await sink.abandon();
    if (!partial) throw err;
    // Cut short midway: one line saying so, and where what arrived is.
    const reason =
      err instanceof IncompleteResponseError
        ? err.message
        : (describeKnown(err)?.message ?? (err instanceof Error ? err.message : String(err)));
    throw new CliError(`The export is incomplete (${size(sink.bytes)} written to ${partial}): ${reason}`);
  }
  ctx.info(`Exported ${count} results (${size(sink.bytes)})${sink.path ? ` to ${sink.path}` : ''}.`);
}

export async function run(options: Options, io: Io): Promise<void> {
  if (options.columns !== undefined && options.format === 'ndjson') {
    throw new UsageError('--columns chooses CSV columns: it does not go with --format ndjson.');
  }
  const columns = options.columns === undefined ? undefined : columnsOf(options.columns);
  const format = options.format ?? (columns ? 'csv' : 'ndjson');
  await withContext(options, io, (ctx) => exportTo(ctx, options, format, columns));
}
