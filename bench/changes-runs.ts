/**
 * Scenarios 16, 17 and 27, measured once each after the load runs, 16 and 17 against PostgreSQL's
 * own time for the statements the server issued:
 *
 * - 16, GET /results:changes of a benchmark of a quarter of `--results` (250,000 at 1M) in 10 series
 *   of equal length with two steps each, seeded for the scenario (the benchmark created through the
 *   API, its results inserted with SQL, the server's triggers filling their metric values; removed after).
 *   Rounds of: the answer computed with nothing remembered (a `max_pvalue` of its own each round, so
 *   that neither the answer nor any series' change points are remembered), the same request again
 *   (remembered), and after one upload to one of the series the request with the default parameters
 *   (the answer forgotten, the change points of the other 9 series remembered).
 * - 17, GET /results:compare?baseline=<its largest flavor> of scenario 8's benchmark (about 50,000
 *   results at 1M): rounds of one upload (which forgets every remembered comparison), the
 *   comparison (computed), and the same again (remembered); and the same benchmark compared by
 *   flavor against PostgreSQL's own median per flavor (percentile_cont).
 * - 27, /health while changes and comparisons are computed (`measureHealth`).
 *
 * In both, the statements of one computation are captured once (a round not timed) and replayed on
 * one connection each round: p50 of every time.
 */
import type pg from 'pg';
import { statementRole } from './capture.ts';
import type { StatementLog } from './database.ts';
import { ingestDocuments, type BenchmarkRow, type Catalogue, type GenerateOptions } from './generate.ts';
import { typicalBenchmarks } from './compare-scenarios.ts';
import { API, query } from './scenarios.ts';
import type { ServerProcess } from './server.ts';
import { summarize, type LatencySummary } from './stats.ts';

export interface ColdRememberedReport {
  benchmark: string;
  visibleResults: number;
  /** The groups of the answer (series, or compared flavors). */
  groups: number;
  request: string;
  rounds: number;
  /** Computed, nothing remembered (ms). */
  coldMs: LatencySummary;
  /** The same request again, answered from memory (ms). */
  rememberedMs: LatencySummary;
  /** 16 only: the first answer after an upload to one series, the others' change points remembered (ms). */
  afterWriteMs: LatencySummary | null;
  /** The statements of one computation, replayed on one connection (ms). */
  sqlMs: LatencySummary;
  /** coldMs.p50 / sqlMs.p50. */
  ratio: number | null;
  statements: number;
  /** Whether the computation read the metric values table. */
  fromTable: boolean;
  statuses: Record<string, number>;
  /** 17 only: the same benchmark compared by flavor (computed after a write) and PostgreSQL's own median per flavor. */
  byFlavor?: { request: string; computedMs: LatencySummary; medianSqlMs: LatencySummary };
}

interface RoundsInput {
  server: ServerProcess;
  client: pg.Client;
  statements: StatementLog;
  rounds: number;
  log: (message: string) => void;
}

const r2 = (v: number) => Math.round(v * 100) / 100;

/** GET of `path`, timed; its status counted, anything but 200 an error. */
function getter(server: ServerProcess, statuses: Record<string, number>) {
  return async (path: string): Promise<{ ms: number; body: { groups?: unknown[] } }> => {
    const started = performance.now();
    const res = await fetch(`${server.url}${path}`, { headers: { accept: 'application/json' } });
    const text = await res.text();
    const ms = performance.now() - started;
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
    return { ms, body: JSON.parse(text) as { groups?: unknown[] } };
  };
}

/** The statements of one computation among those captured: from its transaction's begin to its end. */
async function captureComputation(
  statements: StatementLog,
  get: () => Promise<unknown>,
  isComputation: (sql: string) => boolean,
): Promise<string[]> {
  await statements.start();
  let captured: string[];
  try {
    await get();
    captured = await statements.take();
  } finally {
    await statements.stop();
  }
  const at = captured.findIndex(isComputation);
  if (at < 0) throw new Error(`no computing statement among:\n${captured.join('\n').slice(0, 2000)}`);
  let begin = at;
  while (begin > 0 && !/^\s*(begin|start transaction)\b/i.test(captured[begin]!)) begin--;
  let end = at;
  while (end < captured.length - 1 && !/^\s*(commit|rollback)\b/i.test(captured[end]!)) end++;
  // Statements of other work in the window (the watches' refresh locks its rows) are not the computation's.
  return captured.slice(begin, end + 1).filter((s) => !/\bfor update\b/i.test(s));
}

