/**
 * Scenarios 16, 17 and 27, measured once each after the load runs, 16 and 17 against PostgreSQL's own
 * time for the statements the server issued (those of one computation, captured once in a round not
 * timed, replayed on one connection each round); p50 of every time:
 *
 * - 16, GET /results:changes of a benchmark of a quarter of `--results` (250,000 at 1M) in 10 series
 *   of equal length with two steps each, seeded for the scenario (created through the API, its results
 *   inserted with SQL, the server's triggers filling their metric values; removed after). Rounds of:
 *   the answer computed with nothing remembered (a `max_pvalue` of its own each round, so that neither
 *   the answer nor any series' change points are remembered), the same request again (remembered),
 *   and after one upload to one of the series the request with the default parameters (the answer
 *   forgotten, the change points of the other 9 series remembered).
 * - 17, GET /results:compare?baseline=<its largest flavor> of scenario 8's benchmark (about 50,000
 *   results at 1M): rounds of one upload (which forgets every remembered comparison), the comparison
 *   (computed) and the same again (remembered); and the same benchmark compared by flavor, after a
 *   write, against PostgreSQL's own median per flavor (percentile_cont).
 * - 27, /health probed every 10 ms alone, then while loops of changes and of comparisons are computed.
 */
import type pg from 'pg';
import { createClient } from '@benchmarks/sdk';
import { statementRole, type StatementLog } from './database.ts';
import { ingestDocuments, type BenchmarkRow, type Catalogue, type GenerateOptions } from './generate.ts';
import { r2, sleep, summarize, type LatencySummary } from './measure.ts';
import { API, query, typicalBenchmarks } from './scenarios.ts';
import type { ServerProcess } from './server.ts';

/**
 * The rounds of a computation: `coldMs` computed with nothing remembered, `rememberedMs` the same
 * request again, `afterWriteMs` (16) the first answer after an upload to one series, `sqlMs` the
 * statements of one computation replayed, `ratio` coldMs.p50 / sqlMs.p50; `groups` of the answer (series
 * or flavors); `byFlavor` (17) the benchmark compared by flavor after a write, and PostgreSQL's median.
 */
export interface ColdRememberedReport {
  benchmark: string;
  visibleResults: number;
  groups: number;
  request: string;
  rounds: number;
  coldMs: LatencySummary;
  rememberedMs: LatencySummary;
  afterWriteMs: LatencySummary | null;
  sqlMs: LatencySummary;
  ratio: number | null;
  statements: number;
  /** Whether the computation read the metric values table. */
  fromTable: boolean;
  statuses: Record<string, number>;
  byFlavor?: { request: string; computedMs: LatencySummary; medianSqlMs: LatencySummary };
}
export type HealthUnderLoadReport = Awaited<ReturnType<typeof measureHealth>>;
type RoundsInput = {
  server: ServerProcess;
  client: pg.Client;
  statements: StatementLog;
  token: string;
  rounds: number;
  log: (m: string) => void;
};

