/**
 * The measurements run once (16, 17, 27): changes over time and compare with a baseline, computed with nothing remembered,
 * remembered, after a write, and against PostgreSQL's time for one computation's statements replayed; /health under load.
 */
import type pg from 'pg';
import { createClient } from '@benchmarks/sdk';
import { statementRole, type StatementLog } from './database.ts';
import { ingestDocuments, type BenchmarkRow, type Catalogue, type GenerateOptions } from './generate.ts';
import { RESULT_COLUMNS, REVIEWED } from './load.ts';
import { r2, sleep, summarize, type LatencySummary } from './measure.ts';
import { API, comparisonPath, query, typicalBenchmarks } from './scenarios.ts';
import type { ServerProcess } from './server.ts';

/** The rounds of a computation: `ratio` is coldMs.p50 / sqlMs.p50; `groups` are the answer's series or flavors. */
export type ColdRememberedReport = ReturnType<ReturnType<typeof rounds>['report']>;
export type HealthUnderLoadReport = Awaited<ReturnType<typeof measureHealth>>;
type RoundsInput = {
  server: ServerProcess;
  client: pg.Client;
  statements: StatementLog;
  token: string;
  rounds: number;
  log: (m: string) => void;
};
type ByFlavor = { request: string; computedMs: LatencySummary; medianSqlMs: LatencySummary };

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

function rounds(input: RoundsInput) {
  const statuses: Record<string, number> = {};
  const times: Record<string, number[]> = { cold: [], remembered: [], afterWrite: [], sql: [], byFlavor: [], median: [] };
  let captured = { replayed: [] as string[], fromTable: false };
  const r = {
    times,
    get: async (path: string, name?: string) => {
      const answer = await timed(input.server, path, statuses);
      if (name) times[name]!.push(answer.ms);
      return answer.groups;
    },
    async replay(statements: string[], name: string) {
      const started = performance.now();
      for (const s of statements) await input.client.query(s);
      times[name]!.push(performance.now() - started);
    },
    /** The statements of the computation that `get(path)` causes (`isComputation` finds it): its transaction, begin to end. */
    async capture(path: string, isComputation: (sql: string) => boolean) {
      const all = await input.statements.during(async (take) => {
        await r.get(path);
        return take();
      });
      const at = all.findIndex(isComputation);
      if (at < 0) throw new Error(`no computing statement among:\n${all.join('\n').slice(0, 2000)}`);
      let [begin, end] = [at, at];
      while (begin > 0 && !/^\s*(begin|start transaction)\b/i.test(all[begin]!)) begin--;
      while (end < all.length - 1 && !/^\s*(commit|rollback)\b/i.test(all[end]!)) end++;
      // Statements of other work in the window (the watches' refresh locks its rows) are not the computation's.
      const replayed = all.slice(begin, end + 1).filter((s) => !/\bfor update\b/i.test(s));
      captured = { replayed, fromTable: replayed.some((s) => /\bfrom metric_value v\b/i.test(s)) };
      return replayed;
    },
    report(meta: { benchmark: string; visibleResults: number; groups: number; request: string }, byFlavor?: ByFlavor) {
      const [coldMs, sqlMs, rememberedMs] = [summarize(times.cold!), summarize(times.sql!), summarize(times.remembered!)];
      const afterWriteMs = times.afterWrite!.length ? summarize(times.afterWrite!) : null;
      const ratio = sqlMs.p50 > 0 ? r2(coldMs.p50 / sqlMs.p50) : null;
      const { replayed, fromTable } = captured;
      const measured = { coldMs, rememberedMs, afterWriteMs, sqlMs, ratio, statements: replayed.length, fromTable };
      return { ...meta, rounds: input.rounds, ...measured, statuses, byFlavor };
    },
  };
  return r;
}

/** POST /results of `json` to the benchmark and flavor, executed a minute (and `i` seconds) ago. */
const upload = (input: RoundsInput, benchmark_id: string, flavor_id: string, i: number, json: Record<string, unknown>) => {
  const execution_datetime = new Date(Date.now() - 60_000 - i * 1000).toISOString();
  const sdk = createClient({ baseUrl: input.server.url, token: input.token });
  return sdk.results.create({ benchmark_id, flavor_id, execution_datetime }, json);
};
const source = (r: ColdRememberedReport) => `SQL p50 ${r.sqlMs.p50} ms (${r.fromTable ? 'metric values table' : 'documents'})`;

