/**
 * The table of metric values (services/results/metric-values.ts) on the benchmark's data set, through the
 * server as `npm run bench` starts it (a child process, production mode, the container's heap):
 *
 *   npm run bench -- --results 1000000 --scenarios 5 --keep --data-dir <dir>   # loads the data once
 *   node --import ./scripts/dev/register.js bench/metric-values-scale.ts --data-dir <dir> [--results 1000000] [--runs 9] [--only backfill|compare]
 *
 * 1. Backfill: the migration undone (the loader skips triggers, so the table is empty or partly
 *    filled anyway), the server started: it applies the migration and fills the table in the
 *    background. Stopped once about 40 % of the result
 *    table's blocks are done and started again: the pass goes on from its recorded block (it
 *    never starts over). Duration (both runs, start-ups excluded), the server's and PostgreSQL's
 *    peak RSS, the number of batches (the updates of `metric_backfill`), and the end of the
 *    `VACUUM (ANALYZE)` that follows. `--only backfill`: this and the size alone.
 * 2. Size: the table and its indexes per result.
 * 3. Ingest through the API, with and without the insert trigger, taking turns: POST /results:batch
 *    of 100 documents (scenario 7's) and POST /results (scenario 6's), and the same documents as
 *    one multi-row INSERT (SQL only).
 * 4. Compare cold: GET /results:compare of scenario 8's benchmarks (about 50,000 results each at
 *    1M), each right after a write (which makes the server forget what it remembers), from the
 *    table and, the benchmark marked incomplete, from the documents, taking turns; the table's
 *    statement under EXPLAIN (ANALYZE, BUFFERS) right after a write (its heap fetches); and 8
 *    identical concurrent requests after a write (how many statements they cost).
 *
 * Prints one JSON object. Leaves the data set as it found it, filled table included.
 */
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { startIssuer } from '@benchmarks/demo/issuer';
import { startBenchDatabase } from './database.ts';
import { GENERATE_DEFAULTS, generateCatalogue, ingestDocuments } from './generate.ts';
import { typicalBenchmarks } from './compare-scenarios.ts';
import { startServerProcess, type ServerProcess } from './server-process.ts';

const arg = (name: string, fallback?: string) => {
  const i = process.argv.indexOf(`--${name}`);
  const value = i > 0 ? process.argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
};
const DATA_DIR = arg('data-dir');
const RESULTS = Number(arg('results', '1000000'));
const RUNS = Number(arg('runs', '9'));
const ROUNDS = Number(arg('rounds', '10'));
/** `--only compare`: the comparisons alone, on the table as the last run left it; `--only backfill`: the backfill and the size alone. */
const ONLY = process.argv.includes('--only') ? arg('only') : 'all';
const SUB = 'bench-ingest';
const log = (message: string) => console.error(`[metric-values ${new Date().toISOString().slice(11, 19)}] ${message}`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const generate = { ...GENERATE_DEFAULTS, results: RESULTS };
const catalogue = generateCatalogue(generate);
const db = await startBenchDatabase(DATA_DIR, log);
const client: pg.Client = await db.client();
const sql = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await client.query(text, params)).rows as T[];
const issuer = await startIssuer({ accounts: [{ sub: SUB, email: `${SUB}@bench.example.org`, email_verified: true }] });
const token = await issuer.mintAccessToken({ sub: SUB, ttlSeconds: 24 * 3600 });
const startServer = () =>
  startServerProcess(
    {
      host: '127.0.0.1',
      port: '0',
      databaseUrl: db.url,
      oidcIssuer: issuer.issuer,
      logLevel: 'warn',
      rateLimit: '0',
      readRateLimit: '0',
      expensiveListConcurrency: '64',
    },
    log,
  );
