/**
 * The CSV answer of GET /results:changes: a header and one row per change point, groups in answer
 * order, as compare's (services/compare/compare-csv.ts: RFC 4180, names a spreadsheet would read as a
 * formula prefixed with `'`).
 */
import type { ChangesAnswer, ChangesGroupAnswer } from './changes.ts';
import { csvField, csvText as text, type CsvCell as Cell } from '@benchmarks/sdk/csv';

type Row = { group: ChangesGroupAnswer; change: ChangesGroupAnswer['changes'][number] };

const COLUMNS: [string, (r: Row) => Cell][] = [
  ['site_name', (r) => text(r.group.site.name)],
  ['flavor_name', (r) => (r.group.flavor ? text(r.group.flavor.name) : null)],
  ['at', (r) => text(r.change.at)],
  ['result_id', (r) => text(r.change.result_id)],
  ['index', (r) => r.change.index],
  ['before_mean', (r) => r.change.before.mean],
  ['after_mean', (r) => r.change.after.mean],
  ['magnitude', (r) => r.change.magnitude],
  ['pvalue', (r) => r.change.pvalue],
  ['direction', (r) => text(r.change.direction)],
];

export const CHANGES_CSV_COLUMNS = COLUMNS.map(([name]) => name);

export function changesCsv(answer: ChangesAnswer): string {
  const lines = [CHANGES_CSV_COLUMNS.join(',')];
  for (const group of answer.groups) {
    for (const change of group.changes) lines.push(COLUMNS.map(([, cell]) => csvField(cell({ group, change }))).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
