/**
 * The chart of change points (GET /results:changes): a standalone SVG of small multiples, a panel
 * per group on one shared time axis, each with its own value axis (any finite values draw). A
 * regression's mark is a red downward triangle, an improvement's a green upward one: shape and
 * colour both tell them apart. Pure functions; every text is escaped and the document holds no
 * script and no external reference.
 */
import type { Static } from '@sinclair/typebox';
import { drawableRange, scaleOf, ticks } from './axis.ts';
import { xmlEscape } from './chart.ts';
import type { Changes } from './contract/changes.ts';

type ChangesAnswer = Static<typeof Changes>;
type ChangesGroupAnswer = ChangesAnswer['groups'][number];

/**
 * The pixel columns of one series, four numbers each: the column, its points' lowest and highest
 * value, and how many there are. A typed array: a sketch of 10,000 series takes 0.2 MB a thousand
 * points off the JavaScript heap, not millions of objects on it.
 */
export type SketchColumns = Float64Array;

/** The points of every series bucketed into `columns` columns of one shared time axis. */
export interface Sketch {
  /** The time axis, epoch milliseconds. */
  from: number;
  to: number;
  columns: number;
  groups: SketchColumns[];
}

const WIDTH = 860;
const PLOT_LEFT = 90;
const PLOT_RIGHT = WIDTH - 20;
const COLUMNS = PLOT_RIGHT - PLOT_LEFT;
const TOP = 60;
const PANEL = 128;
const PANEL_TITLE = 20;
const PLOT_HEIGHT = 76;
const MAX_LABEL = 80;

/**
 * The sketch of series given as execution times (epoch milliseconds) and values, in the answer's
 * group order: what the chart draws of the points, a few hundred numbers per series however long.
 * @example
 * const sketch = sketchSeries([{ times: [Date.parse('2026-01-01'), Date.parse('2026-01-02')], values: [101, 99] }]);
 */
export function sketchSeries(series: readonly { times: ArrayLike<number>; values: ArrayLike<number> }[], columns = COLUMNS): Sketch {
  let from = Number.POSITIVE_INFINITY;
  let to = Number.NEGATIVE_INFINITY;
  for (const s of series) {
    if (s.times.length === 0) continue;
    from = Math.min(from, s.times[0]!);
    to = Math.max(to, s.times[s.times.length - 1]!);
  }
  [from, to] = Number.isFinite(from) ? [from, to] : [0, 0];
  return { from, to, columns, groups: series.map((s) => sketchColumns(s.times, s.values, from, to, columns)) };
}

/**
 * One series' columns on the time axis [from, to] (the axis every panel shares, `sketchSeries`).
 * @example
 * const columns = sketchColumns(times, values, Date.parse('2026-01-01'), Date.parse('2026-02-01'));
 */
export function sketchColumns(
  times: ArrayLike<number>,
  values: ArrayLike<number>,
  from: number,
  to: number,
  columns = COLUMNS,
): SketchColumns {
  const at = scaleOf(...drawableRange(from, to, 0.02));
  let out = new Float64Array(4 * Math.max(1, Math.min(columns, times.length)));
  let k = -4;
  for (let i = 0; i < times.length; i++) {
    const column = Math.min(columns - 1, Math.floor(at(times[i]!) * columns));
    const v = values[i]!;
    if (k >= 0 && out[k] === column) {
      out[k + 1] = Math.min(out[k + 1]!, v);
      out[k + 2] = Math.max(out[k + 2]!, v);
      out[k + 3]!++;
      continue;
    }
    k += 4;
    // Times out of order revisit columns: room for more.
    if (k === out.length) {
      const grown = new Float64Array(2 * out.length);
      grown.set(out);
      out = grown;
    }
    out.set([column, v, v, 1], k);
  }
  return out.slice(0, k + 4);
}

/** The columns of the chart's time axis (its plot's width in pixels). */
export const SKETCH_COLUMNS = COLUMNS;

const shorten = (text: string, max = MAX_LABEL) => {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
};
const fmt = (v: number) => String(Number(v.toPrecision(4)));
/** A time axis' label: the UTC date. */
const dateOf = (t: number) => (Number.isFinite(t) && Math.abs(t) <= 8.64e15 ? new Date(t).toISOString().slice(0, 10) : '');
/** A timestamp of the answer (UTC, with or without the zone designator) as epoch milliseconds. */
const timeOf = (text: string) => Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(text) ? text : `${text}Z`);

/**
 * The SVG document of an answer and the sketch of its series (`sketchSeries`, same group order);
 * `benchmarkName` (`image:tag`) goes in the title.
 * @example
 * await writeFile('changes.svg', await client.results.changesSvg({ benchmark_id, metric: 'json.result.score' }));
 */
