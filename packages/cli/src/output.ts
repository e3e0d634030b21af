/**
 * Renders data on stdout: an aligned table (for people), JSON (for programs), CSV with a header
 * (for spreadsheets). Lists print an array in JSON; one item prints an object.
 */
import type { OutputFormat } from './config.ts';

/** One column: its header and how to show an item's value in it. */
export interface Column<T> {
  header: string;
  value: (item: T) => unknown;
  /** Cells longer than this are cut in tables (never in CSV or JSON). */
  max?: number;
}

export function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

const cut = (value: string, max: number) => (value.length > max ? `${value.slice(0, Math.max(1, max - 1))}…` : value);
const oneLine = (value: string) => value.replace(/\s*[\r\n]+\s*/g, ' ');

export function renderTable<T>(items: readonly T[], columns: readonly Column<T>[]): string {
  const rows = items.map((item) => columns.map((c) => cut(oneLine(text(c.value(item))), c.max ?? 60)));
  const headers = columns.map((c) => c.header.toUpperCase());
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}

/** One item as `KEY  value` lines, for `get` on a terminal. */
export function renderRecord<T>(item: T, columns: readonly Column<T>[]): string {
  const width = Math.max(...columns.map((c) => c.header.length));
  return `${columns.map((c) => `${c.header.padEnd(width)}  ${text(c.value(item))}`.trimEnd()).join('\n')}\n`;
}

/**
 * Cells a spreadsheet would run as a formula (CSV injection, OWASP): text starting with `=`, `+`,
 * `-`, `@`, a tab or a carriage return gets a leading `'`, which spreadsheets show as text. Typed
 * numbers are left as they are: `-3` is read as a number, never as a formula, and stays one.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: unknown): string {
  const s = text(value);
  if (typeof value === 'number') return s;
  return FORMULA_START.test(s) ? `'${s}` : s;
}

/** RFC 4180: quote a field holding a comma, a quote or a line break, doubling quotes (after the formula guard). */
export function csvField(value: unknown): string {
  const s = csvCell(value);
  return /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
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

/** A list in the chosen format. */
export function renderList<T>(format: OutputFormat, items: readonly T[], columns: readonly Column<T>[]): string {
  if (format === 'json') return renderJson(items);
  if (format === 'csv') return renderCsv(items, columns);
  return items.length === 0 ? '' : renderTable(items, columns);
}

/** One item in the chosen format. */
export function renderItem<T>(format: OutputFormat, item: T, columns: readonly Column<T>[]): string {
  if (format === 'json') return renderJson(item);
  if (format === 'csv') return renderCsv([item], columns);
  return renderRecord(item, columns);
}
