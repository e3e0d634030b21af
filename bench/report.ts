/**
 * The report: bench/results/latest.json (everything measured) and docs/performance.md's generated section
 * (between `<!-- bench:start -->` and `<!-- bench:end -->`), with its targets and goals judged met or missed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ColdRememberedReport, HealthUnderLoadReport } from './changes-runs.ts';
import type { Shape } from './generate.ts';
import type { ExportReport } from './export-run.ts';
import type { CreatedBenchmark, LoadReport } from './load.ts';
import type { CpuUsage, HttpRunStats, LatencySummary, SqlRunStats } from './measure.ts';
import type { Scenario } from './scenarios.ts';

/**
 * A run: `ratio` is 2xx/s over the SQL baseline's transactions/s, `vsReference` over the reference
 * scenario's 2xx/s; CPU by process group (null without /proc); seconds waited for a quiet machine, of
 * each run, and to finish the requests autocannon abandoned. An export run counts its request as one.
 */
export type RunReport = Record<'connections' | 'serverPeakRssMb' | 'quietWaitSeconds' | 'seconds' | 'drainSeconds', number> &
  Record<'apiCpu' | 'sqlCpu', CpuUsage | null> & {
    api: HttpRunStats;
    sql: SqlRunStats | null;
    ratio: number | null;
    vsReference?: number | null;
    export?: ExportReport;
  };

/** `statements`: those of the first request variant, as explained; `captureProblems` must be empty. */
export type ScenarioReport = Pick<
  Scenario,
  'id' | 'key' | 'title' | 'endpoint' | 'kind' | 'resultsPerRequest' | 'baselineMethod' | 'reference' | 'selectivity'
> & {
  variants: number;
  statementsPerRequest: number;
  explainFile: string;
  statements: { role: string; executionMs: number | null; indexes: string[]; seqScans: string[]; error: string | null }[];
  captureProblems: string[];
  runs: RunReport[];
};
export type TargetResult = { target: string; status: 'met' | 'missed' | 'not applicable'; detail: string };

export interface BenchReport {
  version: 1;
  generatedAt: string;
  elapsedSeconds: number;
  machine: { cpus: number; cpuModel: string; memoryGb: number; platform: string; node: string; postgres: string };
  options: Record<'results' | 'seed' | 'durationSeconds' | 'warmupSeconds' | 'quietWaitSeconds', number> &
    Record<'connections' | 'scenarios', number[]> & { shape: Shape; baselineTool: string };
  postgresSettings: Record<string, string>;
  data: { reused: boolean; load: LoadReport; shape: Shape; created: CreatedBenchmark[] };
  server: { idleRssMb: number; peakRssMb: number; finalRssMb: number; nodeArgs: string[] };
  scenarios: ScenarioReport[];
  targets: TargetResult[];
  everyMetric: EveryMetricReport;
}
/** The measurements run once (16, 17, 27), the machine's 1-minute load average sampled every 10 s, and the goals. */
export type EveryMetricReport = Record<'changes' | 'compareBaseline', ColdRememberedReport | null> & {
  health: HealthUnderLoadReport | null;
  loadAverage: Record<'min' | 'median' | 'max' | 'samples', number>;
  goals: TargetResult[];
};

/** The goals besides the targets: of the users' shape (19 to 24 against 18), of changes over time, compare by flavor and /health. */
const GOALS = { listFactor: 4, listConnections: [8, 32], medianFactor: 1.5, healthP99Ms: 100, coldP50Ms: 1000, rememberedP50Ms: 10 };
/** docs/performance.md's "Targets: read and write load" and "Targets: compare and export" (at one connection, at 1M results). */
const TARGETS = { ratio: 0.5, p99Ms: 100, p99AtResults: 1_000_000, ingestPerSecond: 1000, memoryMb: 250 };
const COMPARE_EXPORT = { compareP50Ms: 150, exportPerSecond: 20_000, exportRssGrowthMb: 16 };

