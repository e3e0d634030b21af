/**
 * `--summary [FILE]` of `changes` and `compare`: a Markdown report appended to FILE (a CI job's
 * summary: `$GITHUB_STEP_SUMMARY` when no FILE is given) — the verdict on the first line, then a
 * table, then a link to the explorer's view. It reads the same in GitHub's and GitLab's renderers:
 * names are escaped, so that none breaks the table or becomes markup.
 */
import { appendFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CliError, UsageError } from './errors.ts';
import type { Io } from './io.ts';

/** `--summary` alone is `true`. */
export type SummaryOption = string | boolean | undefined;

export function addSummaryOption(command: Command, what: string): Command {
  return command.option(
    '--summary [file]',
    `append a Markdown report (${what}) to this file; without one, to $GITHUB_STEP_SUMMARY (a GitHub Actions job's summary)`,
  );
}

/** The file the report goes to, checked before any request; undefined without --summary. */
export function summaryFile(io: Io, option: SummaryOption): string | undefined {
  if (option === undefined || option === false) return undefined;
  if (typeof option === 'string' && option !== '') return option;
  const file = io.env.GITHUB_STEP_SUMMARY;
  if (!file)
    throw new UsageError('--summary without a file writes to $GITHUB_STEP_SUMMARY, which is not set: give a file (--summary report.md).');
  return file;
}

/**
 * Text as Markdown shows it literally: HTML's characters as entities, the others that mean
 * something inline (emphasis, code, links, a table's `|`, mentions) escaped by a backslash, line
 * breaks as spaces.
 */
export function markdownText(text: string): string {
  return (
    text
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are no text to show
      .replace(/[\u0000-\u001f\u007f]+/g, ' ')
      .replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)
      .replace(/[\\`*_{}[\]()#+\-.!|~@:]/g, '\\$&')
  );
}

/** A Markdown table: `cells` are Markdown already (escape names with {@link markdownText}). */
export function markdownTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  right: ReadonlySet<number> = new Set(),
): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map((_, i) => (right.has(i) ? '---:' : '---'))), ...rows.map(line)].join('\n');
}

/** The explorer's page `page` of the service behind `apiBase`, with the API's parameter names and values. */
export function explorerUrl(apiBase: string, page: 'series' | 'rank', query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || name === 'format') continue;
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  return `${apiBase.replace(/\/api\/v1\/?$/, '')}/explore/${page}?${params}`;
}

/** Appends the report (verdict, table, link) to `file`, a blank line before the next one. */
export async function appendSummary(file: string, verdict: string, table: string, link: string): Promise<void> {
  const report = `${verdict}\n\n${table}\n\n[Open in the explorer](${link})\n\n`;
  try {
    await appendFile(file, report);
  } catch (err) {
    throw new CliError(`Cannot append the summary to ${file}: ${(err as Error).message}`);
  }
}
