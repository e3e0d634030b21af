/**
 * The measurements of "Every metric fast" that are not load runs (bench/metric-scenarios.ts), each against
 * PostgreSQL's own time for the same statements in the same run:
 *
 * - 13, the first comparison after a write: rounds of one upload (POST /results, a result of the
 *   compared benchmark, which forgets every remembered comparison), then GET /results:compare
 *   timed, then the statements the server issued for that comparison (captured once, in a round
 *   not timed) replayed on one connection, timed: p50 of each.
 * - 14, 8 identical comparisons at once after a write: the same rounds, the 8 requests sent
 *   together; p50 of every request's time and of each round's slowest; how many times the
 *   server computed the comparison in a captured round (1 when identical requests share one).
 * - 15, a time series read (SQL only): one benchmark's values at its headline path, for every
 *   flavor in execution-time order, from the metric values table when it exists and holds the
 *   path complete, and from the documents; p50 of each, answers checked equal.
 * - The metric values table's bytes per result (`to_regclass('metric_value')`), with the data.
 */
import type pg from 'pg';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { executableSql, statementRole } from './capture.ts';
import type { BenchmarkRow, Catalogue, GenerateOptions } from './generate.ts';
import { ingestDocuments } from './generate.ts';
import { typicalBenchmarks } from './compare-scenarios.ts';
import { API, query } from './scenarios.ts';
import type { ServerProcess } from './server-process.ts';
import { summarize, type LatencySummary } from './stats.ts';

export interface CompareAfterWriteReport {
  benchmark: string;
  visibleResults: number;
  request: string;
  /** Concurrent identical requests per round (1 or 8). */
  concurrency: number;
  rounds: number;
  /** Every request's time (ms). */
  apiMs: LatencySummary;
  /** The slowest request of each round (ms). */
  roundMs: LatencySummary;
  /** The statements the server issued for one comparison, replayed on one connection (ms). */
  sqlMs: LatencySummary;
  /** apiMs.p50 / sqlMs.p50. */
  ratio: number | null;
  /** Statements issued for one comparison (captured round), and of them the computations (`var_samp`). */
  statements: number;
  computations: number;
  /** Whether the comparison read the metric values table. */
  fromTable: boolean;
  statuses: Record<string, number>;
}

export interface SeriesReport {
  benchmark: string;
  path: string;
  rows: number;
  /** From the documents (ms), and from the table when it can answer. */
  documentsMs: LatencySummary;
  tableMs: LatencySummary | null;
  /** documentsMs.p50 / tableMs.p50. */
  speedup: number | null;
  identical: boolean | null;
  plans: string;
}

export interface MetricTableSize {
  results: number;
  rows: number;
  heapBytes: number;
  indexBytes: number;
  /** Bytes (heap, TOAST and indexes) per result of the result table, for scale. */
  resultBytesPerResult: number;
  bytesPerResult: number;
  rowsPerResult: number;
}

const r2 = (v: number) => Math.round(v * 100) / 100;

/** The metric values table's size, or null when the schema has none. */
export async function metricTableSize(client: pg.Client): Promise<MetricTableSize | null> {
  const { rows } = await client.query<{ present: boolean }>("select to_regclass('metric_value') is not null as present");
  if (!rows[0]!.present) return null;
  const [s] = (
    await client.query<Record<string, string>>(
      "select (select count(*) from result) as results, (select count(*) from metric_value) as rows, pg_table_size('metric_value') as heap, " +
        "pg_indexes_size('metric_value') as indexes, pg_total_relation_size('result') as result_total",
    )
  ).rows;
  const results = Number(s!.results);
  const heap = Number(s!.heap);
  const indexes = Number(s!.indexes);
  return {
    results,
    rows: Number(s!.rows),
    heapBytes: heap,
    indexBytes: indexes,
    resultBytesPerResult: Math.round(Number(s!.result_total) / Math.max(1, results)),
    bytesPerResult: Math.round((heap + indexes) / Math.max(1, results)),
    rowsPerResult: r2(Number(s!.rows) / Math.max(1, results)),
  };
}

/**
 * Uploads of the `i`-th of the benchmark's generated documents (POST /results, a result executed a
 * minute before now): a write, which makes the server forget every remembered answer.
 */
