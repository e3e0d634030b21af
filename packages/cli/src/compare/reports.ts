/**
 * The Markdown reports of `--summary` (summary.ts): the verdict line and the table of `changes`
 * and of `compare --baseline`. Names are escaped; numbers are written as the tables show them.
 */
import type { Reply } from '@benchmarks/sdk';
import { isBaseline, ratioText } from '@benchmarks/sdk/chart';
import { markdownTable, markdownText as md } from '../summary.ts';
import { groupName, interval, num, percentChange, type Comparison, type Group } from './look.ts';

type Changes = Reply<'findChanges'>;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const nameOf = (g: Parameters<typeof groupName>[0]) => md(groupName(g));

/**
 * `gate`: what `--fail-on` found (open records, or the changes reported without a watch); without
 * it the verdict counts the change points reported.
 */
export function changesReport(answer: Changes, benchmark: string, gate?: { what: 'change' | 'regression'; count: number }) {
  const where = `in \`${answer.metric.replace(/`/g, '')}\` of ${md(benchmark)} (${answer.better} is better)`;
  const points = answer.groups.flatMap((g) => g.changes);
  const regressions = points.filter((c) => c.direction === 'regression').length;
  let verdict: string;
  if (gate) {
    verdict = gate.count ? `❌ **${plural(gate.count, `open ${gate.what}`)}** ${where}` : `✅ **No open ${gate.what}** ${where}`;
  } else {
    verdict = points.length
      ? `⚠️ **${plural(points.length, 'change point')}** (${plural(regressions, 'regression')}, ${plural(points.length - regressions, 'improvement')}) ${where}`
      : `✅ **No change point** ${where}`;
  }
  const rows = answer.groups.flatMap((g) =>
    g.changes.length === 0
      ? [[nameOf(g), String(g.n), 'no change', '', '', '', '', '']]
      : g.changes.map((c) => [
          nameOf(g),
          String(g.n),
          c.direction === 'regression' ? '🔴 regression' : '🟢 improvement',
          c.at.slice(0, 16).replace('T', ' '),
          percentChange(c.magnitude),
          `${num(c.before.mean)} → ${num(c.after.mean)}`,
          c.pvalue.toPrecision(2),
          c.record ? c.record.state : '',
        ]),
  );
  const headers = [
    answer.group_by === 'flavor' ? 'Site / flavor' : 'Site',
    'Points',
    'Change',
    'At (UTC)',
    'Δ mean',
    'Before → after',
    'p',
    'Record',
  ];
  return { verdict, table: markdownTable(headers, rows, new Set([1, 4, 6])) };
}

/** Against the baseline: worse or better when the ratio's interval leaves out 1, else the same. */
function standing(answer: Comparison, g: Group): 'baseline' | 'worse' | 'better' | 'same' | 'n/a' {
  if (isBaseline(answer, g)) return 'baseline';
  const ci = g.vs_baseline?.ratio_ci;
  if (!ci) return 'n/a';
  const above = ci[0] > 1;
  const below = ci[1] < 1;
  if (!above && !below) return 'same';
  return above === (answer.better === 'higher') ? 'better' : 'worse';
}

export function compareReport(answer: Comparison, benchmark: string) {
  const base = answer.groups.find((g) => isBaseline(answer, g));
  const baseName = base ? nameOf(base) : md(answer.baseline ?? '');
  const where = `than the baseline ${baseName} in \`${answer.metric.replace(/`/g, '')}\` of ${md(benchmark)} (${answer.better} is better)`;
  const standings = answer.groups.map((g) => standing(answer, g));
  const worse = standings.filter((s) => s === 'worse').length;
  const better = standings.filter((s) => s === 'better').length;
  const groups = answer.group_by === 'flavor' ? 'flavor' : 'site';
  const verdict = worse
    ? `❌ **${plural(worse, groups)} worse** ${where}; ${better} better`
    : `✅ **No ${groups} worse** ${where}; ${better} better`;
  const percent = num(answer.confidence * 100);
  const rows = answer.groups.map((g, i) => [
    g.rank === null ? '–' : String(g.rank),
    nameOf(g),
    String(g.n),
    num(g.median),
    interval(g.median_ci),
    g.vs_baseline ? ratioText(g.vs_baseline) : '',
    g.vs_baseline ? g.vs_baseline.pvalue.toPrecision(2) : '',
    standings[i]!,
  ]);
  const headers = [
    'Rank',
    answer.group_by === 'flavor' ? 'Site / flavor' : 'Site',
    'N',
    'Median',
    `${percent}% CI`,
    `× baseline [${percent}% CI]`,
    'p',
    'Verdict',
  ];
  return { verdict, table: markdownTable(headers, rows, new Set([0, 2, 3])) };
}
