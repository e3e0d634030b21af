/**
 * The terminal chart of a comparison, one row per group in ranking order, scaled to the width
 * available: a thin line from p5 to p95, a thick bar over the median's interval and a mark at the
 * median, then a value axis with round ticks (the same ticks as the SVG chart).
 */
import { along, tickLabel, ticks } from '@benchmarks/sdk/chart';
import { groupLabel, num, paint, rankText, type Comparison, type Group, type Look, type Paint } from './look.ts';

interface Glyphs {
  line: string;
  bar: string;
  median: string;
  open: string;
  close: string;
  axis: string;
  tick: string;
}

const ASCII: Glyphs = { line: '-', bar: '=', median: '|', open: '[', close: ']', axis: '-', tick: '+' };
const UNICODE: Glyphs = { line: '─', bar: '━', median: '┃', open: '━', close: '━', axis: '─', tick: '┴' };

/** The plot's narrowest width, whatever the terminal. */
const MIN_PLOT = 20;

/** The values drawn: every p5 to p95 and every median interval; never an empty range, never beyond the finite doubles. */
function domain(groups: readonly Group[]): [number, number] {
  const lo = Math.min(...groups.map((g) => Math.min(g.p5, g.median_ci[0])));
  const hi = Math.max(...groups.map((g) => Math.max(g.p95, g.median_ci[1])));
  if (lo < hi) return [lo, hi];
  const pad = Math.abs(lo) * 0.1 || 1;
  return [Math.max(-Number.MAX_VALUE, lo - pad), Math.min(Number.MAX_VALUE, hi + pad)];
}

type Cell = { ch: string; how?: Paint | undefined };

/** Cells as text, each run of one paint coloured once. */
function paintCells(cells: readonly Cell[], look: Look): string {
  let out = '';
  for (let i = 0; i < cells.length; ) {
    let j = i;
    let run = '';
    while (j < cells.length && cells[j]!.how === cells[i]!.how) run += cells[j++]!.ch;
    out += paint(look, cells[i]!.how, run);
    i = j;
  }
  return out.trimEnd();
}

function plotRow(group: Group, x: (v: number) => number, width: number, glyphs: Glyphs, look: Look): string {
  const cells: Cell[] = Array.from({ length: width }, () => ({ ch: ' ' }));
  const ranked = group.rank !== null;
  const fill = (from: number, to: number, ch: string, how: Paint | undefined) => {
    for (let c = Math.max(0, from); c <= Math.min(width - 1, to); c++) cells[c] = { ch, how };
  };
  fill(x(group.p5), x(group.p95), glyphs.line, 'dim');
  const [low, high] = [x(group.median_ci[0]), x(group.median_ci[1])];
  fill(low, high, glyphs.bar, ranked ? 'cyan' : 'dim');
  if (high - low >= 2) {
    fill(low, low, glyphs.open, ranked ? 'cyan' : 'dim');
    fill(high, high, glyphs.close, ranked ? 'cyan' : 'dim');
  }
  fill(x(group.median), x(group.median), glyphs.median, ranked ? 'bold' : 'dim');
  return paintCells(cells, look);
}

/** Tick marks on the axis line, and their values below, none overlapping. */
function axis(lo: number, hi: number, x: (v: number) => number, width: number, glyphs: Glyphs): [string, string] {
  const line = Array.from({ length: width }, () => glyphs.axis);
  const labels = Array.from({ length: width }, () => ' ');
  const { values, decimals } = ticks(lo, hi);
  let free = 0;
  for (const value of values) {
    const at = x(value);
    if (at < 0 || at >= width) continue;
    line[at] = glyphs.tick;
    const text = tickLabel(value, decimals);
    const start = Math.min(width - text.length, Math.max(0, at - Math.floor(text.length / 2)));
    if (start < free) continue;
    for (let i = 0; i < text.length; i++) labels[start + i] = text[i]!;
    free = start + text.length + 1;
  }
  return [line.join(''), labels.join('').trimEnd()];
}

/**
 * The chart's lines: one row per group (`rank  label  plot`), the axis, its values, and a legend.
 * @example
 * for (const line of compareChart(answer, { unicode: false, color: false, width: 80 })) console.log(line);
 */
export function compareChart(answer: Comparison, look: Look): string[] {
  const glyphs = look.unicode ? UNICODE : ASCII;
  const groups = answer.groups;
  const ranks = groups.map((g) => rankText(g, look));
  const labels = groups.map((g) => groupLabel(g, look, 32));
  const rankWidth = Math.max(...ranks.map((r) => r.length));
  const labelWidth = Math.max(...labels.map((l) => [...l].length));
  const indent = rankWidth + 2 + labelWidth + 2;
  const width = Math.max(MIN_PLOT, look.width - indent - 1);
  const [lo, hi] = domain(groups);
  const at = along(lo, hi);
  const x = (v: number) => Math.round(at(v) * (width - 1));
  const rows = groups.map((g, i) => {
    const label = `${ranks[i]!.padStart(rankWidth)}  ${labels[i]!}${' '.repeat(labelWidth - [...labels[i]!].length)}  `;
    return paint(look, g.rank === null ? 'dim' : undefined, label) + plotRow(g, x, width, glyphs, look);
  });
  const [line, values] = axis(lo, hi, x, width, glyphs);
  const pad = ' '.repeat(indent);
  const percent = num(answer.confidence * 100);
  const legend = look.unicode
    ? `${glyphs.line.repeat(2)} p5–p95   ${glyphs.bar.repeat(2)} median's ${percent}% interval   ${glyphs.median} median`
    : `-- p5 to p95   [==] median's ${percent}% interval   | median`;
  return [...rows, pad + paint(look, 'dim', line), `${pad}${values}`, `${pad}${answer.metric}`, '', legend];
}
