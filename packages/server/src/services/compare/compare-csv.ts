/**
 * The CSV answer of GET /results:compare: a header and one row per group, in answer order, CRLF line
 * ends, cells by the service's one rule (@benchmarks/sdk/csv: RFC 4180, formulas guarded). With
 * `baseline`, four more columns: the ratio to the baseline, its interval and the p-value (empty where null).
 */
import type { CompareAnswer, CompareGroupAnswer } from './compare.ts';
import { csvField, csvText as text, type CsvCell as Cell } from '@benchmarks/sdk/csv';

const COLUMNS: [string, (g: CompareGroupAnswer) => Cell][] = [
  ['site_name', (g) => text(g.site.name)],
  ['flavor_name', (g) => (g.flavor ? text(g.flavor.name) : null)],
  ['n', (g) => g.n],
  ['mean', (g) => g.mean],
  ['stddev', (g) => g.stddev],
  ['min', (g) => g.min],
  ['p5', (g) => g.p5],
  ['p25', (g) => g.p25],
  ['median', (g) => g.median],
  ['p75', (g) => g.p75],
  ['p95', (g) => g.p95],
  ['max', (g) => g.max],
  ['median_ci_low', (g) => g.median_ci[0]],
  ['median_ci_high', (g) => g.median_ci[1]],
  ['mean_ci_low', (g) => g.mean_ci?.[0] ?? null],
  ['mean_ci_high', (g) => g.mean_ci?.[1] ?? null],
  ['rank', (g) => g.rank],
  ['price_per_hour', (g) => g.price?.per_hour ?? null],
  ['currency', (g) => (g.price ? text(g.price.currency) : null)],
  ['per_price_median', (g) => g.per_price?.median ?? null],
  ['per_price_ci_low', (g) => g.per_price?.median_ci[0] ?? null],
  ['per_price_ci_high', (g) => g.per_price?.median_ci[1] ?? null],
  ['out_of_range', (g) => g.out_of_range.join(';')],
];

const BASELINE_COLUMNS: [string, (g: CompareGroupAnswer) => Cell][] = [
  ['ratio', (g) => g.vs_baseline?.ratio ?? null],
  ['ratio_ci_low', (g) => g.vs_baseline?.ratio_ci?.[0] ?? null],
  ['ratio_ci_high', (g) => g.vs_baseline?.ratio_ci?.[1] ?? null],
  ['ratio_pvalue', (g) => g.vs_baseline?.pvalue ?? null],
];

export function compareCsv(answer: CompareAnswer): string {
  const columns = answer.baseline ? [...COLUMNS, ...BASELINE_COLUMNS] : COLUMNS;
  const lines = [columns.map(([name]) => name).join(',')];
  for (const group of answer.groups) lines.push(columns.map(([, cell]) => csvField(cell(group))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}
