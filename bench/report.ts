/**
 * The report: bench/results/latest.json (everything measured) and the generated section of
 * docs/performance.md (between `<!-- bench:start -->` and `<!-- bench:end -->`), with the targets of
 * "Read and write load" (scenarios 1 to 7) and "Compare and export" (8 to 10), and the goals of the
 * users' shape and of the measurements run once (16, 17, 27), judged met or missed.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CpuUsage } from './cpu.ts';
import type { HttpRunStats } from './http-load.ts';
import type { CreatedBenchmark, LoadReport } from './load.ts';
import type { Shape } from './generate.ts';
import type { SqlRunStats } from './sql-load.ts';
import type { Selectivity } from './scenarios.ts';
import type { ColdRememberedReport, HealthUnderLoadReport } from './changes-runs.ts';

/** The measured export of an export scenario (bench/export-run.ts). */
export interface ExportReport {
  /** Lines received, and the visible results there are. */
  results: number;
  expected: number;
  bytes: number;
  seconds: number;
  firstByteMs: number;
  resultsPerSecond: number;
  /** The same cursor read straight from PostgreSQL. */
  sqlSeconds: number;
  sqlResultsPerSecond: number;
  /** The server's RSS (MB): just before the request, highest sample, after its last byte, and by halves. */
  rss: {
    startMb: number;
    peakMb: number;
    endMb: number;
    firstHalfPeakMb: number | null;
    secondHalfPeakMb: number | null;
    samples: number;
    /** One sample a second: seconds since the request, MB. */
    perSecond: { s: number; mb: number }[];
  };
}

export interface RunReport {
  connections: number;
  api: HttpRunStats;
  sql: SqlRunStats | null;
  /** Successful (2xx) API requests per second over SQL transactions per second. */
  ratio: number | null;
  /** The same over the 2xx/s of the scenario's reference (its benchmark's plain list) at the same connections, when it has one. */
  vsReference?: number | null;
  serverPeakRssMb: number;
  /** CPU by process group during the API run and the SQL run (null without /proc). */
  apiCpu: CpuUsage | null;
  sqlCpu: CpuUsage | null;
  /** Seconds spent waiting for the machine to be quiet before the two runs. */
  quietWaitSeconds: number;
  /** Length of each of the two runs (longer than --duration for very slow requests). */
  seconds: number;
  /** Seconds the server needed after the API run to finish the requests autocannon abandoned. */
  drainSeconds: number;
  /** Export scenarios: the one request and its baseline (its `api` and `sql` count one each). */
  export?: ExportReport;
}

export interface StatementSummary {
  role: string;
  executionMs: number | null;
  indexes: string[];
  seqScans: string[];
  error: string | null;
}

export interface ScenarioReport {
  id: number;
  key: string;
  title: string;
  endpoint: string;
  kind: 'read' | 'ingest' | 'export';
  /** Results one successful request stores (ingest; 1 otherwise; missing in reports made before scenario 7). */
  resultsPerRequest?: number;
  variants: number;
  statementsPerRequest: number;
  baselineMethod: string;
  /** The scenario `vsReference` divides by. */
  reference?: number;
  selectivity?: Selectivity;
  explainFile: string;
  /** The statements of the first request variant, as explained. */
  statements: StatementSummary[];
  /** Problems found in the responses while capturing (must be empty). */
  captureProblems: string[];
  runs: RunReport[];
}

export interface TargetResult {
  target: string;
  status: 'met' | 'missed' | 'not applicable';
  detail: string;
}

export interface BenchReport {
  version: 1;
  generatedAt: string;
  elapsedSeconds: number;
  machine: { cpus: number; cpuModel: string; memoryGb: number; platform: string; node: string; postgres: string };
  options: {
    results: number;
    /** Missing in reports made before the origin shape. */
    shape?: Shape;
    seed: number;
    durationSeconds: number;
    warmupSeconds: number;
    connections: number[];
    scenarios: number[];
    baselineTool: string;
    quietWaitSeconds: number;
  };
  postgresSettings: Record<string, string>;
  data: { reused: boolean; load: LoadReport; shape?: Shape; created?: CreatedBenchmark[] };
  server: { idleRssMb: number; peakRssMb: number; finalRssMb: number; nodeArgs?: string[] };
  scenarios: ScenarioReport[];
  targets: TargetResult[];
  /** The measurements run once (16, 17, 27) and the goals judged on them and on the users' shape. */
  everyMetric?: EveryMetricReport;
}