const api = async (method: string, path: string, body?: unknown) => {
  const started = performance.now();
  const res = await fetch(`${server!.url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { ms: performance.now() - started, body: text ? JSON.parse(text) : null };
};
const docs = ingestDocuments(catalogue, generate, ROUNDS * 2 * (100 + 20 + 100));
let hour = 0;
const executed = () => new Date(Date.UTC(2024, 0, 1) + hour++ * 3_600_000).toISOString();
const out: Record<string, unknown> = { results: RESULTS };
let server: ServerProcess | undefined;
try {
  await sql('delete from result where uploader_sub = $1', [SUB]);
  if (ONLY === 'compare') server = await startServer();
  else await backfillSizeIngest();
  if (ONLY !== 'backfill') await compareCold();
  console.log(JSON.stringify(out, null, 2));
} finally {
  await server?.stop();
  await issuer.close();
  await client.end();
  await db.stop();
}

async function compareCold() {
  // ------------------------------------------------------------------ 4. compare cold
  await api('POST', '/users/self');
  const typical = typicalBenchmarks(catalogue);
  // Writes to the other benchmarks: each comparison's results stay the same, so both answers must be identical.
  const others = docs.filter((d) => !typical.some((b) => b.id === d.benchmark.id));
  let written = 0;
  const write = async () => {
    const d = others[written++ % others.length]!;
    const q = `benchmark_id=${d.benchmark.id}&flavor_id=${d.flavor.id}&execution_datetime=${encodeURIComponent(executed())}`;
    await api('POST', `/results?${q}`, d.json);
  };
  const compare = (b: (typeof typical)[number]) =>
    api('GET', `/results:compare?benchmark_id=${b.id}&metric=${encodeURIComponent(`json.${b.def.metric}`)}`);
  const times = { table: [] as number[], documents: [] as number[] };
  let same = true;
  for (let i = 0; i < RUNS; i++) {
    const b = typical[i % typical.length]!;
    await sql('update metric_benchmark set complete = false where benchmark_id = $1', [b.id]);
    await write();
    const fromDocuments = await compare(b);
    await sql('update metric_benchmark set complete = true where benchmark_id = $1', [b.id]);
    await write();
    const fromTable = await compare(b);
    times.documents.push(fromDocuments.ms);
    times.table.push(fromTable.ms);
    if (JSON.stringify(fromDocuments.body) !== JSON.stringify(fromTable.body)) {
      same = false;
      const d = fromDocuments.body as Record<string, unknown>;
      const t = fromTable.body as Record<string, unknown>;
      const keys = Object.keys(d).filter((k) => JSON.stringify(d[k]) !== JSON.stringify(t[k]));
      log(
        `${b.def.key}: answers differ in ${keys.join(', ')}: ${keys.map((k) => `${JSON.stringify(d[k]).slice(0, 300)} / ${JSON.stringify(t[k]).slice(0, 300)}`).join('; ')}`,
      );
    }
  }
  out.compare_cold_ms = {
    table_p50: round(median(times.table)),
    documents_p50: round(median(times.documents)),
    table: times.table.map((x) => Math.round(x)),
    documents: times.documents.map((x) => Math.round(x)),
    benchmarks: typical.map((b) => b.def.key),
    identical_answers: same,
  };
  log(`compare: ${JSON.stringify(out.compare_cold_ms)}`);

  // The table's statement, right after a write, under EXPLAIN (ANALYZE, BUFFERS).
  const b = typical[0]!;
  server!.capture(true);
  await write();
  await compare(b);
  server!.capture(false);
  const statement = (await server!.drain()).find((s) => s.text.includes('from metric_value'));
  if (!statement) throw new Error('no statement read metric_value');
  await write();
  const plan = (await sql<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${statement.text}`, statement.values)).map(
    (r) => r['QUERY PLAN'],
  );
  const scan = plan.find((l) => /Index Only Scan|Index Scan|Seq Scan|Bitmap/.test(l))?.trim();
  out.compare_plan = {
    scan,
    heap_fetches: plan.find((l) => l.includes('Heap Fetches'))?.trim(),
    execution: plan.find((l) => l.startsWith('Execution Time'))?.trim(),
  };
  log(plan.join('\n'));

  // 8 identical requests at once, right after a write.
  const concurrent: number[] = [];
  let statements = 0;
  for (let i = 0; i < Math.max(3, Math.floor(RUNS / 2)); i++) {
    await write();
    server!.capture(true);
    const answers = await Promise.all(Array.from({ length: 8 }, () => compare(typical[i % typical.length]!)));
    server!.capture(false);
    statements += (await server!.drain()).filter((s) => s.text.includes('from metric_value')).length;
    concurrent.push(...answers.map((a) => a.ms));
  }
  out.compare_8_concurrent_after_write = {
    p50_ms: round(median(concurrent)),
    max_ms: Math.round(Math.max(...concurrent)),
    table_statements_per_8_requests: round(statements / Math.max(3, Math.floor(RUNS / 2)), 2),
  };
  await sql('delete from result where uploader_sub = $1', [SUB]);
}

