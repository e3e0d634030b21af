/**
 * The whole benchmark: PostgreSQL, data, server, capture and EXPLAIN, load runs, the measurements run once, report. The server
 * is a black box driven over HTTP (bench/server.ts), its SQL read from PostgreSQL's log (bench/database.ts).
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, userInfo } from 'node:os';
import { join, relative } from 'node:path';
import type pg from 'pg';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';
import { createClient } from '@benchmarks/sdk';
import { measureChanges, measureCompareBaseline, measureHealth } from './changes-runs.ts';
import * as database from './database.ts';
import { measureExport } from './export-run.ts';
import { GENERATE_DEFAULTS, GENERATOR_VERSION, generateCatalogue, type BenchmarkRow, type Shape } from './generate.ts';
import { count, countRows, loadData, type CreatedBenchmark, type LoadReport } from './load.ts';
import * as measure from './measure.ts';
import * as report from './report.ts';
import * as scenarios from './scenarios.ts';
import { ROOT, serverNodeArgs, startServerProcess, type ServerProcess } from './server.ts';

/**
 * What to run (bench/run.ts): `variants`, how many the scenarios cycle through at most; `quietWait`, the
 * seconds to wait for a quiet machine before each run; `small`, a development run.
 */
export type BenchOptions = Record<'results' | 'seed' | 'duration' | 'warmup' | 'variants' | 'quietWait', number> &
  Record<'keep' | 'defaultAdmission' | 'small', boolean> &
  Record<'dataDir' | 'outDir', string> & {
    shape: Shape;
    connections: number[];
    scenarios: number[];
    baseline: 'auto' | measure.BaselineTool;
    /** The Markdown file whose generated section is replaced, or null. */
    docs: string | null;
    log: Log;
  };
type Log = (message: string) => void;
type Setup = { env: Record<string, string>; issuer: RunningIssuer; log: Log };
type Manifest = { generatorVersion: number; seed: number; results: number; shape: Shape; load: LoadReport; created: CreatedBenchmark[] };

const [INGEST_SUB, ADMIN_SUB, ADMIN_ENTITLEMENT] = ['bench-ingest', 'bench-admin', 'urn:bench:benchmarks-admins'];
function account(sub: string, entitlements: string[] = []) {
  return { sub, email: `${sub}@bench.example.org`, email_verified: true, entitlements };
}

/**
 * Creates the benchmarks marked `createdBy` through a server of their own, as users do: a user's, which
 * an administrator approves, and an administrator's; their ids become the server's.
 */
async function createThroughApi(benchmarks: BenchmarkRow[], client: pg.Client, { env, issuer, log }: Setup) {
  const server = await startServerProcess(env, log);
  try {
    issuer.addAccount(account('bench-user'));
    const as = async (sub: string) => {
      const sdk = createClient({ baseUrl: server.url, token: await issuer.mintAccessToken({ sub, ttlSeconds: 3600 }) });
      await sdk.self.upsert();
      return sdk;
    };
    const clients = { user: await as('bench-user'), admin: await as(ADMIN_SUB) };
    const created: CreatedBenchmark[] = [];
    for (const b of benchmarks.filter((x) => x.createdBy)) {
      const { container_image, container_tag, json_schema, description, url, createdBy } = b;
      const row = await clients[createdBy!].benchmarks.create({ container_image, container_tag, json_schema, description, url });
      if (createdBy === 'user') await clients.admin.benchmarks.approve(row.id);
      b.id = row.id;
      // Its metric paths are chosen in the transaction that creates it: ready before any upload.
      const paths = 'metric_path p join metric_benchmark m using (benchmark_id) where m.complete and p.benchmark_id = $1';
      const metricPaths = await count(client, paths, [row.id]);
      created.push({ key: b.def.key, id: row.id, createdBy: createdBy!, status: row.status, metricPaths });
      const by = createdBy === 'user' ? 'a user (approved by an administrator)' : 'an administrator';
      log(`created through the API by ${by}: ${b.def.key} ${row.id}, ${metricPaths} metric paths at once`);
    }
    return created;
  } finally {
    await server.stop();
  }
}

