/**
 * The terminal chart of a comparison, one row per group in ranking order, scaled to the width
 * available: a thin line from p5 to p95, a thick bar over the median's interval and a mark at the
 * median, then a value axis with round ticks (the same ticks as the SVG chart).
 */
import { type Ticks, valueAxis } from '@benchmarks/sdk/chart';
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
function axis(ticks: Ticks, x: (v: number) => number, width: number, glyphs: Glyphs): [string, string] {
  const line = Array.from({ length: width }, () => glyphs.axis);
  const labels = Array.from({ length: width }, () => ' ');
  let free = 0;
  for (const [i, value] of ticks.values.entries()) {
    const at = x(value);
    if (!(at >= 0 && at < width)) continue;
    line[at] = glyphs.tick;
    const text = ticks.labels[i]!;
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
  // Loops, not Math.max(...spread): a spread of one argument per group throws past about 125,000 groups.
  const rankWidth = ranks.reduce((w, r) => Math.max(w, r.length), 0);
  const labelWidth = labels.reduce((w, l) => Math.max(w, [...l].length), 0);
  const indent = rankWidth + 2 + labelWidth + 2;
  const width = Math.max(MIN_PLOT, look.width - indent - 1);
  const scale = valueAxis(groups);
  const column = (at: number) => Math.round(at * (width - 1));
  const x = (v: number) => column(scale.drawn(v));
  const rows = groups.map((g, i) => {
    const label = `${ranks[i]!.padStart(rankWidth)}  ${labels[i]!}${' '.repeat(labelWidth - [...labels[i]!].length)}  `;
    return paint(look, g.rank === null ? 'dim' : undefined, label) + plotRow(g, x, width, glyphs, look);
  });
  const [line, values] = axis(scale.ticks, (v) => column(scale.at(v)), width, glyphs);
  const pad = ' '.repeat(indent);
  const percent = num(answer.confidence * 100);
  const legend = look.unicode
    ? `${glyphs.line.repeat(2)} p5–p95   ${glyphs.bar.repeat(2)} median's ${percent}% interval   ${glyphs.median} median`
    : `-- p5 to p95   [==] median's ${percent}% interval   | median`;
  return [...rows, pad + paint(look, 'dim', line), `${pad}${values}`, `${pad}${answer.metric}`, '', legend];
}
