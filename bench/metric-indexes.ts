/**
 * What the metric indexes (packages/server/src/services/results/metric-indexes.ts) cost every other
 * statement on the result table, and what the cap (MAX_METRIC_INDEXES) saves. An embedded
 * PostgreSQL in a temporary directory, 50 benchmarks whose schemas suggest 8 numeric metrics each,
 * `--results` results spread over them (default 50,000); then, for each set of indexes:
 *
 * - none: no metric index, the baseline;
 * - uncapped: the indexes as they were before the cap (8 metrics per benchmark, 2 indexes each, no
 *   global limit) for 20 and for 50 benchmarks, created with the same definition;
 * - capped: what the server builds now (`MetricIndexes.reconcile`, 4 metrics per benchmark, at most
 *   `--max` indexes, default the server's default) with 20 and with 50 benchmarks approved,
 *
 * the same statements run directly in PostgreSQL (a pg client, bound parameters as the server sends
 * them): the first page and the count of `GET /results` (planning and execution time from EXPLAIN
 * ANALYZE, and the wall time of the statement), one benchmark's first page sorted by its first
 * metric, and single-row inserts into an indexed benchmark (wall time, `synchronous_commit = off`;
 * each insert is deleted afterwards). Medians, and ratios to the baseline.
 *
 *   node --import ./scripts/dev/register.js bench/metric-indexes.ts [--results 50000] [--runs 200] [--max 200]
 *
 * Takes about two minutes on 2 cores. Figures in docs/security.md ("Metric indexes").
 */
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { startEmbeddedPostgres } from '../packages/server/src/db/embedded.ts';
import { connect, migrate } from '../packages/server/src/db/orm.ts';
import { bindValues } from '../packages/server/src/db/bound-driver.ts';
import { DEFAULTS } from '../packages/server/src/config.ts';
import { createLogger } from '../packages/server/src/core/logger.ts';
import { MetricIndexes, metricIndexName } from '../packages/server/src/services/results/metric-indexes.ts';
import { resultListSql } from '../packages/server/src/services/results/result-query.ts';
import { seedSyntheticResults } from './database.ts';

const { values: args } = parseArgs({
  options: {
    results: { type: 'string', default: '50000' },
    runs: { type: 'string', default: '200' },
    max: { type: 'string', default: String(DEFAULTS.maxMetricIndexes) },
  },
});
const RESULTS = Number(args.results);
const RUNS = Number(args.runs);
const MAX = Number(args.max);
const BENCHMARKS = 50;
const METRICS = Array.from({ length: 8 }, (_, i) => `m${i + 1}`);
const log = (m: string) => process.stderr.write(`${m}\n`);

const schema = { type: 'object', properties: Object.fromEntries(METRICS.map((m) => [m, { type: 'number', suggestToUser: true }])) };