export function benchmarkWriter(input: {
  server: ServerProcess;
  catalogue: Catalogue;
  options: GenerateOptions;
  token: string;
  benchmark: BenchmarkRow;
  rounds: number;
}): (i: number) => Promise<void> {
  const { server, catalogue, options, benchmark } = input;
  const docs = ingestDocuments(catalogue, options, catalogue.benchmarks.length * (input.rounds + 2)).filter(
    (d) => d.benchmark.id === benchmark.id,
  );
  return async (i: number) => {
    const d = docs[i % docs.length]!;
    const executed = new Date(Date.now() - 60_000 - i * 1000).toISOString();
    const res = await fetch(
      `${server.url}${API}/results?${query([
        ['benchmark_id', d.benchmark.id],
        ['flavor_id', d.flavor.id],
        ['execution_datetime', executed],
      ])}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${input.token}`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(d.json),
      },
    );
    const text = await res.text();
    if (res.status !== 201) throw new Error(`the write before a comparison: ${res.status} ${text.slice(0, 300)}`);
  };
}

/** The benchmark of scenarios 8 and 9 (about 50,000 results at 1M) and its comparison request. */
export function comparedBenchmark(catalogue: Catalogue): BenchmarkRow {
  return typicalBenchmarks(catalogue)[0]!;
}

export async function measureCompareAfterWrite(input: {
  server: ServerProcess;
  client: pg.Client;
  catalogue: Catalogue;
  options: GenerateOptions;
  token: string;
  visible: number;
  concurrency: number;
  rounds: number;
  log: (message: string) => void;
}): Promise<CompareAfterWriteReport> {
  const { server, client, catalogue } = input;
  const benchmark = comparedBenchmark(catalogue);
  const compare = `${API}/results:compare?${query([
    ['benchmark_id', benchmark.id],
    ['metric', `json.${benchmark.def.metric}`],
  ])}`;
  const write = benchmarkWriter({ ...input, benchmark, rounds: input.rounds });
  const statuses: Record<string, number> = {};
  const get = async () => {
    const started = performance.now();
    const res = await fetch(`${server.url}${compare}`, { headers: { accept: 'application/json' } });
    const body = await res.text();
    const ms = performance.now() - started;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status !== 200) throw new Error(`GET ${compare}: ${res.status} ${body.slice(0, 300)}`);
    return ms;
  };

  // A round not timed, captured: the statements of one comparison, and how many computed it.
  await write(0);
  server.capture(true);
  let captured: string[];
  try {
    await server.drain();
    await Promise.all(Array.from({ length: input.concurrency }, get));
    captured = (await server.drain()).map(executableSql);
  } finally {
    server.capture(false);
  }
  const computations = captured.filter((s) => statementRole(s) === 'compare').length;
  // One comparison's statements: those up to and including its first computation and what followed it
  // (the order statistics, the count) until the transaction ends.
  const first = captured.findIndex((s) => statementRole(s) === 'compare');
  if (first < 0) throw new Error(`no compare statement among:\n${captured.join('\n').slice(0, 2000)}`);
  let begin = first;
  while (begin > 0 && !/^\s*(begin|start transaction)\b/i.test(captured[begin]!)) begin--;
  let end = first;
  while (end < captured.length - 1 && !/^\s*(commit|rollback)\b/i.test(captured[end]!)) end++;
  const replayed = captured.slice(begin, end + 1);
  const fromTable = replayed.some((s) => /\bfrom metric_value v\b/i.test(s));

  const api: number[] = [];
  const round: number[] = [];
  const sql: number[] = [];
  for (let i = 1; i <= input.rounds; i++) {
    await write(i);
    const times = await Promise.all(Array.from({ length: input.concurrency }, get));
    api.push(...times);
    round.push(Math.max(...times));
    const started = performance.now();
    for (const s of replayed) await client.query(s);
    sql.push(performance.now() - started);
  }
  const apiMs = summarize(api);
  const sqlMs = summarize(sql);
  const report: CompareAfterWriteReport = {
    benchmark: benchmark.def.key,
    visibleResults: input.visible,
    request: `GET ${compare}`,
    concurrency: input.concurrency,
    rounds: input.rounds,
    apiMs,
    roundMs: summarize(round),
    sqlMs,
    ratio: sqlMs.p50 > 0 ? r2(apiMs.p50 / sqlMs.p50) : null,
    statements: replayed.length,
    computations,
    fromTable,
    statuses,
  };
  input.log(
    `compare after a write ×${input.concurrency}: API p50 ${apiMs.p50} p95 ${apiMs.p95} ms (round p50 ${report.roundMs.p50} ms), ` +
      `SQL p50 ${sqlMs.p50} ms (${replayed.length} statements, ${fromTable ? 'metric values table' : 'documents'}); ` +
      `${computations} computation(s) for ${input.concurrency} request(s)`,
  );
  return report;
}

