/**
 * The whole benchmark: PostgreSQL, data, server, capture and EXPLAIN, load runs, report.
 * `runBench` is what `npm run bench` (bench/run.ts) and the smoke test call. The server is a black
 * box: started as `benchmarks-server start` (bench/server.ts), driven over HTTP, its SQL read from
 * PostgreSQL's statement log (bench/database.ts); data is loaded and baselines run with `pg`.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, userInfo } from 'node:os';
import { join, relative, resolve } from 'node:path';
import type pg from 'pg';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';
import { coreCount, cpuMeter, waitForQuiet } from './cpu.ts';
import { captureScenario, explainStatements, explainText, type CapturedRequest } from './capture.ts';
import { POSTGRES_SETTINGS, StatementLog, startBenchDatabase, type BenchDatabase } from './database.ts';
import {
  GENERATE_DEFAULTS,
  GENERATOR_VERSION,
  generateCatalogue,
  type BenchmarkRow,
  type GenerateOptions,
  type Shape,
} from './generate.ts';
import { runHttpLoad } from './http-load.ts';
import { countRows, loadData, type CreatedBenchmark, type LoadReport } from './load.ts';
import {
  judgeGoals,
  judgeTargets,
  markdownSection,
  writeJson,
  writeMarkdown,
  type BenchReport,
  type EveryMetricReport,
  type RunReport,
  type ScenarioReport,
} from './report.ts';
import { buildCompareScenarios, typicalBenchmarks } from './compare-scenarios.ts';
import { measureExport } from './export-run.ts';
import { buildScenarios, withDefaults, type FullScenario, type ScenarioInputs } from './scenarios.ts';
import { buildShapeScenarios, MEASURED_ONCE, SHAPE_SCENARIOS, shapeBenchmark, shapeInputs } from './shape-scenarios.ts';
import { measureChanges, measureCompareBaseline, measureHealth } from './changes-runs.ts';
import { serverNodeArgs, startServerProcess, type ServerProcess } from './server.ts';
import { pgbenchVersion, runSqlLoad, type BaselineTool } from './sql-load.ts';

/** Every scenario there is: load runs 1 to 10 and 18 to 26, measured once 16, 17 and 27. */
export const SCENARIOS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27];

export interface BenchOptions {
  results: number;
  /** The data set's shape (bench/generate.ts). */
  shape: Shape;
  seed: number;
  /** Seconds per measured run. */
  duration: number;
  /** Seconds of API load before each scenario's runs (not measured). */
  warmup: number;
  connections: number[];
  scenarios: number[];
  /** Keep the data directory (database included) for the next run. */
  keep: boolean;
  dataDir: string;
  /** Where latest.json and explain/ go. */
  outDir: string;
  /** The Markdown file whose generated section is replaced, or null. */
  docs: string | null;
  baseline: 'auto' | BaselineTool;
  /** How many variants (benchmarks, terms…) the scenarios cycle through, at most. */
  variants: number;
  /** Before each measured run, wait up to this many seconds for the machine to be quiet. */
  quietWait: number;
  /** Run the server with its default admission of expensive lists, as deployed, instead of 64 places. */
  defaultAdmission: boolean;
  log: (message: string) => void;
}

const ROOT = resolve(new URL('..', import.meta.url).pathname);

