/**
 * CSV cells, one rule for the service's CSV answers (exports, comparisons) and the CLI's
 * `--output csv` (RFC 4180: fields with a comma, a quote or a line break quoted, quotes doubled). User text that a spreadsheet would read as a formula (a leading `=`,
 * `+`, `-`, `@`, tab or carriage return; OWASP's CSV injection list) is prefixed with `'`, so
 * opening the file never runs anything. Numbers are never prefixed: `-3` stays a number.
 */
export type CsvCell = string | number | null;

/** A user's text: formula guard. */
export function csvText(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** One field: null is empty, numbers as JavaScript prints them, text quoted when it must be. */
export function csvField(value: CsvCell): string {
  if (value === null) return '';
  const s = String(value);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