/** GET of `path`, timed, its status counted in `statuses`; with `strict`, anything but 200 throws. */
async function timed(server: ServerProcess, path: string, statuses: Record<string, number>, strict = true) {
  const started = performance.now();
  const res = await fetch(`${server.url}${path}`, { headers: { accept: 'application/json' } });
  const text = await res.text();
  const ms = performance.now() - started;
  statuses[res.status] = (statuses[res.status] ?? 0) + 1;
  if (strict && res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { ms, groups: strict ? ((JSON.parse(text) as { groups?: unknown[] }).groups?.length ?? 0) : 0 };
}

/** Timed requests and replays, by name; the statements of one computation; the report of the rounds. */
function rounds(input: RoundsInput) {
  const statuses: Record<string, number> = {};
  const times: Record<string, number[]> = {};
  const note = (name: string, ms: number) => {
    times[name] = [...(times[name] ?? []), ms];
  };
  let captured = { replayed: [] as string[], fromTable: false };
  const r = {
    times,
    get: async (path: string, name?: string) => {
      const answer = await timed(input.server, path, statuses);
      if (name) note(name, answer.ms);
      return answer.groups;
    },
    async replay(statements: string[], name: string) {
      const started = performance.now();
      for (const s of statements) await input.client.query(s);
      note(name, performance.now() - started);
    },
    /** The statements of the computation `get` causes (that `isComputation` finds): from its transaction's begin to its end. */
    async capture(path: string, isComputation: (sql: string) => boolean) {
      const all = await input.statements.during(async (take) => {
        await r.get(path);
        return take();
      });
      const at = all.findIndex(isComputation);
      if (at < 0) throw new Error(`no computing statement among:\n${all.join('\n').slice(0, 2000)}`);
      let begin = at;
      while (begin > 0 && !/^\s*(begin|start transaction)\b/i.test(all[begin]!)) begin--;
      let end = at;
      while (end < all.length - 1 && !/^\s*(commit|rollback)\b/i.test(all[end]!)) end++;
      // Statements of other work in the window (the watches' refresh locks its rows) are not the computation's.
      const replayed = all.slice(begin, end + 1).filter((s) => !/\bfor update\b/i.test(s));
      captured = { replayed, fromTable: replayed.some((s) => /\bfrom metric_value v\b/i.test(s)) };
      return replayed;
    },
    report(meta: Pick<ColdRememberedReport, 'benchmark' | 'visibleResults' | 'groups' | 'request'>): ColdRememberedReport {
      const [coldMs, sqlMs] = [summarize(times.cold!), summarize(times.sql!)];
      const afterWriteMs = times.afterWrite ? summarize(times.afterWrite) : null;
      const ratio = sqlMs.p50 > 0 ? r2(coldMs.p50 / sqlMs.p50) : null;
      const { replayed, fromTable } = captured;
      return {
        ...meta,
        rounds: input.rounds,
        coldMs,
        rememberedMs: summarize(times.remembered!),
        afterWriteMs,
        sqlMs,
        ratio,
        statements: replayed.length,
        fromTable,
        statuses,
      };
    },
  };
  return r;
}

/** POST /results of `json` to the benchmark and flavor, executed a minute (and `i` seconds) ago. */
const upload = (input: RoundsInput, benchmark_id: string, flavor_id: string, i: number, json: Record<string, unknown>) => {
  const execution_datetime = new Date(Date.now() - 60_000 - i * 1000).toISOString();
  return createClient({ baseUrl: input.server.url, token: input.token }).results.create(
    { benchmark_id, flavor_id, execution_datetime },
    json,
  );
};
const source = (r: ColdRememberedReport) => `SQL p50 ${r.sqlMs.p50} ms (${r.fromTable ? 'metric values table' : 'documents'})`;

const SERIES = 10;
const SERIES_IMAGE = 'ghcr.io/bench/changes-series';
const SERIES_SITE = 'changes-series-site';
const SERIES_OWNER = "'https://bench.example', 'bench'";

/** Removes what `seedSeries` wrote (also what a run stopped half-way left). */
async function removeSeries(client: pg.Client): Promise<void> {
  await client.query(`delete from result where benchmark_id in (select id from benchmark where container_image = '${SERIES_IMAGE}')`);
  await client.query(`delete from benchmark where container_image = '${SERIES_IMAGE}'`);
  await client.query(`delete from flavor where site_id in (select id from site where name = '${SERIES_SITE}')`);
  await client.query(`delete from site where name = '${SERIES_SITE}'`);
  await client.query(`delete from app_user where (iss, sub) = (${SERIES_OWNER})`);
}

/**
 * The benchmark of scenario 16, created through the API by an administrator (its metric paths chosen
 * at once), and `results` results inserted with SQL (the server's triggers write their metric values)
 * in SERIES flavors of equal length, executions a minute apart, each series a level of 100, 90 from
 * 40 % of it and 95 from 75 %, plus deterministic noise of about ±2.5; documents of about 400 bytes.
 */
async function seedSeries(input: RoundsInput & { adminToken: string }, results: number) {
  const { client } = input;
  await removeSeries(client);
  const { id: benchmark } = await createClient({ baseUrl: input.server.url, token: input.adminToken }).benchmarks.create({
    container_image: SERIES_IMAGE,
    container_tag: '1.0',
    description: 'The 10 series of scenario 16 (changes over time)',
    json_schema: { type: 'object', properties: { result: { type: 'object', properties: { score: { type: 'number' } } } } },
  });
  const user =
    "insert into app_user (iss, sub, email, registration_datetime, terms_version) values (%, 'bench@example.org', now(), '2024-01')";
  await client.query(user.replace('%', SERIES_OWNER));
  const owned = `'approved', now(), ${SERIES_OWNER}`;
  const reviewed = 'status, upload_datetime, uploader_iss, uploader_sub';
  const sql = `insert into site (id, name, address, ${reviewed}) values (gen_random_uuid(), '${SERIES_SITE}', 'here', ${owned}) returning id`;
  const site = (await client.query<{ id: string }>(sql)).rows[0]!.id;
  const { rows } = await client.query<{ id: string }>(
    `insert into flavor (id, site_id, name, ${reviewed})
     select gen_random_uuid(), $1, 'flavor-' || lpad(i::text, 2, '0'), ${owned} from generate_series(0, ${SERIES - 1}) i returning id`,
    [site],
  );
  await client.query(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), $1, $2, ($3::uuid[])[1 + g % ${SERIES}],
       jsonb_build_object('result', jsonb_build_object('score',
         (case when g < $4 * 0.4 then 100 when g < $4 * 0.75 then 90 else 95 end) + ((g::bigint * 7919) % 1000) / 200.0),
         'pad', repeat(md5(g::text), 8)),
       timestamptz '2024-01-01Z' + make_interval(mins => g), now(), ${SERIES_OWNER}, false, false
     from generate_series(1, $4::int) g`,
    [benchmark, site, rows.map((r) => r.id), results],
  );
  await client.query('vacuum analyze result');
  return { benchmark, flavors: rows.map((r) => r.id) };
}

export async function measureChanges(input: RoundsInput & { adminToken: string; results: number }): Promise<ColdRememberedReport> {
  const results = Math.max(2000, Math.round(input.results / 4));
  const started = performance.now();
  const { benchmark, flavors } = await seedSeries(input, results);
  input.log(
    `changes: ${results} results in ${SERIES} series seeded and their metric values filled in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  try {
    const path = (extra: Record<string, string> = {}) =>
      `${API}/results:changes?${query({ benchmark_id: benchmark, metric: 'json.result.score', ...extra })}`;
    // A max_pvalue of its own per round: nothing remembered, the same change points found.
    const cold = (i: number) => path({ max_pvalue: String(0.001 - i * 1e-9) });
    const r = rounds(input);
    const replayed = await r.capture(cold(0), (s) => /\bstring_agg\(/i.test(s));
    const groups = await r.get(path());
    for (let i = 1; i <= input.rounds; i++) {
      await r.get(cold(i), 'cold');
      await r.get(cold(i), 'remembered');
      await upload(input, benchmark, flavors[i % flavors.length]!, i, { result: { score: 95 + (i % 5) / 2 } });
      await r.get(path(), 'afterWrite');
      await r.replay(replayed, 'sql');
    }
    const report = r.report({ benchmark: `${SERIES_IMAGE}:1.0`, visibleResults: results, groups, request: `GET ${path()}` });
    const times = `cold p50 ${report.coldMs.p50} ms, remembered p50 ${report.rememberedMs.p50} ms, after a write p50 ${report.afterWriteMs?.p50} ms`;
    input.log(`changes: ${groups} series, ${times}; ${source(report)}`);
    return report;
  } finally {
    await removeSeries(input.client);
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
const comparePath = (b: BenchmarkRow, extra: Record<string, string> = {}) =>
  `${API}/results:compare?${query({ benchmark_id: b.id, metric: `json.${b.def.metric}`, ...extra })}`;

export async function measureCompareBaseline(input: RoundsInput & { catalogue: Catalogue; options: GenerateOptions; visible: number }) {
  const { client, catalogue } = input;
  const benchmark = typicalBenchmarks(catalogue)[0]!;
  const path = comparePath(benchmark, { baseline: await largestFlavor(client, benchmark) });
  const docs = ingestDocuments(catalogue, input.options, catalogue.benchmarks.length * (input.rounds + 2)).filter(
    (d) => d.benchmark.id === benchmark.id,
  );
  const write = (i: number) => upload(input, benchmark.id, docs[i % docs.length]!.flavor.id, i, docs[i % docs.length]!.json);
  const r = rounds(input);
  await write(0);
  const replayed = await r.capture(path, (s) => statementRole(s) === 'compare');
  // The same benchmark compared by flavor, against PostgreSQL's own median per flavor of the same values.
  const byFlavor = comparePath(benchmark);
  const sql = 'select id from metric_path where benchmark_id = $1 and path = $2';
  const pathId = Number((await client.query<{ id: number }>(sql, [benchmark.id, benchmark.def.metric.split('.')])).rows[0]?.id);
  const median = `select flavor_id, percentile_cont(0.5) within group (order by value) from metric_value where path_id = ${pathId} and not hidden and value is not null group by flavor_id`;
  let groups = 0;
  for (let i = 1; i <= input.rounds; i++) {
    await write(2 * i - 1);
    await r.get(byFlavor, 'byFlavor');
    await r.replay([median], 'median');
    await write(2 * i);
    groups = await r.get(path, 'cold');
    await r.get(path, 'remembered');
    await r.replay(replayed, 'sql');
  }
  const report = r.report({ benchmark: benchmark.def.key, visibleResults: input.visible, groups, request: `GET ${path}` });
  report.byFlavor = { request: `GET ${byFlavor}`, computedMs: summarize(r.times.byFlavor!), medianSqlMs: summarize(r.times.median!) };
  input.log(
    `compare by flavor computed p50 ${report.byFlavor.computedMs.p50} ms, PostgreSQL's median per flavor p50 ${report.byFlavor.medianSqlMs.p50} ms; ` +
      `compare with a baseline: ${groups} flavors, computed p50 ${report.coldMs.p50} ms, remembered p50 ${report.rememberedMs.p50} ms; ${source(report)}`,
  );
  return report;
}

/** Loops of each computation that run at once while /health is probed. */
const HEALTH_LOOPS = 2;

/**
 * Scenario 27: GET /health probed every 10 ms for `seconds` alone, then for `seconds` while
 * HEALTH_LOOPS loops of `GET /results:changes` (a `max_pvalue` of its own each request) and as many of
 * `GET /results:compare?baseline=…` (a `confidence` of its own) send one request after another, so
 * that nothing is answered from memory. Every status is counted; a probe's time counts whatever its status.
 */
export async function measureHealth(input: {
  server: ServerProcess;
  client: pg.Client;
  benchmark: BenchmarkRow;
  seconds: number;
  log: (m: string) => void;
}) {
  const { server, benchmark } = input;
  const baseline = await largestFlavor(input.client, benchmark);
  const metric = `json.${benchmark.def.metric}`;
  const requests = [
    (i: number) => `${API}/results:changes?${query({ benchmark_id: benchmark.id, metric, max_pvalue: String(0.001 - i * 1e-9) })}`,
    (i: number) => comparePath(benchmark, { baseline, confidence: String(0.95 - i * 1e-6) }),
  ];
  const healthStatuses: Record<string, number> = {};
  const probe = async (): Promise<number[]> => {
    const times: number[] = [];
    for (const end = performance.now() + input.seconds * 1000; performance.now() < end; ) {
      times.push((await timed(server, `${API}/health`, healthStatuses, false)).ms);
      await sleep(Math.max(0, 10 - times.at(-1)!));
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
      while (!stop) times.push((await timed(server, request(counter++), statuses, false)).ms);
    });
    return { request: `GET ${request(0)}`, statuses, times, running };
  });
  const loaded = await probe();
  stop = true;
  await Promise.all(loops.flatMap((l) => l.running));
  const [idleMs, loadedMs] = [summarize(idle), summarize(loaded)];
  const loopsReport = loops.map(({ request, statuses, times }) => ({
    request,
    loops: HEALTH_LOOPS,
    answers: times.length,
    statuses,
    ms: summarize(times),
  }));
  const line = (m: LatencySummary) => `p50 ${m.p50} p95 ${m.p95} p99 ${m.p99} max ${m.max} ms`;
  const each = loopsReport.map(
    (l) => `${l.request.split('?')[0]} ×${l.loops}: ${l.answers} answers ${JSON.stringify(l.statuses)}, p50 ${l.ms.p50} ms`,
  );
  input.log(`health: alone ${line(idleMs)}; under load ${line(loadedMs)} (statuses ${JSON.stringify(healthStatuses)}); ${each.join('; ')}`);
  return { benchmark: benchmark.def.key, seconds: input.seconds, idleMs, loadedMs, healthStatuses, loops: loopsReport };
}
