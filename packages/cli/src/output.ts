/**
 * Renders data on stdout: an aligned table (for people), JSON (for programs), NDJSON (one JSON
 * value a line, for streams), CSV with a header (for spreadsheets). Lists print an array in JSON;
 * one item prints an object.
 */
import { csvField as sharedCsvField, csvText } from '@benchmarks/sdk/csv';
import type { OutputFormat } from './config.ts';
import { renderTable, text, type Column, type TableLayout } from './table.ts';

export { text, type Column };

/** One item as `KEY  value` lines, for `get` on a terminal. */
export function renderRecord<T>(item: T, columns: readonly Column<T>[]): string {
  const width = Math.max(...columns.map((c) => c.header.length));
  return `${columns.map((c) => `${c.header.padEnd(width)}  ${text(c.value(item))}`.trimEnd()).join('\n')}\n`;
}

/**
 * A cell as CSV, through the service's one CSV rule (@benchmarks/sdk/csv): text a spreadsheet would
 * run as a formula (CSV injection, OWASP: a leading `=`, `+`, `-`, `@`, tab or carriage return) gets a
 * leading `'`, typed numbers stay as they are (`-3` is a number); then quoted as RFC 4180 says.
 */
export function csvField(value: unknown): string {
  const s = text(value);
  return sharedCsvField(typeof value === 'number' ? s : csvText(s));
}

/** One CSV record, with its line break. */
export function csvRow(cells: readonly unknown[]): string {
  return `${cells.map(csvField).join(',')}\r\n`;
}

export function renderCsv<T>(items: readonly T[], columns: readonly Column<T>[]): string {
  return csvRow(columns.map((c) => c.header)) + items.map((item) => csvRow(columns.map((c) => c.value(item)))).join('');
}

export function renderJson(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Each value as JSON on a line of its own. */
export function renderNdjson(values: readonly unknown[]): string {
  return values.map((value) => `${JSON.stringify(value)}\n`).join('');
}

export function renderList<T>(format: OutputFormat, items: readonly T[], columns: readonly Column<T>[], layout?: TableLayout): string {
  if (format === 'json') return renderJson(items);
  if (format === 'ndjson') return renderNdjson(items);
  if (format === 'csv') return renderCsv(items, columns);
  return items.length === 0 ? '' : renderTable(items, columns, layout);
}

export function renderItem<T>(format: OutputFormat, item: T, columns: readonly Column<T>[]): string {
  if (format === 'json') return renderJson(item);
  if (format === 'ndjson') return renderNdjson([item]);
  if (format === 'csv') return renderCsv([item], columns);
  return renderRecord(item, columns);
}