export function renderChangesSvg(answer: ChangesAnswer, benchmarkName: string, sketch?: Sketch): string {
  const groups = answer.groups;
  const height = TOP + Math.max(groups.length, 1) * PANEL + 16;
  const title = `${benchmarkName}: ${answer.metric} over time (${answer.better} is better)`;
  const changes = groups.reduce((sum, g) => sum + g.changes.length, 0);
  const subtitle =
    `${changes} change point${changes === 1 ? '' : 's'} (p ≤ ${fmt(answer.max_pvalue)}, ≥ ${fmt(answer.min_magnitude * 100)}% of the mean). ` +
    '▼ red: regression; ▲ green: improvement; grey lines: segment means.';
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="title" font-family="Helvetica, Arial, sans-serif" font-size="11">`,
    `<title id="title">${xmlEscape(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="15" font-weight="bold" fill="#111111">${xmlEscape(shorten(title, 100))}</text>`,
    `<text x="16" y="44" font-size="12" fill="#555555">${xmlEscape(subtitle)}</text>`,
  ];
  if (groups.length === 0) {
    out.push(`<text x="16" y="${TOP + 18}" fill="#555555">No result has a number at ${xmlEscape(answer.metric)}.</text>`, '</svg>');
    return `${out.join('\n')}\n`;
  }
  const times = groups.flatMap((g) => [timeOf(g.first), timeOf(g.last)]);
  const from = sketch?.from ?? Math.min(...times);
  const to = sketch?.to ?? Math.max(...times);
  const atTime = scaleOf(...drawableRange(from, to, 0.02));
  const tx = (t: number) => PLOT_LEFT + atTime(t) * COLUMNS;
  const axis = { tx, from, to };
  groups.forEach((g, i) => {
    out.push(...panel(g, TOP + i * PANEL, axis, sketch?.groups[i], sketch?.columns ?? COLUMNS));
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function panel(
  g: ChangesGroupAnswer,
  top: number,
  { tx, from, to }: { tx: (t: number) => number; from: number; to: number },
  columns: SketchColumns = new Float64Array(0),
  columnCount: number,
): string[] {
  const name = g.flavor ? `${g.site.name} / ${g.flavor.name}` : g.site.name;
  const label = `${shorten(name)} (${g.n} points, ${g.changes.length} change${g.changes.length === 1 ? '' : 's'})`;
  const plotTop = top + PANEL_TITLE;
  const plotBottom = plotTop + PLOT_HEIGHT;
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < columns.length; i += 4) [lo, hi] = [Math.min(lo, columns[i + 1]!), Math.max(hi, columns[i + 2]!)];
  for (const s of g.segments) [lo, hi] = [Math.min(lo, s.mean), Math.max(hi, s.mean)];
  [lo, hi] = drawableRange(lo, hi, 0.08);
  const atValue = scaleOf(lo, hi);
  const vy = (v: number) => (plotBottom - atValue(v) * PLOT_HEIGHT).toFixed(1);
  const out = [
    `<g class="panel" data-changes="${g.changes.length}">`,
    `<text x="${PLOT_LEFT}" y="${top + 13}" font-size="12" font-weight="bold" fill="#111111">${xmlEscape(label)}</text>`,
    `<rect x="${PLOT_LEFT}" y="${plotTop}" width="${COLUMNS}" height="${PLOT_HEIGHT}" fill="none" stroke="#cccccc"/>`,
  ];
  const axis = ticks(lo, hi);
  const shown = axis.values.length > 4 ? axis.values.filter((_, k) => k % 2 === 0) : axis.values;
  for (const v of shown) {
    const y = vy(v);
    out.push(
      `<line x1="${PLOT_LEFT}" y1="${y}" x2="${PLOT_RIGHT}" y2="${y}" stroke="#f0f0f0"/>`,
      `<text x="${PLOT_LEFT - 6}" y="${Number(y) + 4}" text-anchor="end" fill="#555555">${xmlEscape(axis.labels[axis.values.indexOf(v)]!)}</text>`,
    );
  }
  // The time axis is the same in every panel: its first and last dates under its ends.
  out.push(
    `<text x="${tx(from).toFixed(1)}" y="${plotBottom + 14}" text-anchor="middle" fill="#555555">${dateOf(from)}</text>`,
    `<text x="${tx(to).toFixed(1)}" y="${plotBottom + 14}" text-anchor="middle" fill="#555555">${dateOf(to)}</text>`,
  );
  const columnWidth = COLUMNS / columnCount;
  for (let i = 0; i < columns.length; i += 4) {
    const [column, lo, hi] = [columns[i]!, columns[i + 1]!, columns[i + 2]!];
    const x = (PLOT_LEFT + (column + 0.5) * columnWidth).toFixed(1);
    if (lo === hi) out.push(`<circle class="point" cx="${x}" cy="${vy(lo)}" r="1.6" fill="#2f5d8c"/>`);
    else out.push(`<line class="point" x1="${x}" y1="${vy(lo)}" x2="${x}" y2="${vy(hi)}" stroke="#2f5d8c" stroke-width="1.2"/>`);
  }
  for (const s of g.segments) {
    const y = vy(s.mean);
    out.push(
      `<line class="segment" x1="${tx(timeOf(s.from)).toFixed(1)}" y1="${y}" x2="${Math.max(tx(timeOf(s.to)), tx(timeOf(s.from)) + 1).toFixed(1)}" y2="${y}" stroke="#555555" stroke-width="2"/>`,
    );
  }
  for (const c of g.changes) {
    const x = tx(timeOf(c.at));
    const regression = c.direction === 'regression';
    const colour = regression ? '#c0392b' : '#1e8449';
    // ▼ below the plot's top for a regression, ▲ above its bottom for an improvement.
    const [edge, tip] = regression ? [plotTop + 1, plotTop + 10] : [plotBottom - 1, plotBottom - 10];
    const mark = `${(x - 5).toFixed(1)},${edge} ${(x + 5).toFixed(1)},${edge} ${x.toFixed(1)},${tip}`;
    const magnitude = c.magnitude === null ? '' : ` ${c.magnitude > 0 ? '+' : ''}${fmt(c.magnitude * 100)}%`;
    out.push(
      `<g class="change ${c.direction}">`,
      `<title>${xmlEscape(`${c.direction} at ${c.at}:${magnitude} (p = ${c.pvalue.toPrecision(2)})`)}</title>`,
      `<line x1="${x.toFixed(1)}" y1="${plotTop}" x2="${x.toFixed(1)}" y2="${plotBottom}" stroke="${colour}" stroke-dasharray="4 3"/>`,
      `<polygon points="${mark}" fill="${colour}"/>`,
      '</g>',
    );
  }
  out.push('</g>');
  return out;
}