export interface EveryMetricReport {
  /** Scenarios 16 (GET /results:changes) and 17 (GET /results:compare with `baseline`), bench/changes-runs.ts. */
  changes: ColdRememberedReport | null;
  compareBaseline: ColdRememberedReport | null;
  /** Scenario 27: GET /health while changes and comparisons are computed (bench/changes-runs.ts). */
  health: HealthUnderLoadReport | null;
  /** The machine's 1-minute load average, sampled every 10 s through the run. */
  loadAverage: { min: number; median: number; max: number; samples: number };
  goals: TargetResult[];
}

/**
 * The goals judged besides the targets: the filtered sorts of the users' shape (19 to 24) within 4× of
 * its plain list (18) in 2xx/s at 8 and 32 connections, no 503 at 32; changes over time (16) computed
 * and remembered fast; compare by flavor (17) within 1.5× of PostgreSQL's median per flavor; /health
 * (27) fast while changes and comparisons are computed.
 */
export const EVERY_METRIC_GOALS = {
  /** (b) within this factor of (a) in requests per second. */
  listFactor: 4,
  listConnections: [8, 32],
  /** GET /results:changes of a benchmark of a quarter of the results in 10 series (scenario 16). */
  changesColdP50Ms: 1000,
  changesRememberedP50Ms: 10,
  /** Compare by flavor, computed, against PostgreSQL's percentile_cont per flavor (scenario 17). */
  medianFactor: 1.5,
  /** GET /health while changes and baseline compares are computed in loops (scenario 27). */
  healthP99Ms: 100,
};

const runAt = (s: ScenarioReport | undefined, connections: number): RunReport | undefined =>
  s?.runs.find((r) => r.connections === connections);