/** POST /results of `json` to the benchmark and flavor, executed a minute (and `i` seconds) ago. */
async function upload(server: ServerProcess, token: string, benchmark: string, flavor: string, i: number, json: unknown): Promise<void> {
  const res = await fetch(
    `${server.url}${API}/results?${query([
      ['benchmark_id', benchmark],
      ['flavor_id', flavor],
      ['execution_datetime', new Date(Date.now() - 60_000 - i * 1000).toISOString()],
    ])}`,
    {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(json),
    },
  );
  if (res.status !== 201) throw new Error(`the upload before an answer: ${res.status} ${(await res.text()).slice(0, 300)}`);
}

async function replay(client: pg.Client, statements: string[]): Promise<number> {
  const started = performance.now();
  for (const s of statements) await client.query(s);
  return performance.now() - started;
}

const SERIES = 10;
const SERIES_IMAGE = 'ghcr.io/bench/changes-series';
const SERIES_SITE = 'changes-series-site';
const SERIES_OWNER = "'https://bench.example', 'bench'";

/** Removes what `seedSeries` wrote (also what a run stopped half-way left). */
async function removeSeries(client: pg.Client): Promise<void> {
  const benchmarks = `(select id from benchmark where container_image = '${SERIES_IMAGE}')`;
  await client.query(`delete from result where benchmark_id in ${benchmarks}`);
  await client.query(`delete from benchmark where container_image = '${SERIES_IMAGE}'`);
  await client.query(`delete from flavor where site_id in (select id from site where name = '${SERIES_SITE}')`);
  await client.query(`delete from site where name = '${SERIES_SITE}'`);
  await client.query(`delete from app_user where (iss, sub) = (${SERIES_OWNER})`);
}

/**
 * The benchmark of scenario 16, created through the API by an administrator (its metric paths
 * chosen at once), and `results` results inserted with SQL (the server's triggers write their metric
 * values) in SERIES flavors of equal length, executions a minute apart, each series a level of 100,
 * 90 from 40 % of it and 95 from 75 %, plus deterministic noise of about ±2.5; documents of about 400 bytes.
 */
async function seedSeries(input: RoundsInput & { adminToken: string }, results: number): Promise<{ benchmark: string; flavors: string[] }> {
  const { client } = input;
  await removeSeries(client);
  const res = await fetch(`${input.server.url}${API}/benchmarks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${input.adminToken}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({
      container_image: SERIES_IMAGE,
      container_tag: '1.0',
      description: 'The 10 series of scenario 16 (changes over time)',
      json_schema: { type: 'object', properties: { result: { type: 'object', properties: { score: { type: 'number' } } } } },
    }),
  });
  if (!res.ok) throw new Error(`creating the series benchmark: ${res.status} ${(await res.text()).slice(0, 300)}`);
  const benchmark = ((await res.json()) as { id: string }).id;
  await client.query(
    `insert into app_user (iss, sub, email, registration_datetime, terms_version) values (${SERIES_OWNER}, 'bench@example.org', now(), '2024-01')`,
  );
  const site = (
    await client.query<{ id: string }>(
      `insert into site (id, name, address, status, upload_datetime, uploader_iss, uploader_sub)
       values (gen_random_uuid(), '${SERIES_SITE}', 'here', 'approved', now(), ${SERIES_OWNER}) returning id`,
    )
  ).rows[0]!.id;
  const { rows } = await client.query<{ id: string }>(
    `insert into flavor (id, site_id, name, status, upload_datetime, uploader_iss, uploader_sub)
     select gen_random_uuid(), $1, 'flavor-' || lpad(i::text, 2, '0'), 'approved', now(), ${SERIES_OWNER} from generate_series(0, ${SERIES - 1}) i
     returning id`,
    [site],
  );
  const flavors = rows.map((r) => r.id);
  await client.query(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), $1, $2, ($3::uuid[])[1 + g % ${SERIES}],
       jsonb_build_object('result', jsonb_build_object('score',
         (case when g < $4 * 0.4 then 100 when g < $4 * 0.75 then 90 else 95 end) + ((g::bigint * 7919) % 1000) / 200.0),
         'pad', repeat(md5(g::text), 8)),
       timestamptz '2024-01-01Z' + make_interval(mins => g), now(), ${SERIES_OWNER}, false, false
     from generate_series(1, $4::int) g`,
    [benchmark, site, flavors, results],
  );
  await client.query('vacuum analyze result');
  return { benchmark, flavors };
}

