/**
 * What the metric values table gains result lists (services/results/metric-lookup.ts): `node --import
 * ./scripts/dev/register.js bench/metric-list.ts [--results N] [--share F] [--runs N] [--seconds S]`
 * (default 200,000 results, a share of 0.5 in the benchmark measured, the rest in a second one
 * interleaved with it on the heap, 15 runs, 5 s of concurrent load). An embedded PostgreSQL of the
 * test harness (its default settings), documents from the harness's generator, no metric indexes.
 *
 * - (a) the benchmark's results, 100 a page (the default order);
 * - (b) the same with `filters=machine.cpu.count > 4` and `sort_by=-json.result.score`, from the
 *   table and from the documents (`metricTable` absent), and (b') the same sorted ascending on a
 *   path that is not suggested (`+json.result.threads`);
 * each through listResults as GET /results calls it (totals remembered, as the server does), ms per
 * request (median), the first request apart (its total counted), requests per second with 8 at
 * once; the page's and the total's statements under EXPLAIN (ANALYZE, BUFFERS). (b'') adds a
 * second filter that leaves few results (`environment.duration_s < 70`): looked up by id.
 */
import { performance } from 'node:perf_hooks';
import { BENCHMARKS, benchmarkSchema, resultDocument, seedSiteFlavors } from './catalogue.ts';
import { Rng } from './random.ts';
import { startTestServer } from '../packages/server/test/support/harness.ts';
import { createSeeder } from '../packages/server/test/support/seed.ts';
import { listResults, type ResultServices } from '../packages/server/src/services/results/results.ts';
import { metricPlan, resultListSql, resultWalk, type ResultListQuery } from '../packages/server/src/services/results/result-query.ts';
import { MetricTable } from '../packages/server/src/services/results/metric-lookup.ts';
import { TotalCache } from '../packages/server/src/services/results/total-cache.ts';
import { EmbedCache } from '../packages/server/src/services/catalogue/embeds.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RESULTS = arg('results', 200_000);
const SHARE = arg('share', 0.5);
const RUNS = arg('runs', 15);
const SECONDS = arg('seconds', 5);
const CHUNK = 1_000;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number) => Math.round(x * 10) / 10;
const log = (m: string) => console.error(`[metric-list ${new Date().toISOString().slice(11, 19)}] ${m}`);