/** Rows the ingest scenarios and their baselines added (also left over by an interrupted run). */
async function removeIngested(client: pg.Client): Promise<void> {
  await client.query('delete from result where uploader_sub = $1', [INGEST_SUB]);
  await client.query('delete from app_user where sub = $1', [INGEST_SUB]);
  // The administrator stays when it created benchmarks before the load (the origin shape).
  const unused = 'delete from app_user u where sub = $1 and not exists (select 1 from benchmark b where b.uploader_sub = u.sub)';
  await client.query(unused, [ADMIN_SUB]);
}

const ACTIVE = "pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()";
/** Until no other statement runs in the database (5 minutes at most); the seconds waited. */
const waitForIdleDatabase = async (client: pg.Client) =>
  measure.r1(await measure.waitUntil(async () => (await count(client, ACTIVE)) === 0, 200, 300));

/** Counts the visible results, in all and by benchmark, into `into` (what the scenarios' checks read). */
async function countVisible(client: pg.Client, into: scenarios.ScenarioInputs['visible']) {
  const sql = 'select benchmark_id::text as id, count(*)::int as n from result where not hidden group by benchmark_id';
  const { rows } = await client.query<{ id: string; n: number }>(sql);
  into.total = rows.reduce((s, r) => s + r.n, 0);
  into.byBenchmark = new Map(rows.map((r) => [r.id, r.n]));
  return into;
}

/** The data of these options: the loaded set when the manifest and the row counts match it, else generated and loaded again. */
async function prepareData(o: BenchOptions, db: database.BenchDatabase, client: pg.Client, load: (client: pg.Client) => Promise<Manifest>) {
  const path = join(o.dataDir, 'bench-manifest.json');
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
    if (m.generatorVersion === GENERATOR_VERSION && m.seed === o.seed && m.results === o.results && m.shape === o.shape) {
      await removeIngested(client);
      const counts = await countRows(client);
      if (Object.entries(m.load.loaded).every(([table, n]) => counts[table as keyof typeof counts] === n)) {
        o.log(`reusing the ${o.results.toLocaleString('en-US')} results loaded earlier`);
        return { manifest: m, client, reused: true };
      }
    }
  } catch {
    // no manifest: load
  }
  rmSync(path, { force: true });
  o.log(`generating and loading ${o.results.toLocaleString('en-US')} results`);
  await client.end();
  await db.recreate();
  const fresh = await db.client();
  const manifest = await load(fresh);
  writeFileSync(path, JSON.stringify(manifest, null, 2));
  o.log(`loaded in ${manifest.load.seconds.total.toFixed(1)} s (${manifest.load.method})`);
  return { manifest, client: fresh, reused: false };
}