export const BENCH_DEFAULTS: BenchOptions = {
  results: GENERATE_DEFAULTS.results,
  shape: GENERATE_DEFAULTS.shape,
  seed: GENERATE_DEFAULTS.seed,
  duration: 10,
  warmup: 2,
  connections: [1, 8, 32],
  // "Read and write load"'s scenarios: 8 to 10 (compare and export) add about 12 minutes at 1M, run when named.
  scenarios: [1, 2, 3, 4, 5, 6, 7],
  keep: false,
  dataDir: join(ROOT, 'bench', 'results', 'data'),
  outDir: join(ROOT, 'bench', 'results'),
  docs: join(ROOT, 'docs', 'performance.md'),
  baseline: 'auto',
  variants: 20,
  quietWait: 60,
  defaultAdmission: false,
  log: (m) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`),
};

/**
 * Below this many results a run is a development run: shorter runs and warm-ups, runs of slow
 * requests lengthened twice at most (not 6 times), and no waiting for other programs to leave the
 * CPU (on a shared machine every wait would run to its limit), so that the default scenarios at
 * 20,000 results take a few minutes. Options given explicitly win.
 */
export const SMALL_RESULTS = 100_000;
export const SMALL_DEFAULTS: Pick<BenchOptions, 'duration' | 'warmup' | 'quietWait'> = { duration: 2, warmup: 1, quietWait: 0 };

const INGEST_SUB = 'bench-ingest';
const ADMIN_SUB = 'bench-admin';
const ADMIN_ENTITLEMENT = 'urn:bench:benchmarks-admins';

interface Manifest {
  generatorVersion: number;
  seed: number;
  results: number;
  shape?: Shape;
  load: LoadReport;
  created?: CreatedBenchmark[];
}

/**
 * Creates the benchmarks marked `createdBy` through a server of their own, as users do: a user's,
 * which an administrator then approves, and an administrator's, approved at once; their ids become
 * the server's. The server is stopped before the results are loaded (with COPY).
 */
async function createThroughApi(
  benchmarks: BenchmarkRow[],
  env: Record<string, string>,
  issuer: RunningIssuer,
  client: pg.Client,
  log: (message: string) => void,
): Promise<CreatedBenchmark[]> {
  const server = await startServerProcess(env, log);
  try {
    const call = async (method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 400)}`);
      return { status: res.status, body: text ? JSON.parse(text) : null };
    };
    const tokens: Record<'user' | 'admin', string> = { user: '', admin: '' };
    for (const role of ['user', 'admin'] as const) {
      const sub = `bench-${role}`;
      if (role === 'user') issuer.addAccount({ sub, email: `${sub}@bench.example.org`, email_verified: true });
      tokens[role] = await issuer.mintAccessToken({ sub, ttlSeconds: 3600 });
      await call('POST', '/users/self', tokens[role]);
    }
    const created: CreatedBenchmark[] = [];
    for (const b of benchmarks) {
      if (!b.createdBy) continue;
      const fields = {
        container_image: b.container_image,
        container_tag: b.container_tag,
        json_schema: b.json_schema,
        description: b.description,
        url: b.url,
      };
      const row = (await call('POST', '/benchmarks', tokens[b.createdBy], fields)).body as { id: string; status: string };
      if (b.createdBy === 'user') await call('POST', `/benchmarks/${row.id}:approve`, tokens.admin);
      b.id = row.id;
      // Its metric paths are chosen in the transaction that creates it: ready before any upload.
      const paths = Number(
        (
          await client.query<{ n: string }>(
            'select count(*) as n from metric_path p join metric_benchmark m using (benchmark_id) where m.complete and p.benchmark_id = $1',
            [row.id],
          )
        ).rows[0]!.n,
      );
      created.push({ key: b.def.key, id: row.id, createdBy: b.createdBy, status: row.status, metricPaths: paths });
      log(
        `created through the API by ${b.createdBy === 'user' ? 'a user (approved by an administrator)' : 'an administrator'}: ${b.def.key} ${row.id}, ${paths} metric paths at once`,
      );
    }
    return created;
  } finally {
    await server.stop();
  }
}

