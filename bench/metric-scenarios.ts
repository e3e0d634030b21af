/**
 * "Every metric fast"'s scenarios ("Every metric fast"): a benchmark's results filtered and sorted by JSON
 * numbers at described paths (11: paths the schema describes but does not suggest; 12: suggested
 * paths, the issue's `machine.cpu.count > 4`, `-json.<metric>`), load runs like scenarios 1 to 7;
 * and the measurements run once each after the load runs (bench/metric-runs.ts): 13, the first
 * comparison after a write; 14, 8 identical comparisons at once after a write; 15, a time series
 * read in SQL. The bytes per result of the metric values table are reported with the data.
 */
import { pathQuantile, valueAt, type BenchmarkRow } from './generate.ts';
import { API, listCheck, PAGE_AND_TOTAL, pageAndTotal, query, type Scenario, type ScenarioInputs } from './scenarios.ts';

/** A numeric path every benchmark's schema describes without suggesting it (`machine.memory` is not suggested), continuous. */
export const UNSUGGESTED_FILTER = 'machine.memory.available_mb';
/** A numeric path every schema describes without suggesting it, sorted on. */
export const UNSUGGESTED_SORT = 'environment.duration_s';
/** The issue's filter on a suggested path (`suggestToUser` on `machine.cpu.count`). */
export const SUGGESTED_FILTER = 'machine.cpu.count';
export const SUGGESTED_THRESHOLD = 4;

/** The measurements that are not load runs, by scenario id. */
export const MEASURED_ONCE: Record<number, string> = {
  13: 'compare-after-write',
  14: 'compares-8-after-write',
  15: 'series-sql',
  16: 'changes',
  17: 'compare-baseline',
};

/** A page in descending order of `sort`, every item above `threshold` at `filter`. */
function filteredSortedCheck(benchmark: BenchmarkRow, filter: string, threshold: number, sort: string) {
  return listCheck(benchmark, (items) => {
    if (items.length === 0) return 'nothing matched the filter';
    let previous = Number.POSITIVE_INFINITY;
    for (const r of items) {
      const json = r.json as Record<string, unknown>;
      if (!((valueAt(json, filter) as number) > threshold)) return `${filter} filter not applied`;
      const value = valueAt(json, sort) as number;
      if (value > previous) return `not sorted by -json.${sort}`;
      previous = value;
    }
    return null;
  });
}

export function buildMetricScenarios(input: ScenarioInputs): Scenario[] {
  const { catalogue, options } = input;
  const benchmarks = catalogue.benchmarks.slice(0, Math.max(1, Math.min(input.variants, catalogue.benchmarks.length)));
  const list = (b: BenchmarkRow, filter: string, sort: string) => ({
    method: 'GET' as const,
    path: `${API}/results?${query([
      ['benchmark_id', b.id],
      ['filters', filter],
      ['sort_by', `-json.${sort}`],
      ['per_page', 100],
    ])}`,
  });

  // 11. (b) on described, unsuggested paths
  const s11: Scenario = {
    id: 11,
    key: 'json-filter-sort-described',
    title: 'A JSON filter and a JSON sort on described, unsuggested paths',
    endpoint: `GET /results?benchmark_id=…&filters=${UNSUGGESTED_FILTER} > <p25>&sort_by=-json.${UNSUGGESTED_SORT}&per_page=100`,
    kind: 'read',
    resultsPerRequest: 1,
    p99Target: false,
    variants: benchmarks.map((b) => {
      const threshold = pathQuantile(catalogue, options, b, UNSUGGESTED_FILTER, 0.25);
      const filter = `${UNSUGGESTED_FILTER} > ${threshold}`;
      return {
        label: `${b.def.key}: ${filter}`,
        request: list(b, filter, UNSUGGESTED_SORT),
        check: filteredSortedCheck(b, UNSUGGESTED_FILTER, threshold, UNSUGGESTED_SORT),
      };
    }),
    baseline: (_i, issued) => pageAndTotal(issued),
    baselineMethod: PAGE_AND_TOTAL,
  };

  // 12. (b') on suggested paths: the issue's request
  const s12: Scenario = {
    ...s11,
    id: 12,
    key: 'json-filter-sort-suggested',
    title: 'A JSON filter and a JSON sort on suggested paths',
    endpoint: `GET /results?benchmark_id=…&filters=${SUGGESTED_FILTER} > ${SUGGESTED_THRESHOLD}&sort_by=-json.<metric>&per_page=100`,
    variants: benchmarks.map((b) => {
      const filter = `${SUGGESTED_FILTER} > ${SUGGESTED_THRESHOLD}`;
      return {
        label: `${b.def.key}: ${filter}, -json.${b.def.metric}`,
        request: list(b, filter, b.def.metric),
        check: filteredSortedCheck(b, SUGGESTED_FILTER, SUGGESTED_THRESHOLD, b.def.metric),
      };
    }),
  };

  return [s11, s12];
}