export async function measureChanges(
  input: RoundsInput & { token: string; adminToken: string; results: number },
): Promise<ColdRememberedReport> {
  const { server, client, log } = input;
  const results = Math.max(2000, Math.round(input.results / 4));
  const started = performance.now();
  const { benchmark, flavors } = await seedSeries(input, results);
  log(
    `changes: ${results} results in ${SERIES} series seeded and their metric values filled in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  try {
    const base: [string, string][] = [
      ['benchmark_id', benchmark],
      ['metric', 'json.result.score'],
    ];
    const path = (extra: [string, string][] = []) => `${API}/results:changes?${query([...base, ...extra])}`;
    // A max_pvalue of its own per round: nothing remembered, the same change points found.
    const cold = (i: number) => path([['max_pvalue', String(0.001 - i * 1e-9)]]);
    const statuses: Record<string, number> = {};
    const get = getter(server, statuses);
    const write = (i: number) =>
      upload(server, input.token, benchmark, flavors[i % flavors.length]!, i, { result: { score: 95 + (i % 5) / 2 } });
    const replayed = await captureComputation(
      input.statements,
      () => get(cold(0)),
      (s) => /\bstring_agg\(/i.test(s),
    );
    const fromTable = replayed.some((s) => /\bfrom metric_value v\b/i.test(s));
    const first = await get(path());
    const groups = first.body.groups?.length ?? 0;
    const times = { cold: [] as number[], remembered: [] as number[], afterWrite: [] as number[], sql: [] as number[] };
    for (let i = 1; i <= input.rounds; i++) {
      times.cold.push((await get(cold(i))).ms);
      times.remembered.push((await get(cold(i))).ms);
      await write(i);
      times.afterWrite.push((await get(path())).ms);
      times.sql.push(await replay(client, replayed));
    }
    const report = roundsReport({
      benchmark: `${SERIES_IMAGE}:1.0`,
      visibleResults: results,
      groups,
      request: `GET ${path()}`,
      rounds: input.rounds,
      times,
      statements: replayed.length,
      fromTable,
      statuses,
    });
    log(
      `changes: ${groups} series, cold p50 ${report.coldMs.p50} ms, remembered p50 ${report.rememberedMs.p50} ms, ` +
        `after a write p50 ${report.afterWriteMs?.p50} ms; SQL p50 ${report.sqlMs.p50} ms (${fromTable ? 'metric values table' : 'documents'})`,
    );
    return report;
  } finally {
    await removeSeries(client);
  }
}

/** The baseline of a comparison: the flavor with the most visible results of a number at the benchmark's metric. */
async function largestFlavor(client: pg.Client, benchmark: BenchmarkRow): Promise<string> {
  const { rows } = await client.query<{ flavor_id: string }>(
    "select flavor_id::text from result where benchmark_id = $1 and not hidden and jsonb_typeof(json #> $2::text[]) = 'number' " +
      'group by flavor_id order by count(*) desc, flavor_id limit 1',
    [benchmark.id, benchmark.def.metric.split('.')],
  );
  if (!rows[0]) throw new Error(`${benchmark.def.key} has no result with a number at ${benchmark.def.metric}`);
  return rows[0].flavor_id;
}

export interface HealthUnderLoadReport {
  benchmark: string;
  seconds: number;
  /** GET /health every 10 ms, alone and then while the loops run (ms). */
  idleMs: LatencySummary;
  loadedMs: LatencySummary;
  healthStatuses: Record<string, number>;
  loops: { request: string; loops: number; answers: number; statuses: Record<string, number>; ms: LatencySummary }[];
}

/** Loops of each computation that run at once while /health is probed. */
const HEALTH_LOOPS = 2;

/**
 * Scenario 27: how long GET /health takes while changes over time and comparisons are computed on
 * the benchmark: probed every 10 ms for `seconds` alone, then for `seconds` while HEALTH_LOOPS loops
 * of `GET /results:changes` (a `max_pvalue` of its own each request) and as many of
 * `GET /results:compare?baseline=…` (a `confidence` of its own) send one request after another, so
 * that nothing is answered from memory. Every status is counted; a probe's time counts whatever
 * its status.
 */
export async function measureHealth(input: {
  server: ServerProcess;
  client: pg.Client;
  benchmark: BenchmarkRow;
  seconds: number;
  log: (message: string) => void;
}): Promise<HealthUnderLoadReport> {
  const { server, benchmark } = input;
  const metric = `json.${benchmark.def.metric}`;
  const baseline = await largestFlavor(input.client, benchmark);
  const requests = [
    (i: number) =>
      `${API}/results:changes?${query([
        ['benchmark_id', benchmark.id],
        ['metric', metric],
        ['max_pvalue', String(0.001 - i * 1e-9)],
      ])}`,
    (i: number) =>
      `${API}/results:compare?${query([
        ['benchmark_id', benchmark.id],
        ['metric', metric],
        ['baseline', baseline],
        ['confidence', String(0.95 - i * 1e-6)],
      ])}`,
  ];
  const timed = async (path: string, statuses: Record<string, number>): Promise<number> => {
    const started = performance.now();
    const res = await fetch(`${server.url}${path}`, { headers: { accept: 'application/json' } });
    await res.arrayBuffer();
    statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    return performance.now() - started;
  };
  const healthStatuses: Record<string, number> = {};
  const probe = async (): Promise<number[]> => {
    const times: number[] = [];
    for (const end = performance.now() + input.seconds * 1000; performance.now() < end; ) {
      const ms = await timed(`${API}/health`, healthStatuses);
      times.push(ms);
      await new Promise((r) => setTimeout(r, Math.max(0, 10 - ms)));
    }
    return times;
  };
  const idle = await probe();
  let stop = false;
  let counter = 0;
  const loops = requests.map((request) => {
    const statuses: Record<string, number> = {};
    const times: number[] = [];
    const running = Array.from({ length: HEALTH_LOOPS }, async () => {
      while (!stop) times.push(await timed(request(counter++), statuses));
    });
    return { request: request(0), statuses, times, running };
  });
  const loaded = await probe();
  stop = true;
  await Promise.all(loops.flatMap((l) => l.running));
  const report: HealthUnderLoadReport = {
    benchmark: benchmark.def.key,
    seconds: input.seconds,
    idleMs: summarize(idle),
    loadedMs: summarize(loaded),
    healthStatuses,
    loops: loops.map((l) => ({
      request: `GET ${l.request}`,
      loops: HEALTH_LOOPS,
      answers: l.times.length,
      statuses: l.statuses,
      ms: summarize(l.times),
    })),
  };
  const line = (m: LatencySummary) => `p50 ${m.p50} p95 ${m.p95} p99 ${m.p99} max ${m.max} ms`;
  input.log(
    `health: alone ${line(report.idleMs)}; under load ${line(report.loadedMs)} (statuses ${JSON.stringify(healthStatuses)}); ` +
      report.loops
        .map((l) => `${l.request.split('?')[0]} ×${l.loops}: ${l.answers} answers ${JSON.stringify(l.statuses)}, p50 ${l.ms.p50} ms`)
        .join('; '),
  );
  return report;
}

export async function measureCompareBaseline(
  input: RoundsInput & { catalogue: Catalogue; options: GenerateOptions; token: string; visible: number },
): Promise<ColdRememberedReport> {
  const { server, client, log } = input;
  const benchmark = typicalBenchmarks(input.catalogue)[0]!;
  const path = `${API}/results:compare?${query([
    ['benchmark_id', benchmark.id],
    ['metric', `json.${benchmark.def.metric}`],
    ['baseline', await largestFlavor(client, benchmark)],
  ])}`;
  const statuses: Record<string, number> = {};
  const get = getter(server, statuses);
  const docs = ingestDocuments(input.catalogue, input.options, input.catalogue.benchmarks.length * (input.rounds + 2)).filter(
    (d) => d.benchmark.id === benchmark.id,
  );
  const write = (i: number) => {
    const d = docs[i % docs.length]!;
    return upload(server, input.token, benchmark.id, d.flavor.id, i, d.json);
  };
  await write(0);
  const replayed = await captureComputation(
    input.statements,
    () => get(path),
    (s) => statementRole(s) === 'compare',
  );
  const fromTable = replayed.some((s) => /\bfrom metric_value v\b/i.test(s));
  // The same benchmark compared by flavor, against PostgreSQL's own median per flavor of the same values.
  const byFlavor = `${API}/results:compare?${query([
    ['benchmark_id', benchmark.id],
    ['metric', `json.${benchmark.def.metric}`],
  ])}`;
  const pathId = await client.query<{ id: number }>('select id from metric_path where benchmark_id = $1 and path = $2', [
    benchmark.id,
    benchmark.def.metric.split('.'),
  ]);
  const median = `select flavor_id, percentile_cont(0.5) within group (order by value) from metric_value where path_id = ${Number(pathId.rows[0]?.id)} and not hidden and value is not null group by flavor_id`;
  const times = { cold: [] as number[], remembered: [] as number[], sql: [] as number[], byFlavor: [] as number[], median: [] as number[] };
  let groups = 0;
  for (let i = 1; i <= input.rounds; i++) {
    await write(2 * i - 1);
    times.byFlavor.push((await get(byFlavor)).ms);
    times.median.push(await replay(client, [median]));
    await write(2 * i);
    const computed = await get(path);
    groups = computed.body.groups?.length ?? 0;
    times.cold.push(computed.ms);
    times.remembered.push((await get(path)).ms);
    times.sql.push(await replay(client, replayed));
  }
  const report = roundsReport({
    benchmark: benchmark.def.key,
    visibleResults: input.visible,
    groups,
    request: `GET ${path}`,
    rounds: input.rounds,
    times,
    statements: replayed.length,
    fromTable,
    statuses,
  });
  report.byFlavor = { request: `GET ${byFlavor}`, computedMs: summarize(times.byFlavor), medianSqlMs: summarize(times.median) };
  log(
    `compare by flavor computed p50 ${report.byFlavor.computedMs.p50} ms, PostgreSQL's median per flavor p50 ${report.byFlavor.medianSqlMs.p50} ms; ` +
      `compare with a baseline: ${groups} flavors, computed p50 ${report.coldMs.p50} ms, remembered p50 ${report.rememberedMs.p50} ms; ` +
      `SQL p50 ${report.sqlMs.p50} ms (${fromTable ? 'metric values table' : 'documents'})`,
  );
  return report;
}

function roundsReport(r: {
  benchmark: string;
  visibleResults: number;
  groups: number;
  request: string;
  rounds: number;
  times: { cold: number[]; remembered: number[]; afterWrite?: number[]; sql: number[] };
  statements: number;
  fromTable: boolean;
  statuses: Record<string, number>;
}): ColdRememberedReport {
  const coldMs = summarize(r.times.cold);
  const sqlMs = summarize(r.times.sql);
  return {
    benchmark: r.benchmark,
    visibleResults: r.visibleResults,
    groups: r.groups,
    request: r.request,
    rounds: r.rounds,
    coldMs,
    rememberedMs: summarize(r.times.remembered),
    afterWriteMs: r.times.afterWrite ? summarize(r.times.afterWrite) : null,
    sqlMs,
    ratio: sqlMs.p50 > 0 ? r2(coldMs.p50 / sqlMs.p50) : null,
    statements: r.statements,
    fromTable: r.fromTable,
    statuses: r.statuses,
  };
}
