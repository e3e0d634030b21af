/**
 * The chart of a comparison (GET /results:compare): a standalone SVG to embed in a README or a page,
 * drawn the same way by the server (`format=svg`) and by clients (the CLI). One row per group in
 * answer order, labelled "site / flavor (n)" (with its rank), a thin line from p5 to p95, a bar for
 * the median's interval and a mark at the median, on a value axis with ticks, under a title naming
 * the benchmark, the metric and the direction. Pure functions; every text is escaped and the
 * document holds no script, no link and no external reference.
 */
import type { Static } from '@sinclair/typebox';
import type { Comparison } from './contract/compare.ts';

type CompareAnswer = Static<typeof Comparison>;
type CompareGroupAnswer = CompareAnswer['groups'][number];

const WIDTH = 860;
const LABEL_WIDTH = 300;
const PLOT_LEFT = LABEL_WIDTH + 20;
const PLOT_RIGHT = WIDTH - 30;
const TOP = 64;
const ROW = 26;
const AXIS_HEIGHT = 44;
const MAX_LABEL = 44;

/**
 * Escapes text for an XML text node or attribute value; drops characters XML 1.0 cannot hold.
 * @example
 * xmlEscape('a < b & "c"') // 'a &lt; b &amp; &quot;c&quot;'
 */
export function xmlEscape(text: string): string {
  return text
    .replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

function shorten(text: string, max = MAX_LABEL): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * A group's label: `site / flavor (n)`, or `site (n)` when grouped by site; long names shortened.
 * @example
 * groupLabel(comparison.groups[0]) // 'CESGA / hpc.8core-16ram (40)'
 */
export function groupLabel(group: CompareGroupAnswer): string {
  const name = group.flavor ? `${group.site.name} / ${group.flavor.name}` : group.site.name;
  return `${shorten(name)} (${group.n})`;
}

/**
 * Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten, about six of them
 * (at most 13, whatever the range: values near ±1.8e308, a range of a few float steps, where
 * adding a step no longer changes a value, or one of a few subnormals, which has only its ends).
 * @example
 * ticks(0, 10) // { values: [0, 2, 4, 6, 8, 10], decimals: 0 }
 */
export function ticks(lo: number, hi: number): { values: number[]; decimals: number } {
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo < hi)) return { values: Number.isFinite(lo) ? [lo] : [], decimals: 0 };
  const raw = Number.isFinite(hi - lo) ? (hi - lo) / 6 : hi / 6 - lo / 6;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw) ?? 10 * power;
  if (!(step > 0 && Number.isFinite(step))) return { values: [lo, hi], decimals: 0 };
  const first = Math.ceil(lo / step);
  const values: number[] = [];
  for (let i = 0; i <= 12; i++) {
    const v = (first + i) * step;
    if (v > hi + step * 1e-9) break;
    const value = Number(v.toPrecision(12));
    if (Number.isFinite(value) && value !== values.at(-1)) values.push(value);
  }
  return { values, decimals: Math.max(0, -Math.floor(Math.log10(step))) };
}

/**
 * A tick's label: `decimals` places (from {@link ticks}), or the shortest exponent form when that
 * would be too long (beyond 20 places, or from 1e21).
 * @example
 * tickLabel(2.5, 1) // '2.5'
 * tickLabel(1.5e-200, 201) // '1.5e-200'
 */
export function tickLabel(value: number, decimals: number): string {
  return decimals <= 20 && Math.abs(value) < 1e21 ? value.toFixed(decimals) : String(value);
}

/**
 * Where a value lies between `lo` and `hi` (lo < hi): 0 at lo, 1 at hi. A range wider than the
 * largest double (values near −1.8e308 and 1.8e308) is measured in halves, so nothing overflows.
 * @example
 * along(0, 10)(2.5) // 0.25
 */
export function along(lo: number, hi: number): (value: number) => number {
  const h = Number.isFinite(hi - lo) ? 1 : 0.5;
  const span = hi * h - lo * h;
  return (value) => (value * h - lo * h) / span;
}

/** `value` within the finite doubles. */
const finite = (value: number) => Math.min(Number.MAX_VALUE, Math.max(-Number.MAX_VALUE, value));