function readManifest(path: string): Manifest | null {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

/** Rows the ingest scenario and its baseline added (also left over by an interrupted run). */
async function removeIngested(client: pg.Client): Promise<void> {
  await client.query('delete from result where uploader_sub = $1', [INGEST_SUB]);
  await client.query('delete from app_user where sub = $1', [INGEST_SUB]);
  // The administrator stays when it created benchmarks before the load (the origin shape).
  await client.query('delete from app_user u where sub = $1 and not exists (select 1 from benchmark b where b.uploader_sub = u.sub)', [
    ADMIN_SUB,
  ]);
}

/**
 * Waits until the server has filled in the metric values of every benchmark (the loader skips its
 * triggers, and a server that starts fills in what is missing, in the background); the seconds taken.
 */
async function waitForMetricValues(client: pg.Client, log: (message: string) => void): Promise<number> {
  const started = Date.now();
  for (let round = 0; ; round++) {
    const { rows } = await client.query<{ n: number }>(
      'select count(*)::int as n from benchmark b left join metric_benchmark m on m.benchmark_id = b.id where m.complete is not true',
    );
    if (rows[0]!.n === 0) return round === 0 ? 0 : (Date.now() - started) / 1000;
    if (round % 60 === 59) log(`metric values: ${rows[0]!.n} benchmarks not complete yet`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)]! : 0;
};

/** Waits until no other statement runs in the database; returns the seconds waited. */
async function waitForIdleDatabase(client: pg.Client, maxSeconds: number): Promise<number> {
  const started = performance.now();
  for (;;) {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from pg_stat_activity where datname = current_database() and state = 'active' and pid <> pg_backend_pid()`,
    );
    const waited = (performance.now() - started) / 1000;
    if (Number(rows[0]!.n) === 0 || waited > maxSeconds) return Math.round(waited * 10) / 10;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Counts the visible results, in all and by benchmark, into `into` (the object the scenarios' checks
 * read): again before each capture and export, since the ingest scenarios add results.
 */
async function countVisible(client: pg.Client, into: ScenarioInputs['visible']): Promise<ScenarioInputs['visible']> {
  const { rows } = await client.query<{ id: string; n: number }>(
    'select benchmark_id::text as id, count(*)::int as n from result where not hidden group by benchmark_id',
  );
  into.total = rows.reduce((s, r) => s + r.n, 0);
  into.byBenchmark.clear();
  for (const r of rows) into.byBenchmark.set(r.id, r.n);
  return into;
}

/** A sample of result ids spread over the table (deterministic for a given table). */
async function sampleResultIds(client: pg.Client, count: number): Promise<string[]> {
  const total = Number((await client.query<{ n: string }>('select count(*) as n from result')).rows[0]!.n);
  const percent = Math.min(100, Math.max(0.01, (100 * count * 4) / Math.max(1, total)));
  const { rows } = await client.query<{ id: string }>(
    `select id from result tablesample system (${percent}) repeatable (7) limit ${count}`,
  );
  return rows.map((r) => r.id);
}

export async function runBench(input: Partial<BenchOptions> = {}): Promise<BenchReport> {
  const results = input.results ?? BENCH_DEFAULTS.results;
  const o: BenchOptions = { ...BENCH_DEFAULTS, ...(results < SMALL_RESULTS ? SMALL_DEFAULTS : {}), ...input };
  const log = o.log;
  const began = Date.now();
  // The machine's 1-minute load average through the run (other engineers' programs share it).
  const loads: number[] = [loadavg()[0]!];
  const loadTimer = setInterval(() => loads.push(loadavg()[0]!), 10_000);
  loadTimer.unref();
  const generate: GenerateOptions = { ...GENERATE_DEFAULTS, seed: o.seed, results: o.results, shape: o.shape };
  const catalogue = generateCatalogue(generate);
  const tool: BaselineTool = o.baseline === 'auto' ? (pgbenchVersion() ? 'pgbench' : 'node') : o.baseline;
  if (tool === 'pgbench' && !pgbenchVersion()) throw new Error('--baseline pgbench: pgbench is not installed');

  mkdirSync(o.dataDir, { recursive: true });
  if (userInfo().uid === 0) chmodSync(o.dataDir, 0o755); // PostgreSQL runs as the postgres user
  const explainDir = join(o.outDir, 'explain');
  rmSync(explainDir, { recursive: true, force: true });
  mkdirSync(explainDir, { recursive: true });

  let db: BenchDatabase | undefined;
  let client: pg.Client | undefined;
  let issuer: RunningIssuer | undefined;
  let server: ServerProcess | undefined;
  try {
    log(`PostgreSQL in ${o.dataDir}`);
    db = await startBenchDatabase(o.dataDir, log);
    client = await db.client();
    issuer = await startIssuer({
      accounts: [
        { sub: INGEST_SUB, email: `${INGEST_SUB}@bench.example.org`, email_verified: true },
        { sub: ADMIN_SUB, email: `${ADMIN_SUB}@bench.example.org`, email_verified: true, entitlements: [ADMIN_ENTITLEMENT] },
      ],
    });
    // The load comes from one address at up to 32 connections: the per-client limits would refuse
    // part of it, so they are off here; the admission of expensive lists too (64 places), unless
    // --default-admission measures it.
    const serverEnv: Record<string, string> = {
      DATABASE_URL: db.url,
      OIDC_ISSUERS: issuer.issuer,
      ADMIN_ENTITLEMENTS: ADMIN_ENTITLEMENT,
      RATE_LIMIT: '0',
      READ_RATE_LIMIT: '0',
      ...(o.defaultAdmission ? {} : { EXPENSIVE_LIST_CONCURRENCY: '64' }),
    };

    // ---------------------------------------------------------------- data
    const manifestPath = join(o.dataDir, 'bench-manifest.json');
    const manifest = readManifest(manifestPath);
    let load: LoadReport;
    let reused = false;
    let created = manifest?.created ?? [];
    if (
      manifest &&
      manifest.generatorVersion === GENERATOR_VERSION &&
      manifest.seed === o.seed &&
      manifest.results === o.results &&
      (manifest.shape ?? 'default') === o.shape
    ) {
      await removeIngested(client);
      const counts = await countRows(client);
      if (JSON.stringify(counts) === JSON.stringify(manifest.load.loaded)) {
        load = manifest.load;
        reused = true;
        log(`reusing the ${o.results.toLocaleString('en-US')} results loaded earlier`);
      } else {
        load = await freshLoad();
      }
    } else {
      load = await freshLoad();
    }
    async function freshLoad(): Promise<LoadReport> {
      rmSync(manifestPath, { force: true });
      log(`generating and loading ${o.results.toLocaleString('en-US')} results`);
      await client!.end();
      await db!.recreate();
      client = await db!.client();
      created = catalogue.benchmarks.some((b) => b.createdBy)
        ? await createThroughApi(catalogue.benchmarks, serverEnv, issuer!, client, log)
        : [];
      const report = await loadData(client, catalogue, generate, o.dataDir, log);
      const saved: Manifest = {
        generatorVersion: GENERATOR_VERSION,
        seed: o.seed,
        results: o.results,
        shape: o.shape,
        load: report,
        created,
      };
      writeFileSync(manifestPath, JSON.stringify(saved, null, 2));
      log(`loaded in ${report.seconds.total.toFixed(1)} s (${report.method})`);
      return report;
    }
    for (const [table, n] of Object.entries(load.expected)) {
      if (load.loaded[table as keyof typeof load.loaded] !== n)
        throw new Error(`loaded ${table}: ${load.loaded[table as keyof typeof load.loaded]} rows, generated ${n}`);
    }
    for (const [check, n] of Object.entries(load.checks)) if (n !== 0) throw new Error(`data check ${check} failed: ${n} rows`);
    // Reused data: the benchmarks created through the API have the ids the server gave them then.
    for (const c of created) {
      const b = catalogue.benchmarks.find((x) => x.def.key === c.key);
      if (b) b.id = c.id;
    }
    // ---------------------------------------------------------------- server
    server = await startServerProcess(serverEnv, log);
    const metricSeconds = await waitForMetricValues(client, log);
    if (metricSeconds > 0) {
      // Started again, so that the memory the filling took is not the server's under load.
      log(`metric values filled in by the server in ${metricSeconds.toFixed(1)} s`);
      await server.stop();
      server = await startServerProcess(serverEnv, log);
    }
    const statements = new StatementLog(o.dataDir, client);
    const token = await issuer.mintAccessToken({ sub: INGEST_SUB, ttlSeconds: 24 * 3600 });
    const adminToken = await issuer.mintAccessToken({ sub: ADMIN_SUB, ttlSeconds: 24 * 3600 });
    for (const bearer of [token, adminToken]) {
      const registered = await fetch(`${server.url}/api/v1/users/self`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` } });
      if (registered.status !== 200 && registered.status !== 201)
        throw new Error(`registering the ingest user and the administrator: ${registered.status} ${await registered.text()}`);
    }
    await new Promise((r) => setTimeout(r, 1000));
    const idleRssMb = Math.round((await server.rssMb()) * 10) / 10;

    const inputs: ScenarioInputs = {
      catalogue,
      options: generate,
      resultIds: await sampleResultIds(client, 100),
      token,
      identity: { iss: issuer.issuer, sub: INGEST_SUB },
      variants: o.variants,
      visible: await countVisible(client, { total: 0, byBenchmark: new Map() }),
      shape: o.scenarios.some((id) => SHAPE_SCENARIOS.includes(id)) ? await shapeInputs(client, shapeBenchmark(catalogue)) : undefined,
    };
    for (const c of inputs.shape?.cuts ?? [])
      log(
        `${c.path} >= ${c.threshold}: ${c.passing.toLocaleString('en-US')} of ${c.total.toLocaleString('en-US')} results pass (${(100 * (c.passing / c.total)).toFixed(2)} %, target ${c.target * 100} %)`,
      );
    const all = [...buildScenarios(inputs), ...buildCompareScenarios(inputs), ...buildShapeScenarios(inputs)].map(withDefaults);
    // A scenario divided by another (its benchmark's plain list) brings it along.
    const wanted = new Set(o.scenarios);
    for (const s of all) if (wanted.has(s.id) && s.reference) wanted.add(s.reference);
    const scenarios = all.filter((s) => wanted.has(s.id));

    // ---------------------------------------------------------------- capture and EXPLAIN
    const captured = new Map<number, CapturedRequest[]>();
    const reports = new Map<number, ScenarioReport>();
    for (const scenario of scenarios) {
      log(`scenario ${scenario.id} (${scenario.key}): capturing the SQL of ${scenario.variants.length} request variants`);
      await countVisible(client, inputs.visible);
      const requests = await captureScenario(server, statements, scenario);
      captured.set(scenario.id, requests);
      const problems = requests.filter((r) => r.problem).map((r) => `${scenario.variants[r.variant]!.label}: ${r.problem}`);
      if (problems.length) throw new Error(`scenario ${scenario.id} answers wrongly:\n${problems.slice(0, 5).join('\n')}`);
      const report = await explainScenario(client, scenario, requests, explainDir);
      reports.set(scenario.id, report);
    }

    // ---------------------------------------------------------------- load runs
    for (const scenario of scenarios) {
      const report = reports.get(scenario.id)!;
      const requests = captured.get(scenario.id)!;
      const groups = { server: server.pid, postgres: db.postmasterPid() };
      if (scenario.kind === 'export') {
        // One request, measured once whatever --connections says (bench/export-run.ts).
        await client.query('checkpoint');
        const issued = requests[0]!.statements;
        const expected = (await countVisible(client, inputs.visible)).total;
        report.runs.push(await measureExport({ server, target: db, scenario, issued, expected, groups, quietWait: o.quietWait, log }));
        continue;
      }
      const scripts = requests.map((r) => scenario.baseline(r.variant, r.statements));
      const variants = scenario.variants.map((v) => v.request);
      if (o.warmup > 0) {
        // One connection: enough to compile the hot paths, and no backlog of slow requests is
        // left behind for the first measured run.
        log(`scenario ${scenario.id}: warm-up ${o.warmup} s`);
        await runHttpLoad(server.url, variants, 1, o.warmup);
        await waitForIdleDatabase(client, 300);
      }
      const single = median(requests.map((r) => r.ms)) / 1000;
      for (const connections of o.connections) {
        // A run lasts --duration seconds, longer (at most 6 times, twice in a development run) when
        // requests are so slow that fewer than about 10 per connection would complete.
        const longest = o.duration * (o.results < SMALL_RESULTS ? 2 : 6);
        const seconds = Math.round(10 * Math.min(longest, Math.max(o.duration, 10 * single * Math.max(1, connections / coreCount)))) / 10;
        if (seconds !== o.duration)
          log(`scenario ${scenario.id} @${connections}: ${seconds} s runs (one request alone takes ${single.toFixed(2)} s)`);
        // Each run starts from a checkpoint, so that no timed checkpoint's writes fall into it.
        await client.query('checkpoint');
        const quietApi = await waitForQuiet(o.quietWait);
        const window = server.window();
        const apiMeter = cpuMeter(groups);
        const api = await runHttpLoad(server.url, variants, connections, seconds);
        const apiCpu = apiMeter.stop();
        const memory = window.end();
        // Requests still running when autocannon stopped must not overlap the SQL run.
        const drained = await waitForIdleDatabase(client, 300);
        await client.query('checkpoint');
        const quietSql = await waitForQuiet(o.quietWait);
        const sqlMeter = cpuMeter(groups);
        const sql = await runSqlLoad(tool, db, scripts, connections, seconds, o.dataDir);
        // The baseline's backends exit with their clients: let the postmaster reap them, so that
        // their CPU time is in its children's total when it is read.
        await new Promise((r) => setTimeout(r, 500));
        const sqlCpu = sqlMeter.stop();
        // Throughput counts successful answers only: a fast 503 is not a served request.
        const apiRate = api.okPerSecond;
        const reference = scenario.reference ? reports.get(scenario.reference)?.runs.find((r) => r.connections === connections) : undefined;
        const run: RunReport = {
          connections,
          api,
          sql,
          ratio: sql.tps > 0 ? Math.round((apiRate / sql.tps) * 1000) / 1000 : null,
          ...(reference
            ? { vsReference: reference.api.okPerSecond > 0 ? Math.round((apiRate / reference.api.okPerSecond) * 1000) / 1000 : null }
            : {}),
          serverPeakRssMb: memory.peakMb,
          apiCpu,
          sqlCpu,
          quietWaitSeconds: quietApi.waited + quietSql.waited,
          seconds,
          drainSeconds: drained,
        };
        report.runs.push(run);
        log(
          `scenario ${scenario.id} @${connections}: API ${apiRate.toFixed(1)} 2xx/s${scenario.resultsPerRequest > 1 ? ` (${Math.round(apiRate * scenario.resultsPerRequest)} results/s)` : ''} p50 ${api.latencyMs.p50} p95 ${api.latencyMs.p95} p99 ${api.latencyMs.p99} ms, ` +
            `errors ${api.errors + api.timeouts}, non-2xx ${api.non2xx} (503 ${api.statusCodes['503'] ?? 0}, 429 ${api.statusCodes['429'] ?? 0}); SQL ${sql.tps}/s p99 ${sql.latencyMs.p99} ms${sql.errors ? ` (${sql.errors} errors: ${sql.firstError})` : ''}; ` +
            `ratio ${run.ratio === null ? '–' : `${Math.round(run.ratio * 100)}%`}` +
            (run.vsReference !== undefined
              ? `, vs #${scenario.reference} ${run.vsReference === null ? '–' : `${Math.round(run.vsReference * 100)}%`}`
              : '') +
            `; RSS peak ${memory.peakMb} MB` +
            (apiCpu
              ? `; CPU ms/request server ${(apiCpu.serverMs / Math.max(1, api.responses)).toFixed(2)} PostgreSQL ${(apiCpu.postgresMs / Math.max(1, api.responses)).toFixed(2)} client ${(apiCpu.clientMs / Math.max(1, api.responses)).toFixed(2)}, other load ${apiCpu.otherPercent}%/${sqlCpu?.otherPercent}%`
              : ''),
        );
      }
    }

    // ---------------------------------------------------------------- measured once
    await waitForIdleDatabase(client, 300);
    const once = {
      changes: null as EveryMetricReport['changes'],
      compareBaseline: null as EveryMetricReport['compareBaseline'],
      health: null as EveryMetricReport['health'],
    };
    const rounds = Math.max(5, Math.min(15, Math.round(o.duration * 1.5)));
    for (const id of Object.keys(MEASURED_ONCE).map(Number)) {
      if (!o.scenarios.includes(id)) continue;
      log(`scenario ${id} (${MEASURED_ONCE[id]})`);
      await client.query('checkpoint');
      await waitForQuiet(o.quietWait);
      if (id === 16)
        once.changes = await measureChanges({ server, client, statements, token, adminToken, results: o.results, rounds, log });
      if (id === 17) {
        const visible = (await countVisible(client, inputs.visible)).byBenchmark.get(typicalBenchmarks(catalogue)[0]!.id) ?? 0;
        once.compareBaseline = await measureCompareBaseline({
          server,
          client,
          statements,
          catalogue,
          options: generate,
          token,
          visible,
          rounds,
          log,
        });
      }
      if (id === 27) once.health = await measureHealth({ server, client, benchmark: shapeBenchmark(catalogue), seconds: o.duration, log });
    }

    // Requests autocannon abandoned at the end of the last run finish before the server stops.
    await new Promise((r) => setTimeout(r, 1000));
    const finalRssMb = Math.round((await server.rssMb()) * 10) / 10;
    await removeIngested(client);

    const partial: Omit<BenchReport, 'targets'> = {
      version: 1,
      generatedAt: new Date().toISOString(),
      elapsedSeconds: Math.round((Date.now() - began) / 1000),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
        memoryGb: Math.round(totalmem() / 1073741824),
        platform: `${process.platform} ${process.arch}`,
        node: process.version,
        postgres: db.version,
      },
      options: {
        results: o.results,
        shape: o.shape,
        seed: o.seed,
        durationSeconds: o.duration,
        warmupSeconds: o.warmup,
        connections: o.connections,
        scenarios: o.scenarios,
        baselineTool: tool === 'pgbench' ? (pgbenchVersion() ?? 'pgbench') : 'node-postgres loop',
        quietWaitSeconds: o.quietWait,
      },
      postgresSettings: POSTGRES_SETTINGS,
      data: { reused, load, shape: o.shape, created },
      server: {
        idleRssMb,
        peakRssMb: server.peakMb(),
        finalRssMb,
        nodeArgs: serverNodeArgs(),
      },
      scenarios: scenarios.map((s) => reports.get(s.id)!),
    };
    clearInterval(loadTimer);
    loads.push(loadavg()[0]!);
    const everyMetric: EveryMetricReport = {
      ...once,
      loadAverage: { min: Math.min(...loads), median: median(loads), max: Math.max(...loads), samples: loads.length },
      goals: [],
    };
    everyMetric.goals = judgeGoals(partial, everyMetric);
    const report: BenchReport = { ...partial, targets: judgeTargets(partial), everyMetric };
    writeJson(join(o.outDir, 'latest.json'), report);
    if (o.docs) writeMarkdown(o.docs, markdownSection(report));
    log(`report written to ${join(o.outDir, 'latest.json')}${o.docs ? ` and ${o.docs}` : ''}`);
    for (const t of report.targets) log(`target ${t.status.toUpperCase()}: ${t.target} — ${t.detail}`);
    for (const t of everyMetric.goals) log(`goal ${t.status.toUpperCase()}: ${t.target} — ${t.detail}`);
    log(
      `load average (1 min) during the run: ${everyMetric.loadAverage.min.toFixed(1)}–${everyMetric.loadAverage.max.toFixed(1)}, median ${everyMetric.loadAverage.median.toFixed(1)}`,
    );
    return report;
  } finally {
    await server?.stop().catch((err: unknown) => log(`stopping the server: ${(err as Error).message}`));
    await issuer?.close().catch(() => {});
    await client?.end().catch(() => {});
    await db?.stop().catch((err: unknown) => log(`stopping PostgreSQL: ${(err as Error).message}`));
    if (!o.keep) rmSync(o.dataDir, { recursive: true, force: true });
    else log(`data kept in ${o.dataDir} (reused by the next run with the same --results and --data-dir)`);
  }
}

