/**
 * The measured run of an export scenario (10): one request streaming every visible result, read
 * by a child process that counts bytes and line ends only (bench/export-reader.ts), with the
 * server's RSS sampled every 200 ms (bench/server.ts) from just before the request to its
 * last byte; then its SQL baseline,
 * the same cursor read straight from PostgreSQL (`fetch 500` at a time). Both are timed to the last
 * row, and their rates compare as results per second.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { cpuMeter, waitForQuiet, type CpuGroups } from './cpu.ts';
/** Rows per `fetch`, as the server's export reads its cursor. */
const EXPORT_BATCH_ROWS = 500;
import type { ReaderResult } from './export-reader.ts';
import type { ExportReport, RunReport } from './report.ts';
import type { FullScenario } from './scenarios.ts';
import type { ServerProcess } from './server.ts';
import type { SqlTarget } from './sql-load.ts';
import { summarize } from './stats.ts';

const READER = fileURLToPath(new URL('./export-reader.ts', import.meta.url));
const REGISTER = fileURLToPath(new URL('../scripts/dev/register.js', import.meta.url));

/**
 * The request read to its end by bench/export-reader.ts in a child process (its CPU counts as the
 * client's); `sending` is called when the child sends it.
 */
function readApiExport(url: string, sending: () => void): Promise<ReaderResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', REGISTER, READER, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      if (!stdout.includes('\n') && `${stdout}${d}`.includes('\n')) sending();
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
    });
    child.on('close', (code) => {
      try {
        resolve(JSON.parse(stdout.split('\n')[1]!) as ReaderResult);
      } catch {
        const error = `the reader failed (exit ${code}): ${stderr.trim().slice(0, 500)}`;
        resolve({ status: 0, results: 0, bytes: 0, seconds: 0, firstByteMs: 0, error });
      }
    });
  });
}