const runAt = (s: ScenarioReport | undefined, connections: number) => s?.runs.find((r) => r.connections === connections);
const fmt = (v: number, digits = 0) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mb = (v: number | null) => (v === null ? '–' : fmt(v, 1));
const percentOf = (ratio: number | null | undefined) => (ratio == null ? '–' : `${fmt(ratio * 100)}%`);
/** Validated results stored per second by a run (successful requests times the results each one stored). */
const resultsPerSecond = (s: ScenarioReport, r: RunReport) => r.api.okPerSecond * s.resultsPerRequest;
type Judged = Omit<BenchReport, 'targets' | 'everyMetric'>;
/** A Markdown table after its title (if any): `align` has an `r` for each right-aligned column. */
const table = (title: string | null, header: string, align: string, rows: string[]) => {
  const rule = `|${[...align].map((a) => (a === 'r' ? '--:' : '---')).join('|')}|`;
  return ['', ...(title === null ? [] : [title, '']), header, rule, ...rows];
};
const judging = () => {
  const out: TargetResult[] = [];
  const judge = (target: string, met: boolean, detail: string, applicable = true) =>
    out.push({ target, status: !applicable ? 'not applicable' : met ? 'met' : 'missed', detail });
  return { out, judge };
};

export function judgeGoals(report: Judged, measured: Omit<EveryMetricReport, 'goals'>): TargetResult[] {
  const { out, judge } = judging();
  const G = GOALS;
  const scale = report.options.results >= 1_000_000 ? '' : ` (at ${report.options.results.toLocaleString('en-US')} results, not 1M)`;
  const plain = report.scenarios.find((s) => s.id === 18);
  for (const filtered of report.scenarios.filter((s) => s.id >= 19 && s.id <= 24))
    for (const c of G.listConnections) {
      // 18, their reference, is run along with them.
      const [a, b, id] = [runAt(plain, c)!, runAt(filtered, c), filtered.id];
      if (!b) continue;
      const refused = b.api.statusCodes['503'] ?? 0;
      const factor = b.api.okPerSecond > 0 ? a.api.okPerSecond / b.api.okPerSecond : Number.POSITIVE_INFINITY;
      const target = `#${id} within ${G.listFactor}× of #18 in 2xx/s @${c}${c >= 32 ? ', no 503' : ''}${scale}`;
      const detail =
        `#18 ${a.api.okPerSecond}/s, #${id} ${b.api.okPerSecond}/s: ${Number.isFinite(factor) ? factor.toFixed(2) : '∞'}× slower; ` +
        `503 ${refused}, 429 ${b.api.statusCodes['429'] ?? 0}; #${id} p50 ${b.api.latencyMs.p50} ms, SQL ${b.sql?.tps ?? '–'} tx/s`;
      judge(target, factor <= G.listFactor && (c < 32 || refused === 0), detail);
    }
  const { changes: ch, compareBaseline, health } = measured;
  if (ch) {
    const of = `${ch.visibleResults.toLocaleString('en-US')} results in ${ch.groups} series`;
    const sql = `its SQL alone p50 ${ch.sqlMs.p50} ms (${ch.fromTable ? 'metric values table' : 'documents'})`;
    const cold = `${of}: p50 ${ch.coldMs.p50} ms, p95 ${ch.coldMs.p95} ms over ${ch.rounds} rounds; ${sql}; after a write to one series p50 ${ch.afterWriteMs?.p50} ms`;
    judge(`changes over time computed, p50 < ${G.coldP50Ms} ms${scale}`, ch.coldMs.p50 < G.coldP50Ms, cold);
    const remembered = `${of}: p50 ${ch.rememberedMs.p50} ms, p95 ${ch.rememberedMs.p95} ms`;
    const target = `changes over time remembered, p50 < ${G.rememberedP50Ms} ms${scale}`;
    judge(target, ch.rememberedMs.p50 < G.rememberedP50Ms, remembered);
  }
  const flavors = compareBaseline?.byFlavor;
  if (flavors) {
    const factor = flavors.computedMs.p50 / Math.max(0.001, flavors.medianSqlMs.p50);
    const detail = `computed after a write p50 ${flavors.computedMs.p50} ms, p95 ${flavors.computedMs.p95} ms; percentile_cont per flavor p50 ${flavors.medianSqlMs.p50} ms: ${factor.toFixed(2)}×`;
    const target = `compare by flavor computed within ${G.medianFactor}× of PostgreSQL's median per flavor${scale}`;
    judge(target, factor <= G.medianFactor, detail);
  }
  if (health) {
    const detail = `p99 ${health.loadedMs.p99} ms, max ${health.loadedMs.max} ms (alone: p99 ${health.idleMs.p99} ms)`;
    const target = `/health p99 < ${G.healthP99Ms} ms while changes and baseline compares run in loops`;
    judge(target, health.loadedMs.p99 < G.healthP99Ms, detail);
  }
  return out;
}