const SERIES = 10;
const SERIES_IMAGE = 'ghcr.io/bench/changes-series';
const SERIES_SITE = 'changes-series-site';
const SERIES_OWNER = "'https://bench.example', 'bench'";

async function removeSeries(client: pg.Client): Promise<void> {
  await client.query(`delete from result where benchmark_id in (select id from benchmark where container_image = '${SERIES_IMAGE}')`);
  await client.query(`delete from benchmark where container_image = '${SERIES_IMAGE}'`);
  await client.query(`delete from flavor where site_id in (select id from site where name = '${SERIES_SITE}')`);
  await client.query(`delete from site where name = '${SERIES_SITE}'`);
  await client.query(`delete from app_user where (iss, sub) = (${SERIES_OWNER})`);
}

/**
 * Scenario 16's benchmark, created through the API by an administrator, and `results` results inserted
 * with SQL in SERIES flavors, a minute apart, each series a level of 100, 90 from 40 % of it and 95 from
 * 75 %, plus deterministic noise of about ±2.5 (documents of about 400 bytes).
 */
async function seedSeries(input: RoundsInput & { adminToken: string }, results: number) {
  const { client } = input;
  await removeSeries(client);
  const json_schema = { type: 'object', properties: { result: { type: 'object', properties: { score: { type: 'number' } } } } };
  const description = 'The 10 series of scenario 16 (changes over time)';
  const admin = createClient({ baseUrl: input.server.url, token: input.adminToken });
  const { id: benchmark } = await admin.benchmarks.create({
    container_image: SERIES_IMAGE,
    container_tag: '1.0',
    description,
    json_schema,
  });
  const owned = `'approved', now(), ${SERIES_OWNER}`;
  const user = `insert into app_user (iss, sub, email, registration_datetime, terms_version) values (${SERIES_OWNER}, 'bench@example.org', now(), '2024-01')`;
  await client.query(user);
  const site = `insert into site (id, name, address, ${REVIEWED}) values (gen_random_uuid(), '${SERIES_SITE}', 'here', ${owned}) returning id`;
  const siteId = (await client.query<{ id: string }>(site)).rows[0]!.id;
  const { rows } = await client.query<{ id: string }>(
    `insert into flavor (id, site_id, name, ${REVIEWED})
     select gen_random_uuid(), $1, 'flavor-' || lpad(i::text, 2, '0'), ${owned} from generate_series(0, ${SERIES - 1}) i returning id`,
    [siteId],
  );
  await client.query(
    `insert into result (${RESULT_COLUMNS})
     select gen_random_uuid(), $1, $2, ($3::uuid[])[1 + g % ${SERIES}],
       jsonb_build_object('result', jsonb_build_object('score',
         (case when g < $4 * 0.4 then 100 when g < $4 * 0.75 then 90 else 95 end) + ((g::bigint * 7919) % 1000) / 200.0),
         'pad', repeat(md5(g::text), 8)),
       timestamptz '2024-01-01Z' + make_interval(mins => g), now(), ${SERIES_OWNER}, false, false
     from generate_series(1, $4::int) g`,
    [benchmark, siteId, rows.map((r) => r.id), results],
  );
  await client.query('vacuum analyze result');
  return { benchmark, flavors: rows.map((r) => r.id) };
}