/** The cursor's select read directly: begin, declare, fetch until a short batch, commit. */
async function readSqlExport(target: SqlTarget, select: string): Promise<{ results: number; seconds: number; error: string | null }> {
  const client = new pg.Client({ ...target, application_name: 'bench-baseline' });
  await client.connect();
  const started = performance.now();
  let results = 0;
  let error: string | null = null;
  try {
    await client.query('begin isolation level repeatable read read only');
    await client.query(`declare bench_rows no scroll cursor for ${select}`);
    for (;;) {
      const { rows } = await client.query(`fetch ${EXPORT_BATCH_ROWS} from bench_rows`);
      results += rows.length;
      if (rows.length < EXPORT_BATCH_ROWS) break;
    }
    await client.query('commit');
  } catch (err) {
    error = (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
  return { results, seconds: (performance.now() - started) / 1000, error };
}

/**
 * Start, peak, end and the peaks of each half of the samples (a growing RSS shows in the second;
 * null for a half without a sample, as in an export shorter than 400 ms).
 */
function rssOf(series: { ms: number; mb: number }[], startMb: number, endMb: number, seconds: number): ExportReport['rss'] {
  const half = (seconds * 1000) / 2;
  const peak = (list: { mb: number }[]) => (list.length ? Math.max(...list.map((s) => s.mb)) : null);
  const r1 = (v: number) => Math.round(v * 10) / 10;
  // One sample a second is kept for the report.
  const perSecond = series.filter((s, i) => i === 0 || Math.floor(s.ms / 1000) !== Math.floor(series[i - 1]!.ms / 1000));
  return {
    startMb: r1(startMb),
    peakMb: r1(Math.max(startMb, endMb, peak(series) ?? 0)),
    endMb: r1(endMb),
    firstHalfPeakMb: peak(series.filter((s) => s.ms < half)),
    secondHalfPeakMb: peak(series.filter((s) => s.ms >= half)),
    samples: series.length,
    perSecond: perSecond.map((s) => ({ s: Math.floor(s.ms / 1000), mb: s.mb })),
  };
}

export interface ExportRunInput {
  server: ServerProcess;
  target: SqlTarget;
  scenario: FullScenario;
  /** The statements the server issued for the variant, when captured. */
  issued: string[];
  /** The visible results there are, all of which the answer must hold. */
  expected: number;
  groups: CpuGroups;
  quietWait: number;
  log: (message: string) => void;
}

/** Measures the scenario's one request and its baseline; a RunReport at one connection. */
export async function measureExport(input: ExportRunInput): Promise<RunReport> {
  const { server, scenario } = input;
  const select = scenario.baseline(0, input.issued)[0]!;
  const quietApi = await waitForQuiet(input.quietWait);
  // The server's memory from the moment the reader sends the request.
  const memory: { window?: ReturnType<ServerProcess['window']>; startMb: number } = { startMb: 0 };
  const apiMeter = cpuMeter(input.groups);
  const api = await readApiExport(`${server.url}${scenario.variants[0]!.request.path}`, () => {
    memory.window = server.window();
    void server.rssMb().then((mb) => {
      memory.startMb = mb;
    });
  });
  const apiCpu = apiMeter.stop();
  const endMb = await server.rssMb();
  const sampled = memory.window?.end() ?? { peakMb: 0, samples: 0, series: [] };
  const quietSql = await waitForQuiet(input.quietWait);
  const sqlMeter = cpuMeter(input.groups);
  const sql = await readSqlExport(input.target, select);
  await new Promise((r) => setTimeout(r, 500)); // the baseline's backend is reaped (its CPU counted)
  const sqlCpu = sqlMeter.stop();

  const { expected } = input;
  const ok = api.status === 200 && !api.error && api.results === expected;
  const apiRate = api.results / api.seconds;
  const sqlRate = sql.results / sql.seconds;
  const report: ExportReport = {
    results: api.results,
    expected,
    bytes: api.bytes,
    seconds: Math.round(api.seconds * 100) / 100,
    firstByteMs: api.firstByteMs,
    resultsPerSecond: Math.round(apiRate),
    sqlSeconds: Math.round(sql.seconds * 100) / 100,
    sqlResultsPerSecond: Math.round(sqlRate),
    rss: rssOf(sampled.series, memory.startMb, endMb, api.seconds),
  };
  input.log(
    `scenario ${scenario.id}: API ${api.results.toLocaleString('en-US')} results in ${report.seconds} s (${report.resultsPerSecond.toLocaleString('en-US')}/s, ` +
      `${Math.round(api.bytes / 1048576)} MB, first byte ${api.firstByteMs} ms)${api.error ? ` ERROR ${api.error}` : ''}; ` +
      `SQL ${sql.results.toLocaleString('en-US')} in ${report.sqlSeconds} s (${report.sqlResultsPerSecond.toLocaleString('en-US')}/s)${sql.error ? ` ERROR ${sql.error}` : ''}; ` +
      `server RSS start ${report.rss.startMb} MB, peak ${report.rss.peakMb} MB (halves ${report.rss.firstHalfPeakMb} / ${report.rss.secondHalfPeakMb}), end ${report.rss.endMb} MB`,
  );
  const latency = summarize([api.seconds * 1000]);
  return {
    connections: 1,
    // One request: its rate is 1 / its duration, so that API / SQL is results/s over results/s.
    api: {
      connections: 1,
      seconds: report.seconds,
      responses: 1,
      ok: ok ? 1 : 0,
      rps: 1 / api.seconds,
      okPerSecond: ok ? 1 / api.seconds : 0,
      latencyMs: latency,
      autocannonMs: { p50: latency.p50, p97_5: latency.p50, p99: latency.p50 },
      errors: api.error || (api.status === 200 && !ok) ? 1 : 0,
      timeouts: 0,
      non2xx: api.status === 200 || api.status === 0 ? 0 : 1,
      statusCodes: { [String(api.status)]: 1 },
      meanResponseBytes: api.bytes,
    },
    sql: {
      tool: 'node',
      connections: 1,
      seconds: report.sqlSeconds,
      transactions: sql.error ? 0 : 1,
      tps: sql.error ? 0 : 1 / sql.seconds,
      latencyMs: summarize([sql.seconds * 1000]),
      errors: sql.error || sql.results !== expected ? 1 : 0,
      firstError: sql.error ?? (sql.results !== expected ? `${sql.results} rows, ${expected} expected` : null),
    },
    ratio: ok && !sql.error ? Math.round((sql.seconds / api.seconds) * 1000) / 1000 : null,
    serverPeakRssMb: report.rss.peakMb,
    apiCpu,
    sqlCpu,
    quietWaitSeconds: quietApi.waited + quietSql.waited,
    seconds: Math.round(api.seconds),
    drainSeconds: 0,
    export: report,
  };
}
