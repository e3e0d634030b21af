/**
 * What an upload prints. One summary at the end, on stderr: the first failures with their place,
 * the counts, where the report is. Its size does not depend on the upload's: a CI log of an upload
 * of millions of results is a few lines. stdout carries only what `--output` asks for: every item
 * (`ndjson`: a line each, `csv`: a row each, as the upload goes) or the summary as one JSON object
 * (`json`); without a chosen format it stays empty, in a pipe too.
 */
import type { OutputFormat } from '../config.ts';
import { csvRow, type Column } from '../output.ts';
import { paint } from '../terminal.ts';
import { failureLine, reason, SHOWN_FAILURES, type ItemReport, type Tally } from './report.ts';

export const reportColumns: Column<ItemReport>[] = [
  { header: 'source', value: (i) => i.source },
  { header: 'line', value: (i) => i.line },
  { header: 'index', value: (i) => i.index },
  { header: 'status', value: (i) => i.status },
  { header: 'result_id', value: (i) => i.result_id },
  { header: 'error', value: (i) => (i.error ? reason(i.error) : null) },
];

/** What stdout gets: each item, the summary object, or nothing. */
export type StdoutMode = 'ndjson' | 'csv' | 'summary' | 'none';

/** A format chosen by flag, environment or config file is what was asked for; the default asks for nothing. */
export function stdoutMode(format: OutputFormat, chosen: boolean): StdoutMode {
  if (!chosen || format === 'table') return 'none';
  return format === 'json' ? 'summary' : format;
}

/** Each item on stdout as its batch is done, in input order: a JSON line (`ndjson`) or a CSV row. */
export class ItemsOut {
  constructor(
    private readonly mode: StdoutMode,
    private readonly stdout: { write(s: string): unknown },
  ) {
    if (mode === 'csv') stdout.write(csvRow(reportColumns.map((c) => c.header)));
  }

  add(items: readonly ItemReport[]): void {
    if (items.length === 0) return;
    if (this.mode === 'ndjson') this.stdout.write(items.map((item) => `${JSON.stringify(item)}\n`).join(''));
    else if (this.mode === 'csv') this.stdout.write(items.map((item) => csvRow(reportColumns.map((c) => c.value(item)))).join(''));
  }
}

/** How the upload ended, besides its counts. */
export interface Ending {
  dryRun: boolean;
  /** False when it stopped before the end of the input (Ctrl-C). */
  complete: boolean;
  /** The `--report` file, when there is one. */
  report?: string;
  /** The report an upload was resumed from. */
  resumedFrom?: string;
}

/** The summary as one JSON object: counts, the first failures (one a line) and how many more. */
export function summaryJson(tally: Tally, ending: Ending): string {
  const { summary } = tally;
  const failures = tally.failures.map((item) => `    ${JSON.stringify(item)}`);
  const head = {
    dry_run: ending.dryRun,
    complete: ending.complete,
    summary,
    duplicates: tally.duplicates,
    resumed: tally.resumed,
    report: ending.report ?? null,
    more_failures: summary.failed + summary.invalid - tally.failures.length,
  };
  const fields = Object.entries(head).map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)}`);
  const list = failures.length ? `[\n${failures.join(',\n')}\n  ]` : '[]';
  return `{\n${fields.join(',\n')},\n  "failures": ${list}\n}\n`;
}

/**
 * The summary on stderr: the first failures with their place (what --quiet keeps), then `lines`:
 * the counts (`Uploaded 185 of 200 results: ...`, or the dry run's, also alone as `counts`) with
 * what to know besides (resumed from, where the report is).
 */
export function summaryText(tally: Tally, ending: Ending, color: boolean): { failures: string[]; counts: string; lines: string[] } {
  const { summary } = tally;
  const bad = summary.failed + summary.invalid;
  const failures: string[] = [];
  if (bad > 0) {
    failures.push(paint(color, 'red', ending.dryRun ? 'Invalid:' : 'Failed:'));
    for (const item of tally.failures) failures.push(`  ${failureLine(item)}`);
    if (bad > SHOWN_FAILURES) {
      const where = ending.report ? `every one is in ${ending.report}` : '--report FILE lists every one';
      failures.push(`  ... and ${bad - SHOWN_FAILURES} more (${where}).`);
    }
  }
  const unread = ending.complete ? '' : '; the rest of the input was not read';
  if (ending.dryRun) {
    const counts = `Dry run: ${summary.valid} of ${summary.total} results valid, ${summary.invalid} invalid${unread}; nothing was uploaded.`;
    return { failures, counts, lines: [counts] };
  }
  const lines: string[] = [];
  if (ending.resumedFrom) {
    lines.push(`Resumed from ${ending.resumedFrom}: ${tally.resumed} results it records as uploaded were not sent again.`);
  }
  const done = summary.uploaded === summary.total && ending.complete;
  // Stored by an earlier run: replayed by the server (the same Idempotency-Key) or not sent again (--resume).
  const already = tally.duplicates + tally.resumed;
  const rest = `${summary.failed} failed, ${summary.skipped} skipped${unread}`;
  const counts = paint(
    color,
    done ? 'green' : undefined,
    already
      ? `Stored ${summary.uploaded - already} new of ${summary.total} results: ${already} already stored, ${rest}.`
      : `Uploaded ${summary.uploaded} of ${summary.total} results: ${rest}.`,
  );
  lines.push(counts);
  if (ending.report) {
    lines.push(
      done
        ? `The outcome of every item is in ${ending.report}.`
        : `The outcome of every item is in ${ending.report}; \`benchmarks results upload --resume ${ending.report}\` sends the rest.`,
    );
  }
  return { failures, counts, lines };
}
