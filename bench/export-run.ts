/**
 * An export scenario's run: one request read by a child process (bench/export-reader.ts), the server's RSS sampled until its
 * last byte; then the same cursor read from PostgreSQL, `fetch 500` at a time as the server reads it; both in results/s.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ReaderResult } from './export-reader.ts';
import { baselineClient, cpuMeter, parseJson, r1, r2, sleep, summarize, waitForQuiet, type CpuGroups, type SqlTarget } from './measure.ts';
import type { RunReport } from './report.ts';
import type { Scenario } from './scenarios.ts';
import type { ServerProcess } from './server.ts';

const READER = fileURLToPath(new URL('./export-reader.ts', import.meta.url));
const REGISTER = fileURLToPath(new URL('../scripts/dev/register.js', import.meta.url));

/** The request read to its end by the reader (its CPU counts as the client's); `sending` is called when it sends it. */
const readApiExport = (url: string, sending: () => void) =>
  new Promise<ReaderResult>((resolve) => {
    const child = spawn(process.execPath, ['--import', REGISTER, READER, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d: Buffer) => {
      if (!stdout.includes('\n') && `${stdout}${d}`.includes('\n')) sending();
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => {
      const error = `the reader failed (exit ${code}): ${stderr.trim().slice(0, 500)}`;
      const failed = { status: 0, results: 0, bytes: 0, seconds: 0, firstByteMs: 0, error };
      resolve(parseJson(stdout.split('\n')[1]!, failed) as ReaderResult);
    });
  });

/** The cursor's select read directly: begin, declare, fetch 500 rows at a time until a short batch, commit. */
async function readSqlExport(target: SqlTarget, select: string) {
  const client = await baselineClient(target);
  const started = performance.now();
  let results = 0;
  let error: string | null = null;
  try {
    await client.query('begin isolation level repeatable read read only');
    await client.query(`declare bench_rows no scroll cursor for ${select}`);
    for (let rows = 500; rows === 500; results += rows) rows = (await client.query('fetch 500 from bench_rows')).rows.length;
    await client.query('commit');
  } catch (err) {
    error = (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
  return { results, seconds: (performance.now() - started) / 1000, error };
}

/** Start, peak, end, the peaks of each half of the samples (a growing RSS shows in the second; null for a half without one), one sample a second. */
function rssOf(series: { ms: number; mb: number }[], startMb: number, endMb: number, seconds: number) {
  const peak = (list: { mb: number }[]) => (list.length ? Math.max(...list.map((s) => s.mb)) : null);
  const perSecond = series.filter((s, i) => i === 0 || Math.floor(s.ms / 1000) !== Math.floor(series[i - 1]!.ms / 1000));
  return {
    startMb: r1(startMb),
    peakMb: r1(Math.max(startMb, endMb, peak(series) ?? 0)),
    endMb: r1(endMb),
    firstHalfPeakMb: peak(series.filter((s) => s.ms < seconds * 500)),
    secondHalfPeakMb: peak(series.filter((s) => s.ms >= seconds * 500)),
    samples: series.length,
    perSecond: perSecond.map((s) => ({ s: Math.floor(s.ms / 1000), mb: s.mb })),
  };
}

/** The export: its lines and the visible results, the same cursor read in SQL, the server's RSS (MB). */
export type ExportReport = ReturnType<typeof exportReport>;
const exportReport = (api: ReaderResult, sql: { results: number; seconds: number }, expected: number, rss: ReturnType<typeof rssOf>) => ({
  results: api.results,
  expected,
  bytes: api.bytes,
  seconds: r2(api.seconds),
  firstByteMs: api.firstByteMs,
  resultsPerSecond: Math.round(api.results / api.seconds),
  sqlSeconds: r2(sql.seconds),
  sqlResultsPerSecond: Math.round(sql.results / sql.seconds),
  rss,
});
type ExportRun = { server: ServerProcess; target: SqlTarget; scenario: Scenario; issued: string[]; expected: number; groups: CpuGroups };
/**
 * Measures the scenario's one request, which must hold the `expected` visible results, and its
 * baseline (the select of `issued`, the statements the server issued for it): a run at one connection.
 */
export async function measureExport(input: ExportRun & { quietWait: number; log: (m: string) => void }): Promise<RunReport> {
  const { server, scenario, expected } = input;
  const quietApi = await waitForQuiet(input.quietWait);
  // The server's memory from the moment the reader sends the request.
  const memory: { window?: ReturnType<ServerProcess['window']>; startMb: number } = { startMb: 0 };
  const apiMeter = cpuMeter(input.groups);
  const api = await readApiExport(`${server.url}${scenario.variants[0]!.request.path}`, () => {
    memory.window = server.window();
    void server.rssMb().then((mb) => (memory.startMb = mb));
  });
  const apiCpu = apiMeter.stop();
  const endMb = await server.rssMb();
  const sampled = memory.window?.end() ?? { series: [] };
  const quietSql = await waitForQuiet(input.quietWait);
  const sqlMeter = cpuMeter(input.groups);
  const sql = await readSqlExport(input.target, scenario.baseline(0, input.issued)[0]!);
  await sleep(500); // the baseline's backend is reaped (its CPU counted)
  const sqlCpu = sqlMeter.stop();

  const ok = api.status === 200 && !api.error && api.results === expected;
  const report = exportReport(api, sql, expected, rssOf(sampled.series, memory.startMb, endMb, api.seconds));
  const n = (v: number) => v.toLocaleString('en-US');
  const { rss } = report;
  input.log(
    `scenario ${scenario.id}: API ${n(api.results)} results in ${report.seconds} s (${n(report.resultsPerSecond)}/s, ` +
      `${Math.round(api.bytes / 1048576)} MB, first byte ${api.firstByteMs} ms)${api.error ? ` ERROR ${api.error}` : ''}; ` +
      `SQL ${n(sql.results)} in ${report.sqlSeconds} s (${n(report.sqlResultsPerSecond)}/s)${sql.error ? ` ERROR ${sql.error}` : ''}; ` +
      `server RSS start ${rss.startMb} MB, peak ${rss.peakMb} MB (halves ${rss.firstHalfPeakMb} / ${rss.secondHalfPeakMb}), end ${rss.endMb} MB`,
  );
  // One request: its rate is 1 / its duration, so that API / SQL is results/s over results/s.
  const latency = summarize([api.seconds * 1000]);
  const sqlWrong = sql.error ?? (sql.results !== expected ? `${sql.results} rows, ${expected} expected` : null);
  const statusCodes = { [String(api.status)]: 1 };
  const errors = api.error || (api.status === 200 && !ok) ? 1 : 0;
  const non2xx = api.status === 200 || api.status === 0 ? 0 : 1;
  const rate = 1 / api.seconds;
  const answers = { connections: 1, seconds: report.seconds, responses: 1, ok: ok ? 1 : 0, rps: rate, okPerSecond: ok ? rate : 0 };
  const autocannonMs = { p50: latency.p50, p97_5: latency.p50, p99: latency.p50 };
  const [transactions, tps] = sql.error ? [0, 0] : [1, 1 / sql.seconds];
  const sqlRun = { tool: 'node' as const, connections: 1, seconds: report.sqlSeconds, transactions, tps };
  return {
    connections: 1,
    api: { ...answers, latencyMs: latency, autocannonMs, errors, timeouts: 0, non2xx, statusCodes, meanResponseBytes: api.bytes },
    sql: { ...sqlRun, errors: sqlWrong ? 1 : 0, firstError: sqlWrong, latencyMs: summarize([sql.seconds * 1000]) },
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