export async function runBench(o: BenchOptions): Promise<report.BenchReport> {
  const { log } = o;
  const began = Date.now();
  // The machine's 1-minute load average through the run (other engineers' programs share it).
  const loads: number[] = [loadavg()[0]!];
  const loadTimer = setInterval(() => loads.push(loadavg()[0]!), 10_000).unref();
  const generate = { ...GENERATE_DEFAULTS, seed: o.seed, results: o.results, shape: o.shape };
  const catalogue = generateCatalogue(generate);
  const tool: measure.BaselineTool = o.baseline === 'auto' ? (measure.pgbenchVersion() ? 'pgbench' : 'node') : o.baseline;
  if (tool === 'pgbench' && !measure.pgbenchVersion()) throw new Error('--baseline pgbench: pgbench is not installed');
  mkdirSync(o.dataDir, { recursive: true });
  if (userInfo().uid === 0) chmodSync(o.dataDir, 0o755); // PostgreSQL runs as the postgres user
  const explainDir = join(o.outDir, 'explain');
  rmSync(explainDir, { recursive: true, force: true });
  mkdirSync(explainDir, { recursive: true });
  let [db, client, issuer, server]: [database.BenchDatabase?, pg.Client?, RunningIssuer?, ServerProcess?] = [];
  try {
    log(`PostgreSQL in ${o.dataDir}`);
    db = await database.startBenchDatabase(o.dataDir, log);
    issuer = await startIssuer({ accounts: [account(INGEST_SUB), account(ADMIN_SUB, [ADMIN_ENTITLEMENT])] });
    // The load comes from one address at up to 32 connections: the per-client limits would refuse
    // part of it, so they are off here; the admission of expensive lists too (64 places), unless
    // --default-admission measures it.
    const env = { DATABASE_URL: db.url, OIDC_ISSUERS: issuer.issuer, ADMIN_ENTITLEMENTS: ADMIN_ENTITLEMENT, RATE_LIMIT: '0' };
    const admission: Record<string, string> = o.defaultAdmission ? {} : { EXPENSIVE_LIST_CONCURRENCY: '64' };
    const serverEnv: Record<string, string> = { ...env, READ_RATE_LIMIT: '0', ...admission };
    client = await db.client();
    const data = await prepareData(o, db, client, async (fresh) => {
      const setup = { env: serverEnv, issuer: issuer!, log };
      const created = catalogue.benchmarks.some((b) => b.createdBy) ? await createThroughApi(catalogue.benchmarks, fresh, setup) : [];
      const load = await loadData(fresh, catalogue, generate, o.dataDir, log);
      return { generatorVersion: GENERATOR_VERSION, seed: o.seed, results: o.results, shape: o.shape, load, created };
    });
    client = data.client;
    const { load, created } = data.manifest;
    const wrong = Object.entries(load.expected).find(([table, n]) => load.loaded[table as keyof typeof load.loaded] !== n);
    if (wrong) throw new Error(`loaded ${wrong[0]}: ${load.loaded[wrong[0] as keyof typeof load.loaded]} rows, generated ${wrong[1]}`);
    for (const [check, n] of Object.entries(load.checks)) if (n !== 0) throw new Error(`data check ${check} failed: ${n} rows`);
    // Reused data: the benchmarks created through the API have the ids the server gave them then.
    for (const c of created) catalogue.benchmarks.find((x) => x.def.key === c.key)!.id = c.id;

    // The loader skips the triggers, and a server that starts fills in the metric values that are
    // missing, in the background: once they are, it is started again, so that the memory the filling
    // took is not the server's under load.
    server = await startServerProcess(serverEnv, log);
    let polls = 0;
    const filled = async () => {
      const left = await count(client!, 'benchmark b left join metric_benchmark m on m.benchmark_id = b.id where m.complete is not true');
      if (++polls % 60 === 0) log(`metric values: ${left} benchmarks not complete yet`);
      return left === 0;
    };
    if (!(await filled())) {
      log(`metric values filled in by the server in ${(await measure.waitUntil(filled, 1000)).toFixed(1)} s`);
      await server.stop();
      server = await startServerProcess(serverEnv, log);
    }
    const statements = database.statementLog(o.dataDir, client);
    const mint = (sub: string) => issuer!.mintAccessToken({ sub, ttlSeconds: 86_400 });
    const [token, adminToken] = await Promise.all([mint(INGEST_SUB), mint(ADMIN_SUB)]);
    for (const bearer of [token, adminToken]) await createClient({ baseUrl: server.url, token: bearer }).self.upsert();
    await measure.sleep(1000);
    const idleRssMb = measure.r1(await server.rssMb());

    // A sample of result ids spread over the table (deterministic for a given table).
    const percent = Math.min(100, Math.max(0.01, 40_000 / Math.max(1, await count(client, 'result'))));
    const sample = await client.query<{ id: string }>(`select id from result tablesample system (${percent}) repeatable (7) limit 100`);
    const visible = await countVisible(client, { total: 0, byBenchmark: new Map() });
    const shaped = o.scenarios.some((id) => scenarios.SHAPE_SCENARIOS.includes(id));
    const users = shaped ? await scenarios.shapeInputs(client, scenarios.shapeBenchmark(catalogue)) : undefined;
    const [resultIds, identity] = [sample.rows.map((r) => r.id), { iss: issuer.issuer, sub: INGEST_SUB }];
    const common = { catalogue, options: generate, resultIds, token, identity, variants: o.variants };
    const inputs: scenarios.ScenarioInputs = { ...common, visible, shape: users };
    const n = (v: number) => v.toLocaleString('en-US');
    for (const { path, threshold, passing, total, share, target } of inputs.shape?.cuts ?? [])
      log(`${path} >= ${threshold}: ${n(passing)} of ${n(total)} results pass (${(100 * share).toFixed(2)} %, target ${target * 100} %)`);
    const all = scenarios.buildScenarios(inputs);
    // A scenario divided by another (its benchmark's plain list) brings it along.
    const wanted = new Set([...o.scenarios, ...all.filter((s) => o.scenarios.includes(s.id) && s.reference).map((s) => s.reference!)]);
    const chosen = all.filter((s) => wanted.has(s.id));

    const captured = new Map<number, database.CapturedRequest[]>();
    const reports = new Map<number, report.ScenarioReport>();
    for (const s of chosen) {
      log(`scenario ${s.id} (${s.key}): capturing the SQL of ${s.variants.length} request variants`);
      await countVisible(client, inputs.visible);
      const requests = await database.captureScenario(server, statements, s);
      const problems = requests.filter((r) => r.problem).map((r) => `${s.variants[r.variant]!.label}: ${r.problem}`);
      if (problems.length) throw new Error(`scenario ${s.id} answers wrongly:\n${problems.slice(0, 5).join('\n')}`);
      captured.set(s.id, requests);
      const file = join(explainDir, `${s.id}-${s.key}.txt`);
      const explained = await database.explainScenario(client, s, requests, file);
      const { id, key, title, endpoint, kind, resultsPerRequest, baselineMethod, reference, selectivity } = s;
      const about = { id, key, title, endpoint, kind, resultsPerRequest, variants: s.variants.length };
      const statementsPerRequest = requests[0]?.statements.length ?? 0;
      const files = { explainFile: relative(ROOT, file), statements: explained, captureProblems: [], runs: [] };
      reports.set(s.id, { ...about, statementsPerRequest, baselineMethod, reference, selectivity, ...files });
    }

    const groups = { server: server.pid, postgres: db.postmasterPid() };
    for (const scenario of chosen) {
      const { runs } = reports.get(scenario.id)!;
      const requests = captured.get(scenario.id)!;
      if (scenario.kind === 'export') {
        // One request, measured once whatever --connections says (bench/export-run.ts).
        await client.query('checkpoint');
        const expected = (await countVisible(client, inputs.visible)).total;
        const input = { server, target: db, scenario, issued: requests[0]!.statements, expected, groups };
        runs.push(await measureExport({ ...input, quietWait: o.quietWait, log }));
        continue;
      }
      const scripts = requests.map((r) => scenario.baseline(r.variant, r.statements));
      const variants = scenario.variants.map((v) => v.request);
      if (o.warmup > 0) {
        // One connection: enough to compile the hot paths, leaving no backlog of slow requests to the first run.
        log(`scenario ${scenario.id}: warm-up ${o.warmup} s`);
        await measure.runHttpLoad(server.url, variants, 1, o.warmup);
        await waitForIdleDatabase(client);
      }
      const single = measure.median(requests.map((r) => r.ms)) / 1000;
      for (const connections of o.connections) {
        // A run lasts --duration seconds, longer (at most 6 times, twice in a development run) when
        // requests are so slow that fewer than about 10 per connection would complete.
        const longest = o.duration * (o.small ? 2 : 6);
        const seconds = measure.r1(Math.min(longest, Math.max(o.duration, 10 * single * Math.max(1, connections / measure.coreCount))));
        const alone = `one request alone takes ${single.toFixed(2)} s`;
        if (seconds !== o.duration) log(`scenario ${scenario.id} @${connections}: ${seconds} s runs (${alone})`);
        // Each run starts from a checkpoint, so that no timed checkpoint's writes fall into it.
        await client.query('checkpoint');
        const quietApi = await measure.waitForQuiet(o.quietWait);
        const window = server.window();
        const apiMeter = measure.cpuMeter(groups);
        const api = await measure.runHttpLoad(server.url, variants, connections, seconds);
        const apiCpu = apiMeter.stop();
        const memory = window.end();
        // Requests still running when autocannon stopped must not overlap the SQL run.
        const drainSeconds = await waitForIdleDatabase(client);
        await client.query('checkpoint');
        const quietSql = await measure.waitForQuiet(o.quietWait);
        const sqlMeter = measure.cpuMeter(groups);
        const sql = await measure.runSqlLoad(tool, { target: db, scripts, connections, seconds, workDir: o.dataDir });
        // The baseline's backends exit with their clients: reaped by the postmaster, their CPU is in its children's total.
        await measure.sleep(500);
        const sqlCpu = sqlMeter.stop();
        // Throughput counts successful answers only: a fast 503 is not a served request.
        const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : null);
        const reference = reports.get(scenario.reference ?? 0)?.runs.find((r) => r.connections === connections);
        const vsReference = reference && ratio(api.okPerSecond, reference.api.okPerSecond);
        const run = { connections, api, sql, ratio: ratio(api.okPerSecond, sql.tps), vsReference, serverPeakRssMb: memory.peakMb };
        runs.push({ ...run, apiCpu, sqlCpu, quietWaitSeconds: quietApi.waited + quietSql.waited, seconds, drainSeconds });
        const pct = (v: number | null | undefined) => (v == null ? '–' : `${Math.round(v * 100)}%`);
        const per = (ms: number) => (ms / Math.max(1, api.responses)).toFixed(2);
        const stored = scenario.resultsPerRequest > 1 ? ` (${Math.round(api.okPerSecond * scenario.resultsPerRequest)} results/s)` : '';
        const cpu =
          apiCpu && `; CPU ms/request server ${per(apiCpu.serverMs)} PostgreSQL ${per(apiCpu.postgresMs)} client ${per(apiCpu.clientMs)}`;
        log(
          `scenario ${scenario.id} @${connections}: API ${api.okPerSecond.toFixed(1)} 2xx/s${stored} p50 ${api.latencyMs.p50} p95 ${api.latencyMs.p95} p99 ${api.latencyMs.p99} ms, ` +
            `errors ${api.errors + api.timeouts}, non-2xx ${api.non2xx} (503 ${api.statusCodes['503'] ?? 0}, 429 ${api.statusCodes['429'] ?? 0}); ` +
            `SQL ${sql.tps}/s p99 ${sql.latencyMs.p99} ms${sql.errors ? ` (${sql.errors} errors: ${sql.firstError})` : ''}; ratio ${pct(run.ratio)}` +
            `${reference ? `, vs #${scenario.reference} ${pct(vsReference)}` : ''}; RSS peak ${memory.peakMb} MB${cpu ? `${cpu}, other load ${apiCpu.otherPercent}%/${sqlCpu?.otherPercent}%` : ''}`,
        );
      }
    }

    await waitForIdleDatabase(client);
    const once: Omit<report.EveryMetricReport, 'loadAverage' | 'goals'> = { changes: null, compareBaseline: null, health: null };
    const rounds = Math.max(5, Math.min(15, Math.round(o.duration * 1.5)));
    const each = { server, client, statements, token, rounds, log };
    for (const id of [16, 17, 27].filter((x) => o.scenarios.includes(x))) {
      log(`scenario ${id} (${scenarios.MEASURED_ONCE[id]})`);
      await client.query('checkpoint');
      await measure.waitForQuiet(o.quietWait);
      if (id === 16) once.changes = await measureChanges({ ...each, adminToken, results: o.results });
      if (id === 17) {
        const visible = (await countVisible(client, inputs.visible)).byBenchmark.get(scenarios.typicalBenchmarks(catalogue)[0]!.id) ?? 0;
        once.compareBaseline = await measureCompareBaseline({ ...each, catalogue, options: generate, visible });
      }
      const benchmark = scenarios.shapeBenchmark(catalogue);
      if (id === 27) once.health = await measureHealth({ server, client, benchmark, seconds: o.duration, log });
    }

    // Requests autocannon abandoned at the end of the last run finish before the server stops.
    await measure.sleep(1000);
    const finalRssMb = measure.r1(await server.rssMb());
    await removeIngested(client);
    const cpu = cpus();
    const [cpuModel, memoryGb] = [cpu[0]?.model.trim() ?? 'unknown', Math.round(totalmem() / 1073741824)];
    const machine = { cpus: cpu.length, cpuModel, memoryGb, platform: `${process.platform} ${process.arch}`, node: process.version };
    const baselineTool = tool === 'pgbench' ? (measure.pgbenchVersion() ?? 'pgbench') : 'node-postgres loop';
    const { results, shape, seed, connections } = o;
    const run = { results, shape, seed, durationSeconds: o.duration, warmupSeconds: o.warmup, connections, scenarios: o.scenarios };
    const partial = {
      version: 1 as const,
      generatedAt: new Date().toISOString(),
      elapsedSeconds: Math.round((Date.now() - began) / 1000),
      machine: { ...machine, postgres: db.version },
      options: { ...run, baselineTool, quietWaitSeconds: o.quietWait },
      postgresSettings: database.POSTGRES_SETTINGS,
      data: { reused: data.reused, load, shape: o.shape, created },
      server: { idleRssMb, peakRssMb: server.peakMb(), finalRssMb, nodeArgs: serverNodeArgs() },
      scenarios: chosen.map((s) => reports.get(s.id)!),
    };
    clearInterval(loadTimer);
    loads.push(loadavg()[0]!);
    const loadAverage = { min: Math.min(...loads), median: measure.median(loads), max: Math.max(...loads), samples: loads.length };
    const everyMetric = { ...once, loadAverage, goals: report.judgeGoals(partial, { ...once, loadAverage }) };
    const result: report.BenchReport = { ...partial, targets: report.judgeTargets(partial), everyMetric };
    report.writeJson(join(o.outDir, 'latest.json'), result);
    if (o.docs) report.writeMarkdown(o.docs, report.markdownSection(result));
    log(`report written to ${join(o.outDir, 'latest.json')}${o.docs ? ` and ${o.docs}` : ''}`);
    for (const t of [...result.targets, ...everyMetric.goals]) log(`${t.status.toUpperCase()}: ${t.target} — ${t.detail}`);
    const [min, max, middle] = [loadAverage.min, loadAverage.max, loadAverage.median].map((v) => v.toFixed(1));
    log(`load average (1 min) during the run: ${min}–${max}, median ${middle}`);
    return result;
  } finally {
    await server?.stop().catch((err: unknown) => log(`stopping the server: ${(err as Error).message}`));
    await issuer?.close().catch(() => {});
    await client?.end().catch(() => {});
    await db?.stop().catch((err: unknown) => log(`stopping PostgreSQL: ${(err as Error).message}`));
    if (!o.keep) rmSync(o.dataDir, { recursive: true, force: true });
    else log(`data kept in ${o.dataDir} (reused by the next run with the same --results and --data-dir)`);
  }
}
