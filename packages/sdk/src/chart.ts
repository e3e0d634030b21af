/**
 * The chart of a comparison (GET /results:compare): a standalone SVG to embed in a README or a page,
 * drawn the same way by the server (`format=svg`) and by clients (the CLI): a row per group in
 * answer order, with the baseline marked and its median dashed across when the answer has one.
 * Pure functions; every text is escaped and the document holds no script, no link and no external
 * reference.
 */
import type { Static } from '@sinclair/typebox';
import { valueAxis } from './axis.ts';
import type { Comparison } from './contract/compare.ts';

export { MAX_TICKS, ticks, valueAxis, type Ticks, type ValueAxis } from './axis.ts';

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

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(4))));

/**
 * A ratio to the baseline as a text: three significant digits and ×, its interval when known.
 * @example
 * ratioText({ ratio: 1.3512, ratio_ci: [1.3, 1.41], pvalue: 0.00002 }) // '1.35× [1.30, 1.41]'
 */
export function ratioText(vs: { ratio: number; ratio_ci: [number, number] | null }, withInterval = true): string {
  const r = (v: number) =>
    v === 0 ? '0' : Math.abs(v) >= 1e6 || Math.abs(v) < 1e-3 ? v.toExponential(2) : Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3);
  const interval = withInterval && vs.ratio_ci ? ` [${r(vs.ratio_ci[0])}, ${r(vs.ratio_ci[1])}]` : '';
  return `${r(vs.ratio)}×${interval}`;
}

/** Whether `group` is the answer's baseline (by flavor or by site, as grouped). */
export function isBaseline(answer: CompareAnswer, group: CompareGroupAnswer): boolean {
  if (!answer.baseline) return false;
  return (answer.group_by === 'site' ? group.site.id : group.flavor?.id) === answer.baseline;
}

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
  const base = groups.find((g) => isBaseline(answer, g));
  const subtitle =
    `Median (mark) and its ${fmt(answer.confidence * 100)}% interval (bar); thin line: p5–p95. ` +
    `${answer.matched} results, ${answer.excluded} without a number. Grey: not ranked.` +
    (base ? " Dashed: the baseline's median; × its ratio." : '');
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
  // 5% of the range on each side, so that no mark sits on the plot's edge.
  const axis = valueAxis(groups, 0.05);
  const plotX = (at: number) => (PLOT_LEFT + at * (PLOT_RIGHT - PLOT_LEFT)).toFixed(1);
  const x = (v: number) => plotX(axis.drawn(v));
  const axisY = TOP + groups.length * ROW + 6;
  axis.ticks.values.forEach((v, i) => {
    const tickX = plotX(axis.at(v));
    out.push(
      `<line x1="${tickX}" y1="${TOP - 4}" x2="${tickX}" y2="${axisY}" stroke="#eeeeee"/>`,
      `<text x="${tickX}" y="${axisY + 16}" text-anchor="middle" fill="#333333">${xmlEscape(axis.ticks.labels[i]!)}</text>`,
    );
  });
  out.push(`<line x1="${PLOT_LEFT}" y1="${axisY}" x2="${PLOT_RIGHT}" y2="${axisY}" stroke="#333333"/>`);
  out.push(
    `<text x="${(PLOT_LEFT + PLOT_RIGHT) / 2}" y="${axisY + 34}" text-anchor="middle" fill="#333333">${xmlEscape(answer.metric)}</text>`,
  );
  if (base) {
    const baseX = x(base.median);
    out.push(
      `<line class="baseline" x1="${baseX}" y1="${TOP - 4}" x2="${baseX}" y2="${axisY}" stroke="#b35900" stroke-width="1.5" stroke-dasharray="5 3"/>`,
    );
  }
  groups.forEach((g, i) => {
    const y = TOP + i * ROW + ROW / 2;
    const ranked = g.rank !== null;
    const color = ranked ? '#2f5d8c' : '#9a9a9a';
    const rank = ranked ? `#${g.rank} ` : '– ';
    const isBase = g === base;
    const suffix = isBase ? ' baseline' : g.vs_baseline ? ` ${ratioText(g.vs_baseline, false)}` : '';
    out.push(
      `<g class="row${isBase ? ' baseline' : ''}" data-rank="${g.rank ?? ''}">`,
      `<text x="${LABEL_WIDTH}" y="${y + 4}" text-anchor="end" fill="${ranked ? '#111111' : '#777777'}"${isBase ? ' font-weight="bold"' : ''}>${xmlEscape(rank + groupLabel(g) + suffix)}</text>`,
      `<line x1="${x(g.p5)}" y1="${y}" x2="${x(g.p95)}" y2="${y}" stroke="${color}" stroke-width="1"/>`,
      `<rect x="${x(g.median_ci[0])}" y="${y - 6}" width="${Math.max(1, Number(x(g.median_ci[1])) - Number(x(g.median_ci[0]))).toFixed(1)}" height="12" fill="${color}" fill-opacity="0.35"/>`,
      `<rect x="${(Number(x(g.median)) - 1.5).toFixed(1)}" y="${y - 8}" width="3" height="16" fill="${color}"/>`,
      `</g>`,
    );
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