export async function measureChanges(input: RoundsInput & { adminToken: string; results: number }) {
  const results = Math.max(2000, Math.round(input.results / 4));
  const started = performance.now();
  const { benchmark, flavors } = await seedSeries(input, results);
  input.log(
    `changes: ${results} results in ${SERIES} series seeded, metric values filled in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  try {
    const path = () => changesPath(benchmark, 'json.result.score');
    const cold = (i: number) => changesPath(benchmark, 'json.result.score', i);
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
const comparePath = (b: BenchmarkRow, extra: Record<string, string> = {}) => `${API}${comparisonPath(b, extra)}`;
/** GET /results:changes of the metric; in round `i`, a max_pvalue of its own: nothing remembered, the same change points found. */
const changesPath = (benchmark_id: string, metric: string, i?: number) => {
  const fresh: Record<string, string> = i === undefined ? {} : { max_pvalue: String(0.001 - i * 1e-9) };
  return `${API}/results:changes?${query({ benchmark_id, metric, ...fresh })}`;
};

export async function measureCompareBaseline(input: RoundsInput & { catalogue: Catalogue; options: GenerateOptions; visible: number }) {
  const { client, catalogue } = input;
  const benchmark = typicalBenchmarks(catalogue)[0]!;
  const path = comparePath(benchmark, { baseline: await largestFlavor(client, benchmark) });
  const generated = ingestDocuments(catalogue, input.options, catalogue.benchmarks.length * (input.rounds + 2));
  const docs = generated.filter((d) => d.benchmark.id === benchmark.id);
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
  const flavors = { request: `GET ${byFlavor}`, computedMs: summarize(r.times.byFlavor!), medianSqlMs: summarize(r.times.median!) };
  const report = r.report({ benchmark: benchmark.def.key, visibleResults: input.visible, groups, request: `GET ${path}` }, flavors);
  input.log(
    `compare by flavor computed p50 ${flavors.computedMs.p50} ms, PostgreSQL's median per flavor p50 ${flavors.medianSqlMs.p50} ms; ` +
      `compare with a baseline: ${groups} flavors, computed p50 ${report.coldMs.p50} ms, remembered p50 ${report.rememberedMs.p50} ms; ${source(report)}`,
  );
  return report;
}

/** Loops of each computation that run at once while /health is probed. */
const HEALTH_LOOPS = 2;

/**
 * Scenario 27: GET /health every 10 ms for `seconds` alone, then for `seconds` while HEALTH_LOOPS loops
 * each of changes and of compare with a baseline send requests nothing answers from memory (a
 * `max_pvalue`, a `confidence` of their own). A probe's time counts whatever its status.
 */
export async function measureHealth(input: Pick<RoundsInput, 'server' | 'client' | 'log'> & { benchmark: BenchmarkRow; seconds: number }) {
  const { server, benchmark } = input;
  const baseline = await largestFlavor(input.client, benchmark);
  const requests = [
    (i: number) => changesPath(benchmark.id, `json.${benchmark.def.metric}`, i),
    (i: number) => comparePath(benchmark, { baseline, confidence: String(0.95 - i * 1e-6) }),
  ];
  const healthStatuses: Record<string, number> = {};
  const probe = async (): Promise<number[]> => {
    const times: number[] = [];
    for (const end = performance.now() + input.seconds * 1000; performance.now() < end; await sleep(Math.max(0, 10 - times.at(-1)!)))
      times.push((await timed(server, `${API}/health`, healthStatuses, false)).ms);
    return times;
  };
  const idle = await probe();
  let stop = false;
  let counter = 0;
  const loops = requests.map((request) => {
    const [statuses, times]: [Record<string, number>, number[]] = [{}, []];
    const running = Array.from({ length: HEALTH_LOOPS }, async () => {
      while (!stop) times.push((await timed(server, request(counter++), statuses, false)).ms);
    });
    return { request: `GET ${request(0)}`, statuses, times, running };
  });
  const loaded = await probe();
  stop = true;
  await Promise.all(loops.flatMap((l) => l.running));
  const [idleMs, loadedMs] = [summarize(idle), summarize(loaded)];
  const report = loops.map(({ request, statuses, times }) => ({
    request,
    loops: HEALTH_LOOPS,
    answers: times.length,
    statuses,
    ms: summarize(times),
  }));
  const line = (m: LatencySummary) => `p50 ${m.p50} p95 ${m.p95} p99 ${m.p99} max ${m.max} ms`;
  const each = report.map(
    (l) => `${l.request.split('?')[0]} ×${l.loops}: ${l.answers} answers ${JSON.stringify(l.statuses)}, p50 ${l.ms.p50} ms`,
  );
  input.log(`health: alone ${line(idleMs)}; under load ${line(loadedMs)} (statuses ${JSON.stringify(healthStatuses)}); ${each.join('; ')}`);
  return { benchmark: benchmark.def.key, seconds: input.seconds, idleMs, loadedMs, healthStatuses, loops: report };
}