export function judgeTargets(report: Judged): TargetResult[] {
  const { out, judge } = judging();
  const T = { ...TARGETS, ...COMPARE_EXPORT };
  const at1M = report.options.results >= T.p99AtResults;
  const scale = at1M ? '' : ` (measured at ${fmt(report.options.results)} results; the target is set at 1M)`;
  const scenarios = (test: (s: ScenarioReport) => boolean) => report.scenarios.filter(test);
  // The read scenarios of "Read and write load", judged against their SQL baseline.
  const reads = scenarios((s) => s.kind === 'read' && s.id <= 5);
  if (reads.length) {
    const at = report.options.connections.includes(32) ? 32 : Math.max(...report.options.connections);
    const ratios = reads.map((s) => ({ s, run: runAt(s, at) }));
    const detail = ratios.map(({ s, run }) => `#${s.id} ${run?.ratio == null ? 'n/a' : `${fmt(run.ratio * 100)}%`}`).join(', ');
    const met = ratios.every(({ run }) => run && run.ratio !== null && run.ratio >= T.ratio);
    const target = `Read scenarios: API throughput ≥ ${T.ratio * 100}% of the raw SQL baseline at ${at} connections`;
    judge(target, met, detail + (at !== 32 ? ` (32 connections not measured; ${at} used)` : ''));
  }
  const p99 = scenarios((s) => [1, 2, 4, 5].includes(s.id));
  if (p99.length) {
    const runs = (s: ScenarioReport) => s.runs.map((r) => `${fmt(r.api.latencyMs.p99, 1)} ms@${r.connections}`).join(' / ');
    const detail = p99.map((s) => `#${s.id} ${runs(s)}`).join('; ');
    const met = p99.every((s) => s.runs.every((r) => r.api.latencyMs.p99 < T.p99Ms));
    judge(`p99 < ${T.p99Ms} ms at 1M results for scenarios 1, 2, 4, 5 (every concurrency measured)`, met, detail + scale, at1M);
  }
  const ingest = scenarios((s) => s.kind === 'ingest');
  if (ingest.length) {
    const measured = ingest.flatMap((s) => s.runs.map((r) => ({ s, r, perSecond: resultsPerSecond(s, r) })));
    const best = measured.reduce<(typeof measured)[number] | null>((b, m) => (!b || m.perSecond > b.perSecond ? m : b), null);
    const perScenario = (s: ScenarioReport) =>
      `#${s.id} ${s.runs.map((r) => `${fmt(resultsPerSecond(s, r))}/s@${r.connections}`).join(', ')}${s.resultsPerRequest > 1 ? ` (${s.resultsPerRequest} per request)` : ''}`;
    const top = best ? `; best: #${best.s.id} at ${best.r.connections} connections, ${fmt(best.perSecond)} results/s` : '';
    const target = `Ingest: ≥ ${fmt(T.ingestPerSecond)} validated results/s (best of the ingest scenarios)`;
    judge(target, !!best && best.perSecond >= T.ingestPerSecond, ingest.map(perScenario).join('; ') + top);
  }
  const compare = scenarios((s) => s.id === 8 || s.id === 9).map((s) => ({ s, run: runAt(s, 1) }));
  if (compare.length) {
    const detail = compare
      .map(({ s, run }) => `#${s.id} ${run ? `${fmt(run.api.latencyMs.p50, 1)} ms` : 'not run at 1 connection'}`)
      .join(', ');
    const met = compare.every(({ run }) => run && run.api.latencyMs.p50 < T.compareP50Ms);
    judge(`Compare (scenarios 8, 9): p50 < ${T.compareP50Ms} ms at one connection, at 1M results`, met, detail + scale, at1M);
  }
  for (const s of scenarios((x) => x.kind === 'export')) {
    const e = s.runs[0]?.export;
    const [first, second] = [e?.rss.firstHalfPeakMb ?? null, e?.rss.secondHalfPeakMb ?? null];
    const growth = first !== null && second !== null ? second - first : Number.POSITIVE_INFINITY;
    const target = `Export (scenario ${s.id}): ≥ ${fmt(T.exportPerSecond)} results/s, server RSS flat (second half's peak ≤ first half's + ${T.exportRssGrowthMb} MB), at 1M results`;
    const met = !!e && e.results === e.expected && e.resultsPerSecond >= T.exportPerSecond && growth <= T.exportRssGrowthMb;
    const rss = (r: NonNullable<typeof e>['rss']) =>
      `RSS start ${fmt(r.startMb, 1)} MB, peak ${fmt(r.peakMb, 1)} MB (first half ${mb(first)}, second half ${mb(second)}), end ${fmt(r.endMb, 1)} MB`;
    const detail = e && `${fmt(e.results)} results in ${fmt(e.seconds, 1)} s: ${fmt(e.resultsPerSecond)} results/s; ${rss(e.rss)}${scale}`;
    judge(target, met, detail ?? 'not measured', at1M);
  }
  const { peakRssMb, idleRssMb } = report.server;
  judge(
    `Server memory < ${T.memoryMb} MB at peak (RSS)`,
    peakRssMb < T.memoryMb,
    `peak ${fmt(peakRssMb, 1)} MB, idle ${fmt(idleRssMb, 1)} MB`,
  );
  return out;
}

