/**
 * What the metric values table (services/results/metric-values.ts) costs and gains, on one benchmark of
 * the harness's catalogue: `node --import ./scripts/dev/register.js bench/metric-values.ts
 * [--results N] [--runs N]` (default 50,000 results, the size of a typical benchmark at a million,
 * and 7 runs). An embedded PostgreSQL of the test harness (its default settings), documents from
 * the harness's generator, over 400 flavors.
 *
 * - ingest: multi-row inserts of 500 results, with the metric values trigger and without it,
 *   chunks taking turns (µs per result, median of the chunks);
 * - backfill: the pass over every result stored without the trigger;
 * - size: the table and its indexes per result, next to the result table's;
 * - compare: GET /results:compare's computation (compareResults) from the documents and from the
 *   table, taking turns, right after a write (the server's remembered answers are not involved).
 */
import { performance } from 'node:perf_hooks';
import { BENCHMARKS, benchmarkSchema, resultDocument, seedSiteFlavors } from './catalogue.ts';
import { Rng } from './random.ts';
import { startTestServer } from '../packages/server/test/support/harness.ts';
import { createSeeder } from '../packages/server/test/support/seed.ts';
import { compareResults, type CompareParams } from '../packages/server/src/services/compare/compare.ts';
import { metricValuePaths } from '../packages/server/src/services/results/metric-values.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RESULTS = arg('results', 50_000);
const RUNS = arg('runs', 7);
const CHUNK = 500;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const t = await startTestServer({}, 'bench_metric_values');
try {
  const em = () => t.server.context.orm.em.fork();
  const seed = await createSeeder(t);
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => em().execute<T[]>(text, params);
  console.log(
    'paths kept per benchmark of the catalogue:',
    BENCHMARKS.map((d) => `${d.key} ${metricValuePaths(benchmarkSchema(d)).length}`).join(', '),
  );
  const def = BENCHMARKS[0]!;
  const benchmark = await seed.benchmark({ schema: benchmarkSchema(def) });
  const rng = new Rng(20261126);
  const flavors = await seedSiteFlavors(seed, rng, 50, 8);
  const insertChunk = async (n: number) => {
    const rows = Array.from({ length: n }, () => {
      const f = flavors[rng.int(0, flavors.length - 1)]!;
      return {
        flavor_id: f.id,
        site_id: f.site_id,
        json: resultDocument(def, { rng, flavor: f.spec, siteIndex: 0, age: rng.next() }),
        execution_datetime: new Date(Date.UTC(2024, 0, 1) + rng.int(0, 365 * 86_400_000)).toISOString(),
      };
    });
    const started = performance.now();
    await sql(
      'insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub) ' +
        'select gen_random_uuid(), ?, r.site_id, r.flavor_id, r.json, r.execution_datetime, now(), ?, ? ' +
        'from jsonb_to_recordset(?::jsonb) as r(site_id uuid, flavor_id uuid, json jsonb, execution_datetime timestamptz)',
      [benchmark.id, seed.owner.uploader_iss, seed.owner.uploader_sub, JSON.stringify(rows)],
    );
    return ((performance.now() - started) * 1000) / n;
  };
  const trigger = (on: boolean) => sql(`alter table result ${on ? 'enable' : 'disable'} trigger result_metric_values_insert`);

  // Older results, stored without the table (as before the migration).
  await trigger(false);
  for (let done = 0; done < RESULTS; done += CHUNK) await insertChunk(Math.min(CHUNK, RESULTS - done));
  await trigger(true);
  const backfillStarted = performance.now();
  await t.server.context.metrics.reconcile(em());
  await t.server.context.metrics.idle();
  const backfillMs = performance.now() - backfillStarted;
  const [paths] = await sql<{ n: number }>('select count(*)::int as n from metric_path where benchmark_id = ?', [benchmark.id]);

  // Ingest, chunks taking turns (the table grows by about a fifth meanwhile).
  const cost = { with: [] as number[], without: [] as number[] };
  for (let i = 0; i < 20; i++) {
    const on = i % 2 === 0;
    await trigger(on);
    cost[on ? 'with' : 'without'].push(await insertChunk(CHUNK));
  }
  await trigger(true);
  await sql(`delete from metric_benchmark where benchmark_id = ?`, [benchmark.id]); // the unwritten rows of the chunks without
  await t.server.context.metrics.reconcile(em());
  await t.server.context.metrics.idle();

  const [size] = await sql<Record<string, number>>(
    "select (select count(*) from result)::int as results, (select count(*) from metric_value)::int as rows, pg_relation_size('metric_value')::float8 as heap, " +
      "(pg_total_relation_size('metric_value') - pg_relation_size('metric_value'))::float8 as indexes, pg_total_relation_size('result')::float8 as result_total",
  );

  const query = { benchmark_id: benchmark.id, metric: `json.${def.metric}` } as CompareParams;
  const times = { documents: [] as number[], table: [] as number[] };
  let same = true;
  for (let i = 0; i < RUNS; i++) {
    await insertChunk(1); // a write: what the server remembers would be forgotten here
    const a0 = performance.now();
    const fromDocuments = await compareResults(em(), query, { documents: true });
    const a1 = performance.now();
    const fromTable = await compareResults(em(), query);
    const a2 = performance.now();
    times.documents.push(a1 - a0);
    times.table.push(a2 - a1);
    same &&= JSON.stringify(fromDocuments.answer) === JSON.stringify(fromTable.answer);
  }
  const perResult = (bytes: number) => (bytes / size!.results).toFixed(0);
  console.log(
    JSON.stringify(
      {
        benchmark: def.key,
        metric: def.metric,
        results: size!.results,
        paths: paths!.n,
        metric_value_rows_per_result: (size!.rows / size!.results).toFixed(1),
        bytes_per_result: {
          metric_value_heap: perResult(size!.heap),
          metric_value_indexes: perResult(size!.indexes),
          result_total: perResult(size!.result_total),
        },
        backfill: {
          results: RESULTS,
          seconds: (backfillMs / 1000).toFixed(1),
          results_per_second: Math.round(RESULTS / (backfillMs / 1000)),
        },
        insert_us_per_result: { with_trigger: median(cost.with).toFixed(0), without: median(cost.without).toFixed(0) },
        compare_ms: { documents: median(times.documents).toFixed(1), table: median(times.table).toFixed(1), runs: RUNS },
        identical_answers: same,
      },
      null,
      2,
    ),
  );
} finally {
  await t.close();
}