export function judgeGoals(report: Omit<BenchReport, 'targets'>, measured: EveryMetricReport): TargetResult[] {
  const out: TargetResult[] = [];
  const at1M = report.options.results >= 1_000_000;
  const scale = at1M ? '' : ` (at ${report.options.results.toLocaleString('en-US')} results, not 1M)`;
  const pairs: [number, number][] = [19, 20, 21, 22, 23, 24].map((id) => [18, id]);
  for (const [listId, id] of pairs) {
    const plain = report.scenarios.find((s) => s.id === listId);
    const filtered = report.scenarios.find((s) => s.id === id);
    if (!filtered) continue;
    for (const c of EVERY_METRIC_GOALS.listConnections) {
      const a = runAt(plain, c);
      const b = runAt(filtered, c);
      if (!b) continue;
      const refused = b.api.statusCodes['503'] ?? 0;
      const limited = b.api.statusCodes['429'] ?? 0;
      if (!a) {
        out.push({
          target: `#${id} vs #${listId} @${c}`,
          status: 'not applicable',
          detail: `scenario ${listId} not run at these connections`,
        });
        continue;
      }
      const factor = b.api.okPerSecond > 0 ? a.api.okPerSecond / b.api.okPerSecond : Number.POSITIVE_INFINITY;
      const met = factor <= EVERY_METRIC_GOALS.listFactor && (c < 32 || refused === 0);
      out.push({
        target: `#${id} within ${EVERY_METRIC_GOALS.listFactor}× of #${listId} in 2xx/s @${c}${c >= 32 ? ', no 503' : ''}${scale}`,
        status: met ? 'met' : 'missed',
        detail:
          `#${listId} ${a.api.okPerSecond}/s, #${id} ${b.api.okPerSecond}/s: ${Number.isFinite(factor) ? factor.toFixed(2) : '∞'}× slower; ` +
          `503 ${refused}, 429 ${limited}; #${id} p50 ${b.api.latencyMs.p50} ms, SQL ${b.sql?.tps ?? '–'} tx/s`,
      });
    }
  }
  const changes = measured.changes;
  if (changes) {
    const of = `${changes.visibleResults.toLocaleString('en-US')} results in ${changes.groups} series`;
    out.push(
      {
        target: `changes over time computed, p50 < ${EVERY_METRIC_GOALS.changesColdP50Ms} ms${scale}`,
        status: changes.coldMs.p50 < EVERY_METRIC_GOALS.changesColdP50Ms ? 'met' : 'missed',
        detail: `${of}: p50 ${changes.coldMs.p50} ms, p95 ${changes.coldMs.p95} ms over ${changes.rounds} rounds; its SQL alone p50 ${changes.sqlMs.p50} ms (${changes.fromTable ? 'metric values table' : 'documents'}); after a write to one series p50 ${changes.afterWriteMs?.p50} ms`,
      },
      {
        target: `changes over time remembered, p50 < ${EVERY_METRIC_GOALS.changesRememberedP50Ms} ms${scale}`,
        status: changes.rememberedMs.p50 < EVERY_METRIC_GOALS.changesRememberedP50Ms ? 'met' : 'missed',
        detail: `${of}: p50 ${changes.rememberedMs.p50} ms, p95 ${changes.rememberedMs.p95} ms`,
      },
    );
  }
  const flavors = measured.compareBaseline?.byFlavor;
  if (flavors) {
    const factor = flavors.computedMs.p50 / Math.max(0.001, flavors.medianSqlMs.p50);
    out.push({
      target: `compare by flavor computed within ${EVERY_METRIC_GOALS.medianFactor}× of PostgreSQL's median per flavor${scale}`,
      status: factor <= EVERY_METRIC_GOALS.medianFactor ? 'met' : 'missed',
      detail: `computed after a write p50 ${flavors.computedMs.p50} ms, p95 ${flavors.computedMs.p95} ms; percentile_cont per flavor p50 ${flavors.medianSqlMs.p50} ms: ${factor.toFixed(2)}×`,
    });
  }
  const health = measured.health;
  if (health) {
    out.push({
      target: `/health p99 < ${EVERY_METRIC_GOALS.healthP99Ms} ms while changes and baseline compares run in loops`,
      status: health.loadedMs.p99 < EVERY_METRIC_GOALS.healthP99Ms ? 'met' : 'missed',
      detail: `p99 ${health.loadedMs.p99} ms, max ${health.loadedMs.max} ms (alone: p99 ${health.idleMs.p99} ms)`,
    });
  }
  return out;
}

export const TARGETS = {
  ratio: 0.5,
  p99Ms: 100,
  p99AtResults: 1_000_000,
  ingestPerSecond: 1000,
  memoryMb: 250,
  /** "Compare and export": compare (scenarios 8 and 9) at one connection, at 1M results. */
  compareP50Ms: 150,
  /** "Compare and export": export (scenario 10) results per second, and how much the server's RSS may grow in its second half. */
  exportPerSecond: 20_000,
  exportRssGrowthMb: 16,
};

/** The read scenarios of "Read and write load", whose throughput is judged against their SQL baseline. */
const LOAD_READS = [1, 2, 3, 4, 5];

/** Results one successful request of the scenario stores (1 for reads and single uploads). */
const perRequest = (s: ScenarioReport) => s.resultsPerRequest ?? 1;

/** Validated results stored per second by a run of an ingest scenario. */
export const resultsPerSecond = (s: ScenarioReport, r: RunReport) => r.api.okPerSecond * perRequest(s);

const fmt = (v: number, digits = 0) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
/** MB with one decimal, or – when not measured. */
const mb = (v: number | null) => (v === null ? '–' : fmt(v, 1));