/** `?` placeholders → `$n`, values checked and bound as the server's driver does (an array is one value). */
function bound(sql: string, params: readonly unknown[]): { text: string; values: unknown[] } {
  const values = bindValues(sql, params);
  let n = 0;
  return { text: sql.replace(/\?/g, () => `$${++n}`), values };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

interface Figures {
  label: string;
  indexes: number;
  planMs: number;
  execMs: number;
  listMs: number;
  countPlanMs: number;
  metricPlanMs: number;
  metricExecMs: number;
  metricIndexUsed: boolean;
  insertMs: number;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'bench-metric-indexes-'));
  await chmod(dir, 0o755);
  const db = await startEmbeddedPostgres(dir);
  const orm = await connect(db.url);
  const client = new pg.Client({ connectionString: db.url, application_name: 'bench-metric-indexes' });
  try {
    await migrate(orm);
    await client.connect();
    const version = (await client.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
    const benchmarks = await seed(client);
    const measure = (label: string) => measureAll(db.url, label, benchmarks[0]!);
    const rows: Figures[] = [];
    rows.push(await measure('none (baseline)'));

    for (const approved of [20, BENCHMARKS]) {
      await client.query("update benchmark set status = case when id = any($1::uuid[]) then 'approved' else 'on_review' end", [
        benchmarks.slice(0, approved),
      ]);
      const started = Date.now();
      const metrics = new MetricIndexes(createLogger('warn'), { maxIndexes: MAX });
      await metrics.reconcile(orm.em.fork());
      await metrics.close();
      log(`capped, ${approved} benchmarks: reconciled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      rows.push(await measure(`capped (${MAX}), ${approved} × 8`));
    }
    await dropMetricIndexes(client);
    for (const count of [20, BENCHMARKS]) {
      const started = Date.now();
      await createUncapped(client, benchmarks.slice(0, count));
      log(`uncapped, ${count} benchmarks: built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      rows.push(await measure(`uncapped, ${count} × 8`));
    }
    report(rows, version);
  } finally {
    await client.end().catch(() => {});
    await orm.close(true).catch(() => {});
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** 50 approved benchmarks of 8 suggested metrics, one site and flavor, RESULTS results; returns the benchmark ids, oldest first. */
async function seed(c: pg.Client): Promise<string[]> {
  const json = `jsonb_build_object(${METRICS.map((m, i) => `'${m}', ((g::bigint * ${7919 + i * 104729}) % 100000) / 10.0`).join(', ')})`;
  const { benchmarks } = await seedSyntheticResults(c, {
    results: RESULTS,
    schemas: Array.from({ length: BENCHMARKS }, () => schema),
    image: (i) => `ghcr.io/bench/m${i}`,
    benchmark: `ids[1 + g % ${BENCHMARKS}]`,
    json,
    executed: 'now() - make_interval(secs => g)',
  });
  log(`seeded ${BENCHMARKS} benchmarks, ${RESULTS} results`);
  return benchmarks;
}

async function metricIndexCount(c: pg.Client): Promise<number> {
  const { rows } = await c.query(
    "select count(*)::int as n from pg_indexes where tablename = 'result' and indexname like 'result\\_metric\\_%'",
  );
  return rows[0].n;
}

async function dropMetricIndexes(c: pg.Client): Promise<void> {
  const { rows } = await c.query<{ indexname: string }>(
    "select indexname from pg_indexes where tablename = 'result' and indexname like 'result\\_metric\\_%'",
  );
  for (const r of rows) await c.query(`drop index ${c.escapeIdentifier(r.indexname)}`);
}

/** The indexes as the server built them before the cap: every suggested metric (8), no global limit, same definition. */
async function createUncapped(c: pg.Client, benchmarks: string[]): Promise<void> {
  for (const b of benchmarks) {
    for (const m of METRICS) {
      const name = metricIndexName(b, [m]);
      const where = `benchmark_id = ${c.escapeLiteral(b)}::uuid and not hidden and jsonb_typeof(json #> '{${m}}'::text[])`;
      await c.query(
        `create index if not exists ${c.escapeIdentifier(name)} on result ((json #> '{${m}}'::text[]), id) where ${where} = 'number'`,
      );
      await c.query(
        `create index if not exists ${c.escapeIdentifier(`${name}_x`)} on result (id) where ${where} is distinct from 'number'`,
      );
    }
  }
  await c.query('analyze result');
}

async function explain(c: pg.Client, sql: { text: string; values: unknown[] }) {
  const { rows } = await c.query(`explain (analyze, timing off, format json) ${sql.text}`, sql.values);
  const plan = rows[0]['QUERY PLAN'][0];
  return { planMs: plan['Planning Time'] as number, execMs: plan['Execution Time'] as number, text: JSON.stringify(plan.Plan) };
}

async function measureAll(url: string, label: string, benchmark: string): Promise<Figures> {
  // A new connection, as a pooled one would be after the indexes changed; its first statements
  // load the catalogue (not counted: warm-up, then medians).
  const c = new pg.Client({ connectionString: url, application_name: 'bench-metric-indexes' });
  await c.connect();
  try {
    const list = resultListSql({ per_page: 100 }, { visible: true });
    const page = bound(list.page.sql, list.page.params);
    const count = bound(list.count.sql, list.count.params);
    const sorted = resultListSql(
      { benchmark_id: benchmark, sort_by: '-json.m1', per_page: 100 },
      { visible: true },
      { metricIndexed: true },
    );
    const metricPage = bound(sorted.page.sql, sorted.page.params);
    const f = {
      plan: [] as number[],
      exec: [] as number[],
      wall: [] as number[],
      countPlan: [] as number[],
      mPlan: [] as number[],
      mExec: [] as number[],
      insert: [] as number[],
    };
    let metricIndexUsed = false;
    const index = metricIndexName(benchmark, ['m1']);
    for (let i = 0; i < RUNS + 5; i++) {
      const e = await explain(c, page);
      const n = await explain(c, count);
      const m = await explain(c, metricPage);
      metricIndexUsed ||= m.text.includes(index);
      const t0 = performance.now();
      await c.query(page.text, page.values);
      const wall = performance.now() - t0;
      if (i < 5) continue; // warm-up
      f.plan.push(e.planMs);
      f.exec.push(e.execMs);
      f.wall.push(wall);
      f.countPlan.push(n.planMs);
      f.mPlan.push(m.planMs);
      f.mExec.push(m.execMs);
    }
    const site = (await c.query('select site_id, flavor_id, uploader_iss, uploader_sub from result limit 1')).rows[0];
    // Without waiting for the WAL flush of each commit (the same for every set of indexes): the
    // time left is the work of the statement, index upkeep included.
    await c.query('set synchronous_commit = off');
    const inserted: string[] = [];
    for (let i = 0; i < RUNS * 5 + 20; i++) {
      const id = randomUUID();
      const json = Object.fromEntries(METRICS.map((m, j) => [m, (i * 31 + j) % 1000]));
      const t0 = performance.now();
      await c.query(
        'insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden) values ($1, $2, $3, $4, $5, now(), now(), $6, $7, false, false)',
        [id, benchmark, site.site_id, site.flavor_id, json, site.uploader_iss, site.uploader_sub],
      );
      if (i >= 20) f.insert.push(performance.now() - t0);
      inserted.push(id);
    }
    await c.query('delete from result where id = any($1::uuid[])', [inserted]);
    await c.query('vacuum result');
    const figures: Figures = {
      label,
      indexes: await metricIndexCount(c),
      planMs: median(f.plan),
      execMs: median(f.exec),
      listMs: median(f.wall),
      countPlanMs: median(f.countPlan),
      metricPlanMs: median(f.mPlan),
      metricExecMs: median(f.mExec),
      metricIndexUsed,
      insertMs: median(f.insert),
    };
    log(`${label}: ${JSON.stringify(figures)}`);
    return figures;
  } finally {
    await c.end();
  }
}

function report(rows: Figures[], version: string): void {
  const base = rows[0]!;
  const f = (v: number) => v.toFixed(3);
  const r = (v: number, b: number) => `${(v / b).toFixed(2)}×`;
  const lines = [
    `PostgreSQL ${version}, ${RESULTS} results over ${BENCHMARKS} benchmarks; medians of ${RUNS} runs (${RUNS * 5} inserts); ratios to no metric index.`,
    '',
    '| metric indexes | count | GET /results page: planning ms | execution ms | wall ms | count: planning ms | one benchmark by its metric: planning ms | execution ms (index used) | insert of one result ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (x) =>
        `| ${x.label} | ${x.indexes} | ${f(x.planMs)} (${r(x.planMs, base.planMs)}) | ${f(x.execMs)} (${r(x.execMs, base.execMs)}) | ${f(x.listMs)} (${r(x.listMs, base.listMs)}) | ` +
        `${f(x.countPlanMs)} (${r(x.countPlanMs, base.countPlanMs)}) | ${f(x.metricPlanMs)} (${r(x.metricPlanMs, base.metricPlanMs)}) | ${f(x.metricExecMs)} (${x.metricIndexUsed ? 'yes' : 'no'}) | ` +
        `${f(x.insertMs)} (${r(x.insertMs, base.insertMs)}) |`,
    ),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

await main();
