/**
 * Scenarios 8 to 10 ("Compare and rank"): GET /results:compare of one benchmark of about
 * 50,000 results at 1M, without and with a JSON filter, and GET /results:export of every visible
 * result as NDJSON, measured once as results per second with the server's RSS sampled throughout
 * (bench/export-run.ts). Each answer is checked before anything is measured.
 */
import type { BenchmarkRow, Catalogue } from './generate.ts';
import { metricQuantile } from './generate.ts';
import { API, query, type Scenario, type ScenarioInputs, type Variant } from './scenarios.ts';

/** One group of a compare answer, as far as the checks read it. */
interface Group {
  flavor: { id: string } | null;
  n: number;
  min: number;
  p5: number;
  p25: number;
  median: number;
  p75: number;
  p95: number;
  max: number;
  median_ci: [number, number];
  rank: number | null;
}
interface Comparison {
  benchmark_id: string;
  group_by: string;
  matched: number;
  excluded: number;
  groups: Group[];
}

/**
 * The benchmarks of the most typical size: those whose share of the results (their generator
 * weight) is nearest the mean share, about 50,000 results each at 1M (four at the default seed).
 */
export function typicalBenchmarks(catalogue: Catalogue): BenchmarkRow[] {
  const weights = catalogue.benchmarks.map((b) => b.def.weight);
  const mean = weights.reduce((a, b) => a + b, 0) / weights.length;
  const nearest = Math.min(...weights.map((w) => Math.abs(w - mean)));
  return catalogue.benchmarks.filter((b) => Math.abs(b.def.weight - mean) === nearest);
}

/** What is wrong with one group's statistics (their order, the median inside its interval), or null. */
function groupProblem(g: Group): string | null {
  const order = [g.min, g.p5, g.p25, g.median, g.p75, g.p95, g.max];
  if (!(g.n >= 1)) return `a group of n = ${g.n}`;
  if (order.some((v, i) => i > 0 && !(order[i - 1]! <= v))) return `statistics out of order: ${order.join(' ')}`;
  const [lo, hi] = g.median_ci;
  if (!(g.min <= lo && lo <= g.median && g.median <= hi && hi <= g.max)) return `median ${g.median} outside its interval [${lo}, ${hi}]`;
  return null;
}

/**
 * A compare answer of `benchmark` by flavor: `matched` as expected, the groups' n summing to the
 * numbers counted, each group consistent, the groups of 5 values or more ranked and first, from
 * rank 1 in order, no flavor twice.
 */
function comparisonProblem(body: Comparison, benchmark: BenchmarkRow, matched: (m: number) => string | null): string | null {
  if (body.benchmark_id !== benchmark.id || body.group_by !== 'flavor') return 'another benchmark or grouping';
  const wrongCount = matched(body.matched);
  if (wrongCount) return wrongCount;
  if (body.groups.length === 0) return 'no groups';
  const numbers = body.groups.reduce((s, g) => s + g.n, 0);
  if (numbers !== body.matched - body.excluded) return `groups hold ${numbers} values, ${body.matched - body.excluded} numbers matched`;
  if (new Set(body.groups.map((g) => g.flavor?.id)).size !== body.groups.length) return 'a flavor listed twice';
  // Groups of at least min_samples (5 by default) values are ranked, the others not.
  if (body.groups.some((g) => (g.rank !== null) !== g.n >= 5)) return 'a group of 5 values or more unranked, or one of fewer ranked';
  const ranks = body.groups.map((g) => g.rank);
  if (ranks[0] !== 1 && ranks[0] !== null) return `first rank ${ranks[0]}`;
  if (ranks.some((r, i) => i > 0 && (r === null ? false : ranks[i - 1] === null || r < ranks[i - 1]!))) return 'groups not in rank order';
  for (const g of body.groups) {
    const problem = groupProblem(g);
    if (problem) return `flavor ${g.flavor?.id}: ${problem}`;
  }
  return null;
}

const compareCheck =
  (benchmark: BenchmarkRow, matched: (m: number) => string | null, extra?: (body: Comparison) => string | null) =>
  (status: number, body: unknown): string | null => {
    if (status !== 200) return `status ${status}: ${JSON.stringify(body).slice(0, 400)}`;
    const b = body as Comparison;
    if (!b || !Array.isArray(b.groups)) return 'not a comparison';
    return comparisonProblem(b, benchmark, matched) ?? extra?.(b) ?? null;
  };

/** The compare statement(s) the server issued: those that read the result table, or the metric values table. */
function compareStatements(issued: string[]): string[] {
  const picked = issued.filter((s) => /\bfrom (result r|metric_value v)\b/i.test(s));
  if (picked.length === 0) throw new Error(`cannot find the compare statement among:\n${issued.join('\n')}`);
  return picked;
}
const COMPARE_BASELINE =
  'the compare statement exactly as the server issued it (and the order-statistics and count statements when it issued them), without the benchmark and path lookups and the read-only transaction around them';

/** `declare export_rows no scroll cursor for <select>`: the select. */
const DECLARE = /^\s*declare\s+\w+\s+no\s+scroll\s+cursor\s+for\s+/i;
export function cursorSelect(issued: string[]): string {
  const declared = issued.find((s) => DECLARE.test(s));
  if (!declared) throw new Error(`cannot find the export's cursor among:\n${issued.slice(0, 5).join('\n')}`);
  return declared.replace(DECLARE, '');
}

/** What the check of an export reads: the lines counted and the first problem found in them. */
export interface ExportSummary {
  lines: number;
  bytes: number;
  problem: string | null;
}