/** EXPLAIN (ANALYZE, BUFFERS) of the requests of a scenario: one per distinct set of statement shapes. */
async function explainScenario(
  client: pg.Client,
  scenario: FullScenario,
  requests: CapturedRequest[],
  dir: string,
): Promise<ScenarioReport> {
  const shape = (sql: string) => sql.replace(/'(?:[^']|'')*'/g, '?').replace(/\b\d+(\.\d+)?\b/g, '?');
  const seen = new Set<string>();
  const groups: Parameters<typeof explainText>[1] = [];
  let first: ScenarioReport['statements'] | null = null;
  for (const r of requests) {
    const key = r.statements.map(shape).join('\n');
    if (seen.has(key)) continue;
    seen.add(key);
    // An upload is explained after removing the rows it made, so that its INSERT can run again.
    const stored = scenario.storedIds?.(r.body) ?? [];
    const setup = stored.length
      ? [`delete from result where id in (${stored.map((id) => `'${id.replaceAll("'", "''")}'`).join(', ')})`]
      : [];
    const explained = await explainStatements(client, scenario.explained?.(r.statements) ?? r.statements, setup);
    groups.push({ label: scenario.variants[r.variant]!.label, path: scenario.variants[r.variant]!.request.path, explained });
    first ??= explained.map((e) => ({
      role: e.role,
      executionMs: e.executionMs,
      indexes: e.indexes,
      seqScans: e.seqScans,
      error: e.error,
    }));
    if (groups.length >= 3) break;
  }
  const file = join(dir, `${scenario.id}-${scenario.key}.txt`);
  writeFileSync(file, explainText(scenario, groups));
  return {
    id: scenario.id,
    key: scenario.key,
    title: scenario.title,
    endpoint: scenario.endpoint,
    kind: scenario.kind,
    resultsPerRequest: scenario.resultsPerRequest,
    variants: scenario.variants.length,
    statementsPerRequest: requests[0]?.statements.length ?? 0,
    baselineMethod: scenario.baselineMethod,
    ...(scenario.reference ? { reference: scenario.reference } : {}),
    ...(scenario.selectivity ? { selectivity: scenario.selectivity } : {}),
    explainFile: relative(ROOT, file),
    statements: first ?? [],
    captureProblems: requests.filter((r) => r.problem).map((r) => r.problem!),
    runs: [],
  };
}
