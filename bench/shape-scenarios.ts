/**
 * The users' shape (18 to 27, on one benchmark, a quarter of the results with `--shape origin`):
 * 18, its plain list, which 19 to 26 are divided by; 19 to 24, `<path> >= X&sort_by=-json.result.score`
 * with X taken from the loaded data so that 1 %, 75 % and 100 % of its results pass, on a suggested
 * path (19 to 21) and on an unsuggested one (22 to 24); 25, one of its results by id; 26, the
 * benchmarks list; 27 (bench/changes-runs.ts), /health while changes and comparisons are computed.
 */
import type pg from 'pg';
import { valueAt, type BenchmarkRow, type Catalogue } from './generate.ts';
import { API, benchmarkList, listCheck, query, resultsById, type Scenario, type ScenarioInputs, type Selectivity } from './scenarios.ts';

/** A numeric path every benchmark's schema describes without suggesting it (`machine.memory` is not suggested), continuous. */
export const UNSUGGESTED_FILTER = 'machine.memory.available_mb';
/** The issue's filter on a suggested path (`suggestToUser` on `machine.cpu.count`). */
export const SUGGESTED_FILTER = 'machine.cpu.count';

/** The measurements that are not load runs, by scenario id. */
export const MEASURED_ONCE: Record<number, string> = {
  16: 'changes',
  17: 'compare-baseline',
  27: 'health-under-load',
};

/** The scenarios of the users' shape, and the one they are divided by. */
export const SHAPE_SCENARIOS = [18, 19, 20, 21, 22, 23, 24, 25, 26, 27];
const SHAPE_LIST = 18;
/** The shares of the benchmark's results that the filters of 19 to 24 aim to keep. */
export const SELECTIVITY_TARGETS = [0.01, 0.75, 1];
export const SHAPE_SORT = 'result.score';

/** The benchmark of scenarios 18 to 27: the one a user created through the API, else the first. */
export function shapeBenchmark(catalogue: Catalogue): BenchmarkRow {
  return catalogue.benchmarks.find((b) => b.createdBy === 'user') ?? catalogue.benchmarks[0]!;
}

/**
 * For each path and target share, the threshold X whose `>= X` keeps the share of the benchmark's
 * visible results nearest the target (the distinct values counted from the top); and a sample of its
 * result ids.
 */
export async function shapeInputs(client: pg.Client, benchmark: BenchmarkRow): Promise<NonNullable<ScenarioInputs['shape']>> {
  const cuts: Selectivity[] = [];
  for (const path of [SUGGESTED_FILTER, UNSUGGESTED_FILTER]) {
    const { rows } = await client.query<{ target: number; threshold: string; passing: number; total: number }>(
      `with d as (select (json #> $2::text[])::numeric as v, count(*) as n from result
                  where benchmark_id = $1 and not hidden and jsonb_typeof(json #> $2::text[]) = 'number' group by 1),
            c as (select v, sum(n) over (order by v desc) as passing from d),
            t as (select count(*)::float8 as total from result where benchmark_id = $1 and not hidden)
       select target, best.v::text as threshold, best.passing::int as passing, t.total::int as total
       from unnest($3::float8[]) as target, t,
            lateral (select v, passing from c order by abs(passing / t.total - target), v desc limit 1) best
       order by target`,
      [benchmark.id, path.split('.'), SELECTIVITY_TARGETS],
    );
    for (const r of rows)
      cuts.push({ path, target: r.target, threshold: Number(r.threshold), passing: r.passing, total: r.total, share: r.passing / r.total });
  }
  const { rows } = await client.query<{ id: string }>(
    'select id::text from result where benchmark_id = $1 and not hidden order by md5(id::text) limit 100',
    [benchmark.id],
  );
  return { benchmark, cuts, resultIds: rows.map((r) => r.id) };
}

/** A page in descending order of `sort`, every item at or above `threshold` at `filter`. */
function filteredSortedCheck(benchmark: BenchmarkRow, filter: string, threshold: number, sort: string) {
  return listCheck(benchmark, (items) => {
    if (items.length === 0) return 'nothing matched the filter';
    let previous = Number.POSITIVE_INFINITY;
    for (const r of items) {
      const json = r.json as Record<string, unknown>;
      const v = valueAt(json, filter) as number;
      if (!(v >= threshold)) return `${filter} filter not applied`;
      const value = valueAt(json, sort) as number;
      if (value > previous) return `not sorted by -json.${sort}`;
      previous = value;
    }
    return null;
  });
}

const percent = (share: number) => `${(100 * share).toFixed(share < 0.1 ? 2 : 1)} %`;

/** Scenarios 18 to 26 (27 is measured once), on `input.shape`'s benchmark. */
export function buildShapeScenarios(input: ScenarioInputs): Scenario[] {
  if (!input.shape) return [];
  const { benchmark: b, cuts, resultIds } = input.shape;
  const visible = () => input.visible.byBenchmark.get(b.id) ?? 0;
  const of = `${b.def.key}, ${cuts[0]!.total.toLocaleString('en-US')} results`;
  const list = (filter?: string) => ({
    method: 'GET' as const,
    path: `${API}/results?${query([
      ['benchmark_id', b.id],
      ...(filter
        ? ([
            ['filters', filter],
            ['sort_by', `-json.${SHAPE_SORT}`],
          ] as [string, string][])
        : []),
      ['per_page', 100],
    ])}`,
  });
  const s18: Scenario = {
    id: SHAPE_LIST,
    key: 'shape-list',
    title: `A benchmark's results (${of})`,
    endpoint: 'GET /results?benchmark_id=B&per_page=100',
    variants: [{ label: b.def.key, request: list(), check: listCheck(b, (items) => (items.length ? null : 'no results')) }],
  };
  const filtered = cuts.map((cut, k): Scenario => {
    const filter = `${cut.path} >= ${cut.threshold}`;
    const sorted = filteredSortedCheck(b, cut.path, cut.threshold, SHAPE_SORT);
    return {
      id: SHAPE_LIST + 1 + k,
      key: `shape-${cut.path === SUGGESTED_FILTER ? 'suggested' : 'unsuggested'}-${Math.round(cut.target * 100)}`,
      title: `${filter}, -json.${SHAPE_SORT}: ${percent(cut.share)} pass (target ${percent(cut.target)}; ${cut.path === SUGGESTED_FILTER ? 'suggested' : 'unsuggested'} path)`,
      endpoint: `GET /results?benchmark_id=B&filters=${filter}&sort_by=-json.${SHAPE_SORT}&per_page=100`,
      reference: SHAPE_LIST,
      selectivity: cut,
      variants: [
        {
          label: `${b.def.key}: ${filter}`,
          request: list(filter),
          // The ingest scenarios may have added a few results since the threshold was chosen.
          check: (status, body) =>
            sorted(status, body) ??
            (Math.abs((body as { total: number }).total / Math.max(1, visible()) - cut.share) > 0.1
              ? `a total of ${(body as { total: number }).total} of ${visible()}, ${percent(cut.share)} expected`
              : null),
        },
      ],
    };
  });
  const s25: Scenario = {
    ...resultsById(resultIds),
    id: 25,
    key: 'shape-get-by-id',
    title: `One result by id (${b.def.key})`,
    endpoint: 'GET /results/{id}',
    reference: SHAPE_LIST,
  };
  const s26: Scenario = {
    id: 26,
    key: 'shape-benchmarks',
    title: 'The benchmarks list',
    endpoint: 'GET /benchmarks',
    reference: SHAPE_LIST,
    variants: [benchmarkList(input.catalogue.benchmarks.length)],
  };
  return [s18, ...filtered, s25, s26];
}