const t = await startTestServer({}, 'bench_metric_list');
try {
  const em = () => t.server.context.orm.em.fork();
  const seed = await createSeeder(t);
  const sql = <T = Record<string, unknown>>(text: string, params: unknown[] = []) => em().execute<T[]>(text, params);
  const def = BENCHMARKS[0]!;
  const other = BENCHMARKS[1]!;
  const measured = await seed.benchmark({ schema: benchmarkSchema(def) });
  const noise = await seed.benchmark({ schema: benchmarkSchema(other) });
  const rng = new Rng(20261126);
  const flavors = await seedSiteFlavors(seed, rng, 50, 8);
  // The paths are chosen before the results arrive: the triggers write the table as uploads would.
  await t.server.context.metrics.reconcile(em());
  await t.server.context.metrics.idle();
  const started = performance.now();
  for (let done = 0; done < RESULTS; done += CHUNK) {
    const rows = Array.from({ length: Math.min(CHUNK, RESULTS - done) }, () => {
      const f = flavors[rng.int(0, flavors.length - 1)]!;
      const d = rng.next() < SHARE ? { def, id: measured.id } : { def: other, id: noise.id };
      return {
        benchmark_id: d.id,
        flavor_id: f.id,
        site_id: f.site_id,
        json: resultDocument(d.def, { rng, flavor: f.spec, siteIndex: 0, age: rng.next() }),
        execution_datetime: new Date(Date.UTC(2024, 0, 1) + rng.int(0, 365 * 86_400_000)).toISOString(),
      };
    });
    await sql(
      'insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub) ' +
        'select gen_random_uuid(), r.benchmark_id, r.site_id, r.flavor_id, r.json, r.execution_datetime, now(), ?, ? ' +
        'from jsonb_to_recordset(?::jsonb) as r(benchmark_id uuid, site_id uuid, flavor_id uuid, json jsonb, execution_datetime timestamptz)',
      [seed.owner.uploader_iss, seed.owner.uploader_sub, JSON.stringify(rows)],
    );
    if ((done / CHUNK) % 20 === 0) log(`${done} results`);
  }
  log(`loaded in ${round((performance.now() - started) / 1000)} s`);
  await sql('vacuum (analyze) result');
  await sql('vacuum (analyze) metric_value');
  const [complete] = await sql<{ complete: boolean }>('select complete from metric_benchmark where benchmark_id = ?', [measured.id]);
  if (!complete?.complete) throw new Error('the measured benchmark is not complete');
  const [counts] = await sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ?', [measured.id]);

  const services = (table: boolean): ResultServices => ({
    totals: new TotalCache(),
    embeds: new EmbedCache(),
    ...(table ? { metricTable: new MetricTable() } : {}),
  });
  const plain: ResultListQuery = { benchmark_id: measured.id, per_page: 100 };
  const filtered: ResultListQuery = {
    benchmark_id: measured.id,
    per_page: 100,
    filters: ['machine.cpu.count > 4'],
    sort_by: `-json.${def.metric}`,
  };
  const unsuggested: ResultListQuery = { ...filtered, sort_by: '+json.result.threads' };
  // Few matches: looked up by id rather than found by walking the sorted path.
  const selective: ResultListQuery = { ...filtered, filters: ['machine.cpu.count > 4', 'environment.duration_s < 70'] };
  const cases = {
    a_plain: { query: plain, table: false },
    b_table: { query: filtered, table: true },
    b_documents: { query: filtered, table: false },
    b_unsuggested_table: { query: unsuggested, table: true },
    b_unsuggested_documents: { query: unsuggested, table: false },
    b_selective_table: { query: selective, table: true },
    b_selective_documents: { query: selective, table: false },
  } as const;
  const same = JSON.stringify(
    await Promise.all(
      [
        [filtered, true],
        [filtered, false],
        [unsuggested, true],
        [unsuggested, false],
        [selective, true],
        [selective, false],
      ].map(async ([q, table]) =>
        (await listResults(em(), services(table as boolean), q as ResultListQuery, { visible: true })).body.toString(),
      ),
    ),
  );
  const parsed = JSON.parse(same) as string[];
  const identical = parsed[0] === parsed[1] && parsed[2] === parsed[3] && parsed[4] === parsed[5];
  const selectiveTotal = JSON.parse(parsed[4]!).total as number;

  const out: Record<string, unknown> = {
    results: RESULTS,
    benchmark_results: counts!.n,
    identical_pages: identical,
    selective_total: selectiveTotal,
  };
  for (const [name, c] of Object.entries(cases)) {
    const s = services(c.table);
    const once = async () => {
      const a = performance.now();
      await listResults(em(), s, c.query, { visible: true });
      return performance.now() - a;
    };
    const first = await once();
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push(await once());
    // 8 at once for SECONDS.
    let done = 0;
    const until = performance.now() + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (performance.now() < until) {
          await once();
          done++;
        }
      }),
    );
    out[name] = { first_ms: round(first), median_ms: round(median(times)), requests_per_second_8: round(done / SECONDS) };
    log(`${name}: ${JSON.stringify(out[name])}`);
  }

  // The statements, under EXPLAIN (ANALYZE, BUFFERS).
  const explain = async (label: string, text: string, params: unknown[]) => {
    const rows = await sql<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${text}`, params);
    const lines = rows.map((r) => r['QUERY PLAN']);
    console.error(`--- ${label}\n${lines.join('\n')}`);
    return lines.filter((l) => /Execution Time|Planning Time/.test(l)).map((l) => l.trim());
  };
  const table = new MetricTable();
  const plans: Record<string, unknown> = {};
  for (const [name, q] of [
    ['a_plain', plain],
    ['b', filtered],
    ['b_unsuggested', unsuggested],
  ] as const) {
    const plan = await metricPlan(em(), table, q, { visible: true });
    const built = resultListSql(q, { visible: true }, { walk: resultWalk(q, { visible: true }), metric: plan ?? undefined });
    const page = built.table?.page ?? built.page;
    plans[`${name}_page`] = await explain(`${name} page`, page.sql, page.params);
    plans[`${name}_count`] = await explain(`${name} count`, built.count.sql, built.count.params);
    if (plan) {
      const documents = resultListSql(q, { visible: true }, { walk: resultWalk(q, { visible: true }) });
      plans[`${name}_documents_page`] = await explain(`${name} documents page`, documents.page.sql, documents.page.params);
      plans[`${name}_documents_count`] = await explain(`${name} documents count`, documents.count.sql, documents.count.params);
    }
  }
  out.explain = plans;
  console.log(JSON.stringify(out, null, 2));
} finally {
  await t.close();
}
