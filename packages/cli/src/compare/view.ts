/**
 * `compare`'s table output: a title, the ranked table (rank, group, median, its interval, p5–p95,
 * and price columns when a group has a price), the terminal chart, and what the marks mean.
 */
import { isBaseline, ratioText } from '@benchmarks/sdk/chart';
import { compareChart } from './chart.ts';
import { groupLabel, interval, num, paint, rankText, type Comparison, type Group, type Look, type Paint } from './look.ts';

interface Column {
  header: string;
  cell: (g: Group) => string;
  right?: boolean;
  /** Left out, in this order, when the table is wider than the output: p5–p95 (the chart draws it), then the interval per price. */
  drop?: number;
}

function columns(answer: Comparison, look: Look): Column[] {
  const dash = look.unicode ? '–' : '-';
  const percent = num(answer.confidence * 100);
  const out: Column[] = [
    { header: 'RANK', cell: (g) => rankText(g, look), right: true },
    { header: answer.group_by === 'flavor' ? 'SITE / FLAVOR (N)' : 'SITE (N)', cell: (g) => groupLabel(g, look) },
    { header: 'MEDIAN', cell: (g) => num(g.median), right: true },
    { header: `MEDIAN ${percent}% CI`, cell: (g) => interval(g.median_ci) },
    { header: `P5${dash}P95`, cell: (g) => interval([g.p5, g.p95]), drop: 1 },
  ];
  if (answer.baseline) {
    const times = look.unicode ? '×' : 'x';
    out.push({
      header: `RATIO TO BASELINE [${percent}% CI]`,
      cell: (g) => (isBaseline(answer, g) ? 'baseline' : g.vs_baseline ? ratioText(g.vs_baseline).replace('×', times) : ''),
    });
  }
  if (answer.groups.some((g) => g.price !== null)) {
    const per = answer.better === 'higher' ? 'MEDIAN PER PRICE' : look.unicode ? 'MEDIAN × PRICE' : 'MEDIAN x PRICE';
    out.push(
      { header: 'PRICE', cell: (g) => (g.price ? `${num(g.price.per_hour)} ${g.price.currency}/h` : '') },
      { header: per, cell: (g) => (g.per_price ? num(g.per_price.median) : ''), right: true },
      { header: `${per} CI`, cell: (g) => (g.per_price ? interval(g.per_price.median_ci) : ''), drop: 2 },
    );
  }
  return out;
}

const length = (s: string) => [...s].length;
const GAP = 2;

/** The columns that fit the width, dropping the droppable ones in their order while they do not. */
function fitting(cols: Column[], groups: readonly Group[], width: number): { cols: Column[]; widths: number[] } {
  const widthOf = (c: Column) => groups.reduce((w, g) => Math.max(w, length(c.cell(g))), length(c.header));
  let kept = cols;
  for (;;) {
    const widths = kept.map(widthOf);
    const total = widths.reduce((sum, w) => sum + w, 0) + GAP * (kept.length - 1);
    const next = Math.min(...kept.map((c) => c.drop ?? Number.POSITIVE_INFINITY));
    if (total <= width || next === Number.POSITIVE_INFINITY) return { cols: kept, widths };
    kept = kept.filter((c) => c.drop !== next);
  }
}

/** The table's lines, padded by characters (names may hold any letter). */
function table(answer: Comparison, look: Look): string[] {
  const { cols, widths } = fitting(columns(answer, look), answer.groups, look.width);
  const rows = answer.groups.map((g) => cols.map((c) => c.cell(g)));
  const line = (cells: string[], how?: Paint) =>
    paint(
      look,
      how,
      cells
        .map((cell, i) => {
          const fill = ' '.repeat(widths[i]! - length(cell));
          return cols[i]!.right ? fill + cell : cell + fill;
        })
        .join(' '.repeat(GAP))
        .trimEnd(),
    );
  return [
    line(
      cols.map((c) => c.header),
      'bold',
    ),
    ...rows.map((r, i) => line(r, answer.groups[i]!.rank === null ? 'dim' : undefined)),
  ];
}

/** What unranked means here: too few values, or (ranking by price) no price in the currency. */
function unrankedNote(answer: Comparison, look: Look, minSamples: number, currency: string | undefined): string | undefined {
  if (!answer.groups.some((g) => g.rank === null)) return undefined;
  const dash = look.unicode ? '–' : '-';
  const why = `fewer than ${minSamples} values${answer.rank_by === 'price' ? ` or no price in ${currency}` : ''}`;
  return `${dash} not ranked: ${why}.`;
}

/**
 * The whole text of `compare --output table`, ending with a newline; `benchmark` is its `image:tag`.
 * @example
 * process.stdout.write(compareText(answer, 'ghcr.io/org/bench:1.0', look, { minSamples: 5 }));
 */
export function compareText(
  answer: Comparison,
  benchmark: string,
  look: Look,
  options: { minSamples: number; currency?: string | undefined },
): string {
  const title = `${benchmark}: ${answer.metric} (${answer.better} is better), by ${answer.group_by}${answer.rank_by === 'price' ? ', ranked by value for money' : ''}`;
  const counts = `${answer.matched} results matched, ${answer.excluded} without a number at ${answer.metric}.`;
  const note = unrankedNote(answer, look, options.minSamples, options.currency);
  const tie = 'Groups whose median intervals overlap share a rank.';
  const lines = [paint(look, 'bold', title), '', ...table(answer, look), '', ...compareChart(answer, look), '', counts, tie];
  if (note) lines.push(note);
  if (answer.baseline) {
    lines.push(
      "Ratio: how many times the baseline's values this group's are (Hodges-Lehmann), with its interval; " +
        `empty with fewer than ${options.minSamples} values or a value <= 0 on either side.`,
    );
  }
  return `${lines.join('\n')}\n`;
}