export function judgeTargets(report: Omit<BenchReport, 'targets'>): TargetResult[] {
  const out: TargetResult[] = [];
  const reads = report.scenarios.filter((s) => s.kind === 'read' && LOAD_READS.includes(s.id));
  const maxConn = Math.max(...report.options.connections);
  if (reads.length) {
    const at = report.options.connections.includes(32) ? 32 : maxConn;
    const ratios = reads.map((s) => ({ s, run: s.runs.find((r) => r.connections === at) }));
    const missed = ratios.filter(({ run }) => !run || run.ratio === null || run.ratio < TARGETS.ratio);
    out.push({
      target: `Read scenarios: API throughput ≥ ${TARGETS.ratio * 100}% of the raw SQL baseline at ${at} connections`,
      status: missed.length ? 'missed' : 'met',
      detail:
        ratios.map(({ s, run }) => `#${s.id} ${run?.ratio == null ? 'n/a' : `${fmt(run.ratio * 100)}%`}`).join(', ') +
        (at !== 32 ? ` (32 connections not measured; ${at} used)` : ''),
    });
  }
  const p99Scenarios = report.scenarios.filter((s) => [1, 2, 4, 5].includes(s.id));
  if (p99Scenarios.length) {
    const worst = p99Scenarios.map((s) => ({ s, runs: s.runs.filter((r) => r.api.latencyMs.p99 >= TARGETS.p99Ms) }));
    const missing = worst.filter((w) => w.runs.length);
    const applicable = report.options.results >= TARGETS.p99AtResults;
    const detail =
      p99Scenarios
        .map((s) => `#${s.id} ${s.runs.map((r) => `${fmt(r.api.latencyMs.p99, 1)} ms@${r.connections}`).join(' / ')}`)
        .join('; ') + (applicable ? '' : ` (measured at ${fmt(report.options.results)} results; the target is set at 1M)`);
    out.push({
      target: `p99 < ${TARGETS.p99Ms} ms at 1M results for scenarios 1, 2, 4, 5 (every concurrency measured)`,
      status: !applicable ? 'not applicable' : missing.length ? 'missed' : 'met',
      detail,
    });
  }
  const ingest = report.scenarios.filter((s) => s.kind === 'ingest');
  if (ingest.length) {
    // Validated results per second: successful requests times the results each one stored.
    const measured = ingest.flatMap((s) => s.runs.map((r) => ({ s, r, perSecond: resultsPerSecond(s, r) })));
    const best = measured.reduce<(typeof measured)[number] | null>((b, m) => (!b || m.perSecond > b.perSecond ? m : b), null);
    out.push({
      target: `Ingest: ≥ ${fmt(TARGETS.ingestPerSecond)} validated results/s (best of the ingest scenarios)`,
      status: best && best.perSecond >= TARGETS.ingestPerSecond ? 'met' : 'missed',
      detail:
        ingest
          .map(
            (s) =>
              `#${s.id} ${s.runs.map((r) => `${fmt(resultsPerSecond(s, r))}/s@${r.connections}`).join(', ')}${perRequest(s) > 1 ? ` (${perRequest(s)} per request)` : ''}`,
          )
          .join('; ') + (best ? `; best: #${best.s.id} at ${best.r.connections} connections, ${fmt(best.perSecond)} results/s` : ''),
    });
  }
  out.push(...compareExportTargets(report));
  out.push({
    target: `Server memory < ${TARGETS.memoryMb} MB at peak (RSS)`,
    status: report.server.peakRssMb < TARGETS.memoryMb ? 'met' : 'missed',
    detail: `peak ${fmt(report.server.peakRssMb, 1)} MB, idle ${fmt(report.server.idleRssMb, 1)} MB`,
  });
  return out;
}