export function markdownSection(report: BenchReport): string {
  const [l, o, m] = [report.data.load, report.options, report.machine];
  const lines = [
    `_Generated by \`npm run bench\` on ${report.generatedAt.slice(0, 16).replace('T', ' ')} UTC in ${fmt(report.elapsedSeconds / 60, 1)} min; ` +
      `${o.durationSeconds} s per run, ${o.warmupSeconds} s warm-up per scenario. Everything between the markers is rewritten by each run._`,
    '',
    `- **Machine**: ${m.cpus} × ${m.cpuModel}, ${fmt(m.memoryGb)} GiB, ${m.platform}, Node ${m.node}; ${m.postgres.split(' on ')[0]} (embedded), baseline with ${o.baselineTool}.`,
    `- **Data**: ${fmt(l.loaded.result)} results (mean JSON ${fmt(l.meanJsonBytes)} bytes, ${fmt((100 * l.loaded.result_hidden) / Math.max(1, l.loaded.result), 1)}% hidden), ` +
      `${l.loaded.benchmark} benchmarks, ${l.loaded.site} sites, ${l.loaded.flavor} flavors, ${l.loaded.tag} tags, ${fmt(l.loaded.result_tag)} result tags, ${fmt(l.loaded.claim)} claims; ` +
      `database ${fmt(l.sizes.database_mb)} MB (result table ${fmt(l.sizes.result_table_mb)} MB, its indexes ${fmt(l.sizes.result_indexes_mb)} MB).`,
    `- **Load** (COPY from CSV files${report.data.reused ? ', reused from an earlier run' : ''}): ` +
      `generate + load ${fmt(l.seconds.generateAndCopy, 1)} s, indexes ${fmt(l.seconds.indexes, 1)} s, VACUUM ANALYZE ${fmt(l.seconds.vacuumAnalyze, 1)} s, ` +
      `total ${fmt(l.seconds.total, 1)} s (${fmt(l.loaded.result / Math.max(0.001, l.seconds.total))} results/s).`,
    `- **Server memory** (RSS of the server process${report.server.nodeArgs.length ? `, run with \`${report.server.nodeArgs.join(' ')}\`` : ''}): idle ${fmt(report.server.idleRssMb, 1)} MB, peak ${fmt(report.server.peakRssMb, 1)} MB.`,
  ];
  if (report.data.created.length) {
    const by = (c: CreatedBenchmark) => (c.createdBy === 'user' ? 'a user, approved by an administrator' : 'an administrator');
    const created = report.data.created.map((c) => `${c.key} by ${by(c)} (${c.metricPaths} metric paths ready at once)`);
    lines.push(`- **Created through the API** (shape ${o.shape}), their results loaded with COPY: ${created.join('; ')}.`);
  }
  const loadRuns = report.scenarios.flatMap((s) => s.runs.filter((r) => !r.export).map((r) => ({ s, r, a: r.api, sql: r.sql })));
  const ms = (v: number) => fmt(v, 1);
  const head =
    '| # | Scenario | Conn. | API 2xx/s | p50 ms | p95 ms | p99 ms | Errors / non-2xx | SQL tx/s | SQL p50 / p99 ms | API / SQL | API / list | Server peak RSS MB |';
  const runRows = loadRuns.map(
    ({ s, r, a, sql }) =>
      `| ${s.id} | ${s.title} | ${r.connections} | ${fmt(a.okPerSecond, 1)}${s.resultsPerRequest > 1 ? ` (${fmt(resultsPerSecond(s, r))} results/s)` : ''}${r.seconds !== o.durationSeconds ? ` (${r.seconds} s run)` : ''} | ` +
      `${ms(a.latencyMs.p50)} | ${ms(a.latencyMs.p95)} | ${ms(a.latencyMs.p99)}${a.latencyMs.count < 100 ? ` (${a.latencyMs.count} answers)` : ''} | ` +
      `${a.errors + a.timeouts} / ${a.non2xx}${a.statusCodes['503'] ? ` (503: ${fmt(a.statusCodes['503'])})` : ''} | ${sql ? ms(sql.tps) : '–'} | ${sql ? `${ms(sql.latencyMs.p50)} / ${ms(sql.latencyMs.p99)}` : '–'} | ` +
      `${percentOf(r.ratio)} | ${r.vsReference === undefined ? '–' : `${percentOf(r.vsReference)} of #${s.reference}`} | ${ms(r.serverPeakRssMb)} |`,
  );
  lines.push(...table(null, head, 'llrrrrrrrrrrr', runRows));
  if (loadRuns.some(({ r }) => r.apiCpu)) {
    const per = (v: number | undefined, n: number) => (v === undefined || n === 0 ? '–' : fmt(v / n, 2));
    const title =
      '**Where the CPU goes** (CPU milliseconds per request or transaction, from /proc; 2 cores give 2,000 ms per second to share; ' +
      '"other" is the share of the machine used by programs outside the benchmark during the run, which lowers its figures)';
    const head =
      '| # | Conn. | API: server | API: PostgreSQL | API: load generator | SQL: PostgreSQL | SQL: client | Other load (API / SQL run) |';
    const cpuRows = loadRuns.map(({ s, r, a, sql }) => {
      const [api, base, n, t] = [r.apiCpu, r.sqlCpu, a.responses, sql?.transactions ?? 0];
      return (
        `| ${s.id} | ${r.connections} | ${per(api?.serverMs, n)} | ${per(api?.postgresMs, n)} | ${per(api?.clientMs, n)} | ${per(base?.postgresMs, t)} | ${per(base?.clientMs, t)} | ` +
        `${api ? `${fmt(api.otherPercent, 1)}% / ${fmt(base?.otherPercent ?? 0, 1)}%` : '–'} |`
      );
    });
    lines.push(...table(title, head, 'lrrrrrrr', cpuRows));
  }
  const exports = report.scenarios.flatMap((s) => s.runs.filter((r) => r.export).map((r) => ({ s, r, e: r.export! })));
  const exportRows = exports.map(({ s, r, e }) => {
    const per1000 = (v: number | undefined) => (v === undefined ? '–' : fmt((1000 * v) / Math.max(1, e.results), 1));
    return (
      `| ${s.id} | ${fmt(e.results)} | ${fmt(e.bytes / 1048576)} | ${fmt(e.seconds, 1)} (${fmt(e.firstByteMs)}) | ${fmt(e.resultsPerSecond)} | ${fmt(e.sqlSeconds, 1)} | ` +
      `${fmt(e.sqlResultsPerSecond)} | ${percentOf(r.ratio)} | ${fmt(e.rss.startMb, 1)} / ${fmt(e.rss.peakMb, 1)} / ${fmt(e.rss.endMb, 1)} | ` +
      `${mb(e.rss.firstHalfPeakMb)} / ${mb(e.rss.secondHalfPeakMb)} | ${per1000(r.apiCpu?.serverMs)} / ${per1000(r.apiCpu?.postgresMs)} |`
    );
  });
  const exportTitle =
    '**Export** (one request streaming every visible result; the SQL baseline reads the same cursor with `fetch 500`; RSS of the server sampled every 200 ms)';
  const exportHead =
    '| # | Results | MB | API s (first byte ms) | API results/s | SQL s | SQL results/s | API / SQL | Server RSS MB: start / peak / end | RSS peak MB: first half / second half | CPU ms per 1,000 results: server / PostgreSQL |';
  if (exports.length) lines.push(...table(exportTitle, exportHead, 'lrrrrrrrrrr', exportRows));
  const h = report.everyMetric.health;
  if (h) {
    const times = (t: LatencySummary) => `${ms(t.p50)} | ${ms(t.p95)} | ${ms(t.p99)} | ${ms(t.max)} | ${fmt(t.count)}`;
    const title = `**/health under load** (scenario 27, ${h.benchmark}: \`GET /health\` every 10 ms for ${h.seconds} s alone, then for ${h.seconds} s while the loops below run; statuses of /health ${JSON.stringify(h.healthStatuses)})`;
    const rows = [`| /health alone | ${times(h.idleMs)} | |`, `| /health under load | ${times(h.loadedMs)} | |`];
    for (const x of h.loops)
      rows.push(`| ${x.loops} loops of \`${x.request.split('?')[0]}\` | ${times(x.ms)} | ${JSON.stringify(x.statuses)} |`);
    lines.push(...table(title, '| Requests | p50 ms | p95 ms | p99 ms | max ms | answers | statuses |', 'lrrrrrl', rows));
  }
  const judged = [...report.targets, ...report.everyMetric.goals].map((t) => `| ${t.target} | **${t.status}** | ${t.detail} |`);
  lines.push(...table('**Targets**', '| Target | Status | Measured |', 'lll', judged));
  const costs = report.scenarios.map((s) => {
    const distinct = (k: 'indexes' | 'seqScans') => [...new Set(s.statements.flatMap((st) => st[k]))].join(', ') || '–';
    // Each role once, its statements' times in order: "page 2.29; embedded rows 0.02 / 0.03".
    const byRole = new Map<string, string[]>();
    for (const st of s.statements)
      byRole.set(st.role, [...(byRole.get(st.role) ?? []), st.executionMs == null ? '?' : fmt(st.executionMs, 2)]);
    const times = [...byRole].map(([role, ms]) => `${role} ${ms.join(' / ')}`).join('; ');
    return `| ${s.id} | ${s.statementsPerRequest} | ${times} | ${distinct('indexes')} | ${distinct('seqScans')} |`;
  });
  const title = '**What each request costs the database** (first request variant; EXPLAIN (ANALYZE, BUFFERS) in `bench/results/explain/`)';
  lines.push(...table(title, '| # | Statements per request | Execution ms by role | Indexes used | Sequential scans |', 'lrlll', costs));
  return lines.join('\n');
}

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

/** Replaces the generated section of the Markdown file (creating the file when it does not exist). */
export function writeMarkdown(path: string, section: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : `# Performance\n\n${START}\n${END}\n`;
  const [start, end] = [text.indexOf(START), text.indexOf(END)];
  const body = `${START}\n${section}\n${END}`;
  mkdirSync(dirname(path), { recursive: true });
  const replaced = start >= 0 && end > start ? text.slice(0, start) + body + text.slice(end + END.length) : null;
  writeFileSync(path, replaced ?? `${text.trimEnd()}\n\n${body}\n`);
}

export function writeJson(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