/** A time series: one benchmark's numbers at its headline path, every flavor, in execution-time order. */
export async function measureSeries(input: {
  client: pg.Client;
  catalogue: Catalogue;
  runs: number;
  explainDir: string;
  log: (message: string) => void;
}): Promise<SeriesReport> {
  const { client } = input;
  const benchmark = comparedBenchmark(input.catalogue);
  const path = benchmark.def.metric.split('.');
  const documents = {
    text:
      'select r.flavor_id, r.execution_datetime, (r.json #> $2::text[])::numeric as value from result r ' +
      "where r.benchmark_id = $1 and not r.hidden and jsonb_typeof(r.json #> $2::text[]) = 'number' " +
      'order by r.flavor_id, r.execution_datetime, r.id',
    values: [benchmark.id, path] as unknown[],
  };
  let table: { text: string; values: unknown[] } | null = null;
  const { rows: present } = await client.query<{ present: boolean }>("select to_regclass('metric_value') is not null as present");
  if (present[0]!.present) {
    const { rows } = await client.query<{ id: number }>(
      'select p.id from metric_path p join metric_benchmark m on m.benchmark_id = p.benchmark_id and m.complete ' +
        'where p.benchmark_id = $1 and p.path = $2::text[]',
      [benchmark.id, path],
    );
    if (rows[0]) {
      table = {
        text:
          'select v.flavor_id, v.execution_datetime, v.value from metric_value v where v.path_id = $1 and not v.hidden and v.value is not null ' +
          'order by v.flavor_id, v.execution_datetime, v.result_id',
        values: [rows[0].id],
      };
    } else input.log(`series: the metric values table does not hold ${benchmark.def.key}'s ${benchmark.def.metric} complete`);
  }
  const run = async (q: { text: string; values: unknown[] }) => {
    const started = performance.now();
    const { rows } = await client.query<{ flavor_id: string; execution_datetime: Date; value: string }>(q.text, q.values);
    return { ms: performance.now() - started, rows };
  };
  const digest = (rows: { flavor_id: string; execution_datetime: Date; value: string }[]) =>
    rows.map((r) => `${r.flavor_id} ${r.execution_datetime.toISOString()} ${Number(r.value)}`).join('\n');
  const times = { documents: [] as number[], table: [] as number[] };
  let identical: boolean | null = table ? true : null;
  let count = 0;
  for (let i = 0; i < input.runs + 1; i++) {
    const d = await run(documents);
    const t = table ? await run(table) : null;
    count = d.rows.length;
    if (t) identical &&= digest(d.rows) === digest(t.rows);
    if (i === 0) continue; // warm-up
    times.documents.push(d.ms);
    if (t) times.table.push(t.ms);
  }
  const plans: string[] = [];
  for (const [label, q] of [['documents', documents] as const, ...(table ? [['metric values table', table] as const] : [])]) {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${q.text}`, q.values);
    plans.push(`## ${label}`, `${q.text};`, `-- ${JSON.stringify(q.values)}`, rows.map((r) => r['QUERY PLAN']).join('\n'), '');
  }
  const file = join(input.explainDir, '15-series-sql.txt');
  writeFileSync(
    file,
    `# Scenario 15: ${benchmark.def.key}'s ${benchmark.def.metric} by flavor in execution-time order\n\n${plans.join('\n')}`,
  );
  const documentsMs = summarize(times.documents);
  const tableMs = table ? summarize(times.table) : null;
  const report: SeriesReport = {
    benchmark: benchmark.def.key,
    path: benchmark.def.metric,
    rows: count,
    documentsMs,
    tableMs,
    speedup: tableMs && tableMs.p50 > 0 ? r2(documentsMs.p50 / tableMs.p50) : null,
    identical,
    plans: file,
  };
  input.log(
    `series of ${count} values: documents p50 ${documentsMs.p50} ms, table ${tableMs ? `p50 ${tableMs.p50} ms` : '–'}` +
      `${identical === null ? '' : identical ? ', identical' : ', DIFFERENT ANSWERS'}`,
  );
  return report;
}
