/**
 * "Every metric fast"'s goals ("Every metric fast"), judged from a run of the harness: scenario 11 (a JSON
 * filter and sort on described, unsuggested paths) and 12 (on suggested paths) against scenario 1
 * (the same benchmark's plain list) in successful answers per second at 8 and 32 connections, no
 * 503 at 32; the first comparison after a write (13) under 150 ms at p50; 8 identical comparisons
 * after a write (14) computed once. Ingest (6, 7) is reported: its goal (within 10 % of before the
 * metric values table) compares two runs, not one.
 */
import type { CompareAfterWriteReport, MetricTableSize, SeriesReport } from './metric-runs.ts';
import type { ColdRememberedReport, HealthUnderLoadReport } from './changes-runs.ts';
import type { BenchReport, RunReport, ScenarioReport, TargetResult } from './report.ts';

export interface EveryMetricReport {
  metricTable: MetricTableSize | null;
  compareAfterWrite: CompareAfterWriteReport | null;
  comparesAfterWrite: CompareAfterWriteReport | null;
  series: SeriesReport | null;
  /** Scenarios 16 (GET /results:changes) and 17 (GET /results:compare with `baseline`), bench/changes-runs.ts. */
  changes: ColdRememberedReport | null;
  compareBaseline: ColdRememberedReport | null;
  /** Scenario 27: GET /health while changes and comparisons are computed (bench/changes-runs.ts). */
  health: HealthUnderLoadReport | null;
  /** The machine's 1-minute load average, sampled every 10 s through the run. */
  loadAverage: { min: number; median: number; max: number; samples: number };
  goals: TargetResult[];
}

export const EVERY_METRIC_GOALS = {
  /** (b) within this factor of (a) in requests per second. */
  listFactor: 4,
  listConnections: [8, 32],
  compareColdP50Ms: 150,
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

export function judgeEveryMetric(report: Omit<BenchReport, 'targets'>, measured: EveryMetricReport): TargetResult[] {
  const out: TargetResult[] = [];
  const at1M = report.options.results >= 1_000_000;
  const scale = at1M ? '' : ` (at ${report.options.results.toLocaleString('en-US')} results, not 1M)`;
  const pairs: [number, number][] = [11, 12].map((id) => [1, id]);
  for (let id = 19; id <= 24; id++) pairs.push([18, id]);
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
  const cold = measured.compareAfterWrite;
  if (cold) {
    out.push({
      target: `first comparison after a write, p50 < ${EVERY_METRIC_GOALS.compareColdP50Ms} ms${scale}`,
      status: cold.apiMs.p50 < EVERY_METRIC_GOALS.compareColdP50Ms ? 'met' : 'missed',
      detail: `p50 ${cold.apiMs.p50} ms, p95 ${cold.apiMs.p95} ms over ${cold.rounds} writes; its SQL alone p50 ${cold.sqlMs.p50} ms (${cold.fromTable ? 'metric values table' : 'documents'})`,
    });
  }
  const eight = measured.comparesAfterWrite;
  if (eight) {
    out.push({
      target: '8 identical comparisons after a write share one computation',
      status: eight.computations === 1 ? 'met' : 'missed',
      detail: `${eight.computations} computation(s) for 8 requests; every request p50 ${eight.apiMs.p50} ms, slowest of a round p50 ${eight.roundMs.p50} ms; SQL alone p50 ${eight.sqlMs.p50} ms`,
    });
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