/** The value range drawn: every p5…p95 and interval, with a margin, within the finite doubles; never empty. */
function domain(groups: readonly CompareGroupAnswer[]): [number, number] {
  let lo = Math.min(...groups.map((g) => Math.min(g.p5, g.median_ci[0])));
  let hi = Math.max(...groups.map((g) => Math.max(g.p95, g.median_ci[1])));
  if (lo === hi) {
    const pad = Math.abs(lo) * 0.1 || 1;
    lo = finite(lo - pad);
    hi = finite(hi + pad);
  }
  const span = hi - lo;
  const margin = Number.isFinite(span) ? span * 0.05 : hi * 0.05 - lo * 0.05;
  return [finite(lo - margin), finite(hi + margin)];
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/**
 * The SVG document of a comparison; `benchmarkName` (`image:tag`) goes in the title.
 * @example
 * const comparison = await client.results.compare({ benchmark_id, metric: 'json.result.score' });
 * await writeFile('compare.svg', renderCompareSvg(comparison, 'ghcr.io/acme/c-ray:1.2'));
 */
export function renderCompareSvg(answer: CompareAnswer, benchmarkName: string): string {
  const groups = answer.groups;
  const height = TOP + Math.max(groups.length, 1) * ROW + AXIS_HEIGHT;
  const title = `${benchmarkName}: ${answer.metric} (${answer.better} is better)`;
  const subtitle =
    `Median (mark) and its ${fmt(answer.confidence * 100)}% interval (bar); thin line: p5–p95. ` +
    `${answer.matched} results, ${answer.excluded} without a number. Grey: not ranked.`;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="title" font-family="Helvetica, Arial, sans-serif" font-size="12">`,
    `<title id="title">${xmlEscape(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="24" font-size="15" font-weight="bold" fill="#111111">${xmlEscape(shorten(title, 100))}</text>`,
    `<text x="16" y="44" fill="#555555">${xmlEscape(subtitle)}</text>`,
  ];
  if (groups.length === 0) {
    out.push(`<text x="16" y="${TOP + 18}" fill="#555555">No result has a number at ${xmlEscape(answer.metric)}.</text>`, '</svg>');
    return out.join('\n');
  }
  const [lo, hi] = domain(groups);
  const at = along(lo, hi);
  const x = (v: number) => (PLOT_LEFT + at(v) * (PLOT_RIGHT - PLOT_LEFT)).toFixed(1);
  const axisY = TOP + groups.length * ROW + 6;
  const { values, decimals } = ticks(lo, hi);
  for (const v of values) {
    out.push(
      `<line x1="${x(v)}" y1="${TOP - 4}" x2="${x(v)}" y2="${axisY}" stroke="#eeeeee"/>`,
      `<text x="${x(v)}" y="${axisY + 16}" text-anchor="middle" fill="#333333">${tickLabel(v, decimals)}</text>`,
    );
  }
  out.push(`<line x1="${PLOT_LEFT}" y1="${axisY}" x2="${PLOT_RIGHT}" y2="${axisY}" stroke="#333333"/>`);
  out.push(
    `<text x="${(PLOT_LEFT + PLOT_RIGHT) / 2}" y="${axisY + 34}" text-anchor="middle" fill="#333333">${xmlEscape(answer.metric)}</text>`,
  );
  groups.forEach((g, i) => {
    const y = TOP + i * ROW + ROW / 2;
    const ranked = g.rank !== null;
    const color = ranked ? '#2f5d8c' : '#9a9a9a';
    const rank = ranked ? `#${g.rank} ` : '– ';
    out.push(
      `<g class="row" data-rank="${g.rank ?? ''}">`,
      `<text x="${LABEL_WIDTH}" y="${y + 4}" text-anchor="end" fill="${ranked ? '#111111' : '#777777'}">${xmlEscape(rank + groupLabel(g))}</text>`,
      `<line x1="${x(g.p5)}" y1="${y}" x2="${x(g.p95)}" y2="${y}" stroke="${color}" stroke-width="1"/>`,
      `<rect x="${x(g.median_ci[0])}" y="${y - 6}" width="${Math.max(1, Number(x(g.median_ci[1])) - Number(x(g.median_ci[0]))).toFixed(1)}" height="12" fill="${color}" fill-opacity="0.35"/>`,
      `<rect x="${(Number(x(g.median)) - 1.5).toFixed(1)}" y="${y - 8}" width="3" height="16" fill="${color}"/>`,
      `</g>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