/**
 * Reads an NDJSON export as a stream, checking each line: a result as GET /results/{id} returns it,
 * visible, in strictly increasing (execution_datetime, id) order; the text ends with a line end.
 */
async function readExport(res: Response): Promise<ExportSummary> {
  const out: ExportSummary = { lines: 0, bytes: 0, problem: null };
  if (!res.body) return { ...out, problem: 'no body' };
  const decoder = new TextDecoder();
  let rest = '';
  let previous: { at: number; id: string } | null = null;
  const line = (text: string) => {
    out.lines++;
    if (out.problem) return;
    let r: { id?: unknown; hidden?: unknown; execution_datetime?: unknown; benchmark?: { id?: unknown } };
    try {
      r = JSON.parse(text);
    } catch {
      out.problem = `line ${out.lines} is not JSON: ${text.slice(0, 200)}`;
      return;
    }
    const at = Date.parse(String(r.execution_datetime));
    if (typeof r.id !== 'string' || typeof r.benchmark?.id !== 'string' || Number.isNaN(at)) {
      out.problem = `line ${out.lines} is not a result: ${text.slice(0, 200)}`;
    } else if (r.hidden !== false) {
      out.problem = `line ${out.lines}: a hidden result`;
    } else if (previous && (at < previous.at || (at === previous.at && r.id <= previous.id))) {
      out.problem = `line ${out.lines}: not in (execution_datetime, id) order`;
    } else {
      previous = { at, id: r.id };
    }
  };
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    out.bytes += chunk.byteLength;
    const lines = (rest + decoder.decode(chunk, { stream: true })).split('\n');
    rest = lines.pop()!;
    for (const text of lines) line(text);
  }
  rest += decoder.decode();
  if (rest !== '' && !out.problem) out.problem = 'the last line has no line end';
  return out;
}

export function buildCompareScenarios(input: ScenarioInputs): Scenario[] {
  const { catalogue, options } = input;
  const typical = typicalBenchmarks(catalogue).slice(0, Math.max(1, input.variants));
  const visibleOf = (b: BenchmarkRow) => input.visible.byBenchmark.get(b.id) ?? 0;
  const compareRequest = (b: BenchmarkRow, extra: [string, string][] = []) => ({
    method: 'GET' as const,
    path: `${API}/results:compare?${query([['benchmark_id', b.id], ['metric', `json.${b.def.metric}`], ...extra])}`,
  });
  const size = (b: BenchmarkRow) => `${b.def.key} (${visibleOf(b).toLocaleString('en-US')} visible results)`;

  // 8. Compare the flavors of one benchmark
  const s8: Scenario = {
    id: 8,
    key: 'compare-by-flavor',
    title: 'Compare the flavors of a benchmark of ~50k results',
    endpoint: 'GET /results:compare?benchmark_id=…&metric=json.<metric>',
    variants: typical.map(
      (b): Variant => ({
        label: `${size(b)}: ${b.def.metric}`,
        request: compareRequest(b),
        check: compareCheck(b, (m) => (m === visibleOf(b) ? null : `matched ${m}, the benchmark has ${visibleOf(b)} visible results`)),
      }),
    ),
    baseline: (_i, issued) => compareStatements(issued),
    baselineMethod: COMPARE_BASELINE,
  };

  // 9. The same with one JSON filter keeping about half: the metric above its estimated median
  const s9: Scenario = {
    ...s8,
    id: 9,
    key: 'compare-json-filter',
    title: 'Compare the flavors of a benchmark, one JSON filter (about half kept)',
    endpoint: 'GET /results:compare?benchmark_id=…&metric=json.<metric>&filters=<metric> > <its median>',
    variants: typical.map((b): Variant => {
      const threshold = metricQuantile(catalogue, options, b, 0.5);
      const filter = `${b.def.metric} > ${threshold}`;
      const all = visibleOf(b);
      return {
        label: `${size(b)}: ${filter}`,
        request: compareRequest(b, [['filters', filter]]),
        check: compareCheck(
          b,
          (m) => (m >= 0.2 * all && m <= 0.8 * all ? null : `matched ${m} of ${all}: the filter should keep about half`),
          (body) => (body.groups.every((g) => g.min > threshold) ? null : `a value not above ${threshold}: the filter was not applied`),
        ),
      };
    }),
  };

  // 10. Export every visible result as NDJSON
  const s10: Scenario = {
    id: 10,
    key: 'export-ndjson',
    title: 'Export every visible result as NDJSON',
    endpoint: 'GET /results:export?format=ndjson',
    kind: 'export',
    variants: [
      {
        label: 'every visible result',
        request: { method: 'GET', path: `${API}/results:export?${query([['format', 'ndjson']])}` },
        consume: readExport,
        check: (status, body) => {
          if (status !== 200) return `status ${status}: ${JSON.stringify(body).slice(0, 400)}`;
          const summary = body as ExportSummary;
          if (summary.problem) return summary.problem;
          return summary.lines === input.visible.total ? null : `${summary.lines} lines, ${input.visible.total} visible results`;
        },
      },
    ],
    explained: (issued) => [cursorSelect(issued)],
    baseline: (_i, issued) => [cursorSelect(issued)],
    baselineMethod:
      'the select of the export cursor exactly as the server declared it, read by one node-postgres client in a repeatable-read, read-only transaction with `declare … no scroll cursor` and `fetch 500` until the end (rows parsed as the server’s driver parses them); API / SQL is results/s over results/s',
  };

  return [s8, s9, s10];
}