/** The targets of "Compare and export", for the scenarios of it that ran: compare latency, export rate and flat memory. */
function compareExportTargets(report: Omit<BenchReport, 'targets'>): TargetResult[] {
  const out: TargetResult[] = [];
  const applicable = report.options.results >= TARGETS.p99AtResults;
  const at = applicable ? '' : ` (measured at ${fmt(report.options.results)} results; the target is set at 1M)`;
  const compare = report.scenarios.filter((s) => s.id === 8 || s.id === 9);
  if (compare.length) {
    const runs = compare.map((s) => ({ s, run: s.runs.find((r) => r.connections === 1) }));
    const missed = runs.filter(({ run }) => !run || run.api.latencyMs.p50 >= TARGETS.compareP50Ms);
    out.push({
      target: `Compare (scenarios 8, 9): p50 < ${TARGETS.compareP50Ms} ms at one connection, at 1M results`,
      status: !applicable ? 'not applicable' : missed.length ? 'missed' : 'met',
      detail:
        runs.map(({ s, run }) => `#${s.id} ${run ? `${fmt(run.api.latencyMs.p50, 1)} ms` : 'not run at 1 connection'}`).join(', ') + at,
    });
  }
  for (const s of report.scenarios.filter((x) => x.kind === 'export')) {
    const e = s.runs[0]?.export;
    const halves = e && e.rss.firstHalfPeakMb !== null && e.rss.secondHalfPeakMb !== null;
    const growth = halves ? e.rss.secondHalfPeakMb! - e.rss.firstHalfPeakMb! : Number.POSITIVE_INFINITY;
    const good = !!e && e.results === e.expected && e.resultsPerSecond >= TARGETS.exportPerSecond && growth <= TARGETS.exportRssGrowthMb;
    out.push({
      target: `Export (scenario ${s.id}): ≥ ${fmt(TARGETS.exportPerSecond)} results/s, server RSS flat (second half's peak ≤ first half's + ${TARGETS.exportRssGrowthMb} MB), at 1M results`,
      status: !applicable ? 'not applicable' : good ? 'met' : 'missed',
      detail: e
        ? `${fmt(e.results)} results in ${fmt(e.seconds, 1)} s: ${fmt(e.resultsPerSecond)} results/s; RSS start ${fmt(e.rss.startMb, 1)} MB, ` +
          `peak ${fmt(e.rss.peakMb, 1)} MB (first half ${mb(e.rss.firstHalfPeakMb)}, second half ${mb(e.rss.secondHalfPeakMb)}), end ${fmt(e.rss.endMb, 1)} MB${at}`
        : 'not measured',
    });
  }
  return out;
}

/** The table of export runs: rates against the cursor read straight from PostgreSQL, and the server's RSS. */
function exportTable(report: BenchReport): string[] {
  const runs = report.scenarios.flatMap((s) => s.runs.filter((r) => r.export).map((r) => ({ s, r, e: r.export! })));
  if (!runs.length) return [];
  const lines = [
    '',
    '**Export** (one request streaming every visible result; the SQL baseline reads the same cursor with `fetch 500`; RSS of the server sampled every 200 ms)',
    '',
    '| # | Results | MB | API s (first byte ms) | API results/s | SQL s | SQL results/s | API / SQL | Server RSS MB: start / peak / end | RSS peak MB: first half / second half | CPU ms per 1,000 results: server / PostgreSQL |',
    '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const { s, r, e } of runs) {
    const per1000 = (ms: number | undefined) => (ms === undefined ? '–' : fmt((1000 * ms) / Math.max(1, e.results), 1));
    lines.push(
      `| ${s.id} | ${fmt(e.results)} | ${fmt(e.bytes / 1048576)} | ${fmt(e.seconds, 1)} (${fmt(e.firstByteMs)}) | ${fmt(e.resultsPerSecond)} | ${fmt(e.sqlSeconds, 1)} | ` +
        `${fmt(e.sqlResultsPerSecond)} | ${r.ratio === null ? '–' : `${fmt(r.ratio * 100)}%`} | ${fmt(e.rss.startMb, 1)} / ${fmt(e.rss.peakMb, 1)} / ${fmt(e.rss.endMb, 1)} | ` +
        `${mb(e.rss.firstHalfPeakMb)} / ${mb(e.rss.secondHalfPeakMb)} | ${per1000(r.apiCpu?.serverMs)} / ${per1000(r.apiCpu?.postgresMs)} |`,
    );
  }
  return lines;
}

const percentOf = (ratio: number | null | undefined) => (ratio == null ? '–' : `${fmt(ratio * 100)}%`);

/** Scenario 27: /health alone and while changes and comparisons are computed. */
function healthTable(report: BenchReport): string[] {
  const h = report.everyMetric?.health;
  if (!h) return [];
  const times = (m: { p50: number; p95: number; p99: number; max: number; count: number }) =>
    `${fmt(m.p50, 1)} | ${fmt(m.p95, 1)} | ${fmt(m.p99, 1)} | ${fmt(m.max, 1)} | ${fmt(m.count)}`;
  return [
    '',
    `**/health under load** (scenario 27, ${h.benchmark}: \`GET /health\` every 10 ms for ${h.seconds} s alone, then for ${h.seconds} s while the loops below run; statuses of /health ${JSON.stringify(h.healthStatuses)})`,
    '',
    '| Requests | p50 ms | p95 ms | p99 ms | max ms | answers | statuses |',
    '|---|--:|--:|--:|--:|--:|---|',
    `| /health alone | ${times(h.idleMs)} | |`,
    `| /health under load | ${times(h.loadedMs)} | |`,
    ...h.loops.map((l) => `| ${l.loops} loops of \`${l.request.split('?')[0]}\` | ${times(l.ms)} | ${JSON.stringify(l.statuses)} |`),
  ];
}