async function backfillSizeIngest() {
  // ------------------------------------------------------------------ 1. backfill
  // As before the migration: its objects dropped and its record removed, so that the server's
  // start applies it (as on an upgrade) and then fills the table.
  for (const what of ['insert', 'update', 'delete', 'truncate']) {
    await sql(`drop trigger if exists result_metric_values_${what} on result`);
    await sql(`drop function if exists metric_values_${what}()`);
  }
  await sql('drop index if exists result_hidden_benchmark_idx');
  await sql('drop table if exists metric_value, metric_backfill, metric_benchmark, metric_path');
  // With the later migrations of the table, which its start applies again after it.
  await sql("delete from mikro_orm_migrations where name like 'Migration20261126%' and name ~ '_metric_value'");
  const state = async () =>
    (
      await sql<{ next: number; end: number; pending: number; chosen: number; incomplete: number; vacuumed: Date | null }>(
        'select next_block::int as next, end_block::int as end, cardinality(benchmarks) as pending, ' +
          '(select count(*)::int from metric_benchmark) as chosen, ' +
          '(select count(*)::int from metric_benchmark where not complete) as incomplete, ' +
          "(select last_vacuum from pg_stat_user_tables where relname = 'metric_value') as vacuumed from metric_backfill",
      )
    )[0]!;
  let backfillMs = 0;
  let peakMb = 0;
  let stoppedAt = 0;
  let resumedAt = 0;
  for (const part of ['first', 'second'] as const) {
    server = await startServer();
    const window = server.window();
    const started = performance.now();
    for (;;) {
      await sleep(500);
      const s = await state();
      if (part === 'second' && !resumedAt && s.next > 0) resumedAt = s.next;
      if (part === 'first' && s.end > 0 && s.next >= 0.4 * s.end) {
        stoppedAt = s.next;
        break;
      }
      if (s.chosen === catalogue.benchmarks.length && s.pending === 0 && s.incomplete === 0 && s.end === 0) break;
    }
    backfillMs += performance.now() - started;
    peakMb = Math.max(peakMb, window.end().peakMb);
    if (part === 'first') {
      await server.stop();
      server = undefined;
      const s = await state();
      log(`stopped at block ${s.next} of ${s.end}`);
      stoppedAt = s.next;
    }
  }
  const endState = await state();
  let waitedVacuum = 0;
  for (; waitedVacuum < 600; waitedVacuum++) {
    const s = await state();
    if (s.vacuumed) break;
    await sleep(1000);
  }
  // Each batch records its position in the one row of metric_backfill; a pass's beginning and end update it once each.
  const [updates] = await sql<{ n: number }>("select n_tup_upd::int as n from pg_stat_user_tables where relname = 'metric_backfill'");
  out.backfill = {
    seconds: round(backfillMs / 1000),
    batches: Math.max(0, (updates?.n ?? 0) - 2),
    results_per_second: Math.round(RESULTS / (backfillMs / 1000)),
    server_peak_rss_mb: peakMb,
    stopped_at_block: stoppedAt,
    first_block_seen_after_restart: resumedAt,
    complete: endState.incomplete === 0,
    vacuum_analyze_seconds_after: waitedVacuum,
  };
  log(`backfill: ${JSON.stringify(out.backfill)}`);

  // ------------------------------------------------------------------ 2. size
  const [size] = await sql<Record<string, number>>(
    "select (select count(*) from result)::int as results, (select count(*) from metric_value)::int as rows, pg_relation_size('metric_value')::float8 as heap, " +
      "pg_relation_size('metric_value_path_idx')::float8 as path_idx, pg_relation_size('metric_value_result_idx')::float8 as result_idx, " +
      "pg_total_relation_size('result')::float8 as result_total",
  );
  const per = (bytes: number) => Math.round(bytes / size!.results);
  out.bytes_per_result = {
    rows_per_result: round(size!.rows / size!.results, 2),
    heap: per(size!.heap),
    path_idx: per(size!.path_idx),
    result_idx: per(size!.result_idx),
    total: per(size!.heap + size!.path_idx + size!.result_idx),
    result_table_total: per(size!.result_total),
  };
  log(`size: ${JSON.stringify(out.bytes_per_result)}`);
  if (ONLY === 'backfill') return;

  // ------------------------------------------------------------------ 3. ingest
  await api('POST', '/users/self');
  let next = 0;
  const take = (n: number) => {
    const from = next;
    next += n;
    return docs.slice(from, next);
  };
  const trigger = (on: boolean) => sql(`alter table result ${on ? 'enable' : 'disable'} trigger result_metric_values_insert`);
  const ingest = { batch: { with: [] as number[], without: [] as number[] }, single: { with: [] as number[], without: [] as number[] } };
  const sqlOnly = { with: [] as number[], without: [] as number[] };
  for (let i = 0; i < ROUNDS * 2; i++) {
    const on = i % 2 === 0;
    const key = on ? 'with' : 'without';
    await trigger(on);
    const items = take(100).map((d) => ({
      benchmark_id: d.benchmark.id,
      flavor_id: d.flavor.id,
      execution_datetime: executed(),
      json: d.json,
    }));
    ingest.batch[key].push((await api('POST', '/results:batch', { items })).ms * 10); // µs per result
    const singles: number[] = [];
    for (const d of take(20)) {
      const q = `benchmark_id=${d.benchmark.id}&flavor_id=${d.flavor.id}&execution_datetime=${encodeURIComponent(executed())}`;
      singles.push((await api('POST', `/results?${q}`, d.json)).ms * 1000);
    }
    ingest.single[key].push(median(singles));
    const rows = take(100).map((d) => ({
      benchmark_id: d.benchmark.id,
      site_id: d.flavor.site_id,
      flavor_id: d.flavor.id,
      json: d.json,
      execution_datetime: executed(),
    }));
    const started = performance.now();
    await sql(
      'insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub) ' +
        'select gen_random_uuid(), r.benchmark_id, r.site_id, r.flavor_id, r.json, r.execution_datetime, now(), $1, $2 ' +
        'from jsonb_to_recordset($3::jsonb) as r(benchmark_id uuid, site_id uuid, flavor_id uuid, json jsonb, execution_datetime timestamptz)',
      [issuer.issuer, SUB, JSON.stringify(rows)],
    );
    sqlOnly[key].push((performance.now() - started) * 10);
  }
  await trigger(true);
  const pair = (x: { with: number[]; without: number[] }) => ({
    with_trigger: Math.round(median(x.with)),
    without: Math.round(median(x.without)),
    ratio: round(median(x.with) / median(x.without), 2),
  });
  out.ingest_us_per_result = { batch_of_100_api: pair(ingest.batch), single_api: pair(ingest.single), batch_of_100_sql: pair(sqlOnly) };
  log(`ingest: ${JSON.stringify(out.ingest_us_per_result)}`);
  // The results stored without the trigger have no rows: removed (the table stays complete).
  await sql('delete from result where uploader_sub = $1', [SUB]);
}