export function markdownSection(report: BenchReport): string {
  const l = report.data.load;
  const lines: string[] = [];
  lines.push(
    `_Generated by \`npm run bench\` on ${report.generatedAt.slice(0, 16).replace('T', ' ')} UTC in ${fmt(report.elapsedSeconds / 60, 1)} min; ` +
      `${report.options.durationSeconds} s per run, ${report.options.warmupSeconds} s warm-up per scenario. Everything between the markers is rewritten by each run._`,
    '',
    `- **Machine**: ${report.machine.cpus} × ${report.machine.cpuModel}, ${fmt(report.machine.memoryGb)} GiB, ${report.machine.platform}, Node ${report.machine.node}; ${report.machine.postgres.split(' on ')[0]} (embedded), baseline with ${report.options.baselineTool}.`,
    `- **Data**: ${fmt(l.loaded.result)} results (mean JSON ${fmt(l.meanJsonBytes)} bytes, ${fmt((100 * l.loaded.result_hidden) / Math.max(1, l.loaded.result), 1)}% hidden), ` +
      `${l.loaded.benchmark} benchmarks, ${l.loaded.site} sites, ${l.loaded.flavor} flavors, ${l.loaded.tag} tags, ${fmt(l.loaded.result_tag)} result tags, ${fmt(l.loaded.claim)} claims; ` +
      `database ${fmt(l.sizes.database_mb)} MB (result table ${fmt(l.sizes.result_table_mb)} MB, its indexes ${fmt(l.sizes.result_indexes_mb)} MB).`,
    `- **Load** (${l.method === 'copy-csv' ? 'COPY from CSV files' : 'INSERT batches'}${report.data.reused ? ', reused from an earlier run' : ''}): ` +
      `generate + load ${fmt(l.seconds.generateAndCopy, 1)} s, indexes ${fmt(l.seconds.indexes, 1)} s, VACUUM ANALYZE ${fmt(l.seconds.vacuumAnalyze, 1)} s, ` +
      `total ${fmt(l.seconds.total, 1)} s (${fmt(l.loaded.result / Math.max(0.001, l.seconds.total))} results/s).`,
    `- **Server memory** (RSS of the server process${report.server.nodeArgs?.length ? `, run with \`${report.server.nodeArgs.join(' ')}\`` : ''}): idle ${fmt(report.server.idleRssMb, 1)} MB, peak ${fmt(report.server.peakRssMb, 1)} MB.`,
  );
  if (report.data.created?.length)
    lines.push(
      `- **Created through the API** (shape ${report.options.shape}), their results loaded with COPY: ` +
        report.data.created
          .map(
            (c) =>
              `${c.key} by ${c.createdBy === 'user' ? 'a user, approved by an administrator' : 'an administrator'} (${c.metricPaths} metric paths ready at once)`,
          )
          .join('; ') +
        '.',
    );
  lines.push(
    '',
    '| # | Scenario | Conn. | API 2xx/s | p50 ms | p95 ms | p99 ms | Errors / non-2xx | SQL tx/s | SQL p50 / p99 ms | API / SQL | API / list | Server peak RSS MB |',
    '|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const s of report.scenarios) {
    for (const r of s.runs.filter((x) => !x.export)) {
      const a = r.api;
      lines.push(
        `| ${s.id} | ${s.title} | ${r.connections} | ${fmt(a.okPerSecond, 1)}${perRequest(s) > 1 ? ` (${fmt(resultsPerSecond(s, r))} results/s)` : ''}${r.seconds !== report.options.durationSeconds ? ` (${r.seconds} s run)` : ''} | ` +
          `${fmt(a.latencyMs.p50, 1)} | ${fmt(a.latencyMs.p95, 1)} | ${fmt(a.latencyMs.p99, 1)}${a.latencyMs.count < 100 ? ` (${a.latencyMs.count} answers)` : ''} | ` +
          `${a.errors + a.timeouts} / ${a.non2xx}${a.statusCodes['503'] ? ` (503: ${fmt(a.statusCodes['503'])})` : ''} | ${r.sql ? fmt(r.sql.tps, 1) : '–'} | ${r.sql ? `${fmt(r.sql.latencyMs.p50, 1)} / ${fmt(r.sql.latencyMs.p99, 1)}` : '–'} | ` +
          `${percentOf(r.ratio)} | ${r.vsReference === undefined ? '–' : `${percentOf(r.vsReference)} of #${s.reference}`} | ${fmt(r.serverPeakRssMb, 1)} |`,
      );
    }
  }
  if (report.scenarios.some((s) => s.runs.some((r) => r.apiCpu))) {
    lines.push(
      '',
      '**Where the CPU goes** (CPU milliseconds per request or transaction, from /proc; 2 cores give 2,000 ms per second to share; ' +
        '"other" is the share of the machine used by programs outside the benchmark during the run, which lowers its figures)',
      '',
      '| # | Conn. | API: server | API: PostgreSQL | API: load generator | SQL: PostgreSQL | SQL: client | Other load (API / SQL run) |',
      '|---|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const s of report.scenarios) {
      for (const r of s.runs.filter((x) => !x.export)) {
        const per = (ms: number | undefined, n: number) => (ms === undefined || n === 0 ? '–' : fmt(ms / n, 2));
        const n = r.api.responses;
        const t = r.sql?.transactions ?? 0;
        lines.push(
          `| ${s.id} | ${r.connections} | ${per(r.apiCpu?.serverMs, n)} | ${per(r.apiCpu?.postgresMs, n)} | ${per(r.apiCpu?.clientMs, n)} | ` +
            `${per(r.sqlCpu?.postgresMs, t)} | ${per(r.sqlCpu?.clientMs, t)} | ${r.apiCpu ? `${fmt(r.apiCpu.otherPercent, 1)}% / ${fmt(r.sqlCpu?.otherPercent ?? 0, 1)}%` : '–'} |`,
        );
      }
    }
  }
  lines.push(...exportTable(report), ...healthTable(report));
  lines.push('', '**Targets**', '', '| Target | Status | Measured |', '|---|---|---|');
  for (const t of [...report.targets, ...(report.everyMetric?.goals ?? [])]) lines.push(`| ${t.target} | **${t.status}** | ${t.detail} |`);
  lines.push(
    '',
    '**What each request costs the database** (first request variant; EXPLAIN (ANALYZE, BUFFERS) in `bench/results/explain/`)',
    '',
  );
  lines.push('| # | Statements per request | Execution ms (role) | Indexes used | Sequential scans |', '|---|--:|---|---|---|');
  for (const s of report.scenarios) {
    const times = s.statements.map((st) => `${st.executionMs == null ? '?' : fmt(st.executionMs, 2)} (${st.role})`).join(', ');
    const idx = [...new Set(s.statements.flatMap((st) => st.indexes))].join(', ') || '–';
    const seq = [...new Set(s.statements.flatMap((st) => st.seqScans))].join(', ') || '–';
    lines.push(`| ${s.id} | ${s.statementsPerRequest} | ${times} | ${idx} | ${seq} |`);
  }
  return lines.join('\n');
}

export const START = '<!-- bench:start -->';
export const END = '<!-- bench:end -->';

const SKELETON = `# Performance

How fast the service lists, searches and ingests results at scale, measured by \`npm run bench\`.

${START}
${END}
`;

/** Replaces the generated section of the Markdown file (creating the file when it does not exist). */
export function writeMarkdown(path: string, section: string): void {
  const text = existsSync(path) ? readFileSync(path, 'utf8') : SKELETON;
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  const body = `${START}\n${section}\n${END}`;
  const next = start >= 0 && end > start ? text.slice(0, start) + body + text.slice(end + END.length) : `${text.trimEnd()}\n\n${body}\n`;
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, next);
}

export function writeJson(path: string, report: BenchReport): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(report, null, 2)}\n`);
}
