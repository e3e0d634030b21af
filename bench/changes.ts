/**
 * What GET /results:changes costs at scale: an embedded PostgreSQL in a temporary directory,
 * `--results` results (default 1,000,000) over 4 benchmarks, a quarter of them (250,000) of the
 * first one, spread over the table as uploads are (every 4th row), in `--series` flavors (default 10)
 * of equal length, each series with two steps; a real server in this process. Then:
 *
 * - cold: the answer computed (the remembered answers forgotten before each request), the median
 *   of `--runs` requests (default 5) after one warm-up, and the part of it spent reading (the
 *   statement alone) and segmenting (Node, all series);
 * - remembered: the same request answered from memory, median of 20;
 * - the longest time the event loop was blocked during the cold requests (perf_hooks).
 *
 *   node --import ./scripts/dev/register.js bench/changes.ts [--results 1000000] [--series 10] [--runs 5]
 *
 * Figures in docs/performance.md ("Changes over time").
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startIssuer } from '@benchmarks/demo/issuer';
import { startEmbeddedPostgres } from '../packages/server/src/db/embedded.ts';
import { connect, migrate } from '../packages/server/src/db/orm.ts';
import { buildConfig } from '../packages/server/src/config.ts';
import { startServer } from '../packages/server/src/server.ts';
import { readSeries, seriesChanges } from '../packages/server/src/services/compare/changes.ts';

const { values: args } = parseArgs({
  options: {
    results: { type: 'string', default: '1000000' },
    series: { type: 'string', default: '10' },
    runs: { type: 'string', default: '5' },
  },
});
const RESULTS = Number(args.results);
const SERIES = Number(args.series);
const RUNS = Number(args.runs);
const log = (m: string) => process.stderr.write(`${m}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The catalogue and the results; returns the first benchmark's id. */
async function seed(c: pg.Client): Promise<string> {
  const owner = ['https://bench.example', 'bench'];
  await c.query(
    "insert into app_user (iss, sub, email, registration_datetime, terms_version) values ($1, $2, 'bench@example.org', now(), '2024-01')",
    owner,
  );
  const site = randomUUID();
  await c.query(
    "insert into site (id, name, address, status, upload_datetime, uploader_iss, uploader_sub) values ($1, 'site', 'here', 'approved', now(), $2, $3)",
    [site, ...owner],
  );
  const flavors = Array.from({ length: SERIES }, () => randomUUID());
  for (const [i, id] of flavors.entries()) {
    await c.query(
      "insert into flavor (id, site_id, name, status, upload_datetime, uploader_iss, uploader_sub) values ($1, $2, $3, 'approved', now(), $4, $5)",
      [id, site, `flavor-${String(i).padStart(2, '0')}`, ...owner],
    );
  }
  const benchmarks = Array.from({ length: 4 }, () => randomUUID());
  for (const [i, id] of benchmarks.entries()) {
    await c.query(
      "insert into benchmark (id, container_image, container_tag, json_schema, status, upload_datetime, uploader_iss, uploader_sub) values ($1, $2, '1.0', '{}', 'approved', now(), $3, $4)",
      [id, `ghcr.io/bench/changes${i}`, ...owner],
    );
  }
  // Row g: benchmark 1 when g % 4 = 0, flavor (g / 4) % SERIES; executions a minute apart; the score
  // a level (100, 90 from 40 % of the series, 95 from 75 %) plus deterministic noise of about ±2.5.
  await c.query(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ($1::uuid[])[1 + g % 4], $2, ($3::uuid[])[1 + (g / 4) % $6::int],
       jsonb_build_object('result', jsonb_build_object('score',
         (case when g < $7::int * 0.4 then 100 when g < $7::int * 0.75 then 90 else 95 end) + ((g::bigint * 7919) % 1000) / 200.0),
         'pad', repeat(md5(g::text), 8)),
       timestamptz '2024-01-01Z' + make_interval(mins => g), now(), $4, $5, false, false
     from generate_series(0, $7::int - 1) g`,
    [benchmarks, site, flavors, ...owner, SERIES, RESULTS],
  );
  await c.query('vacuum analyze result');
  log(`seeded ${RESULTS} results`);
  return benchmarks[0]!;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'bench-changes-'));
  await chmod(dir, 0o755);
  const db = await startEmbeddedPostgres(dir);
  const issuer = await startIssuer();
  const client = new pg.Client({ connectionString: db.url, application_name: 'bench-changes' });
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const orm = await connect(db.url);
    await migrate(orm);
    await orm.close(true);
    await client.connect();
    const version = (await client.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
    const benchmark = await seed(client);
    server = await startServer(
      buildConfig({
        host: '127.0.0.1',
        port: '0',
        databaseUrl: db.url,
        oidcIssuer: issuer.issuer,
        logLevel: 'silent',
        rateLimit: '0',
        readRateLimit: '0',
        statementTimeout: '0',
        totalsCacheSeconds: '60',
      }),
    );
    const context = server.context;
    const query = { benchmark_id: benchmark, metric: 'json.result.score' };
    const url = `${server.url}/api/v1/results:changes?${new URLSearchParams(query)}`;
    const get = async () => {
      const started = performance.now();
      const res = await fetch(url);
      const body = (await res.json()) as { matched: number; groups: { n: number; changes: { index: number }[] }[] };
      if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - started, body };
    };
    const first = await get();
    log(`matched ${first.body.matched}; changes ${JSON.stringify(first.body.groups.map((g) => g.changes.map((c) => c.index)))}`);
    const blocked = monitorEventLoopDelay({ resolution: 1 });
    const cold: number[] = [];
    blocked.enable();
    for (let i = 0; i < RUNS; i++) {
      context.changes.invalidate();
      cold.push((await get()).ms);
    }
    blocked.disable();
    const remembered: number[] = [];
    for (let i = 0; i < 20; i++) remembered.push((await get()).ms);
    // The two parts of a cold answer, apart: the statement, and the segmentation of every series.
    const reading: number[] = [];
    const segmenting: number[] = [];
    const longest: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      let started = performance.now();
      const { series } = await readSeries(context.orm.em.fork(), { ...query, group_by: 'flavor' }, ['result', 'score']);
      reading.push(performance.now() - started);
      started = performance.now();
      let slowest = 0;
      for (const s of series) {
        const one = performance.now();
        seriesChanges(s, { maxPvalue: 0.001, minMagnitude: 0.02, minSize: 5, better: 'higher', after: null });
        slowest = Math.max(slowest, performance.now() - one);
      }
      segmenting.push(performance.now() - started);
      longest.push(slowest);
    }
    const cpu = cpus();
    const points = first.body.groups.reduce((sum, g) => sum + g.n, 0);
    console.log(
      `\n${RESULTS.toLocaleString('en')} results; one benchmark of ${points.toLocaleString('en')} in ${first.body.groups.length} series; ` +
        `PostgreSQL ${version}, ${cpu.length} × ${cpu[0]?.model ?? 'CPU'}; medians of ${RUNS} (remembered: 20)\n`,
    );
    console.log('| | ms |');
    console.log('|---|--:|');
    console.log(`| cold answer (HTTP, JSON) | ${median(cold).toFixed(0)} |`);
    console.log(`| of which the statement (readSeries) | ${median(reading).toFixed(0)} |`);
    console.log(`| of which the segmentation (all series) | ${median(segmenting).toFixed(0)} |`);
    console.log(`| longest series' segmentation | ${median(longest).toFixed(1)} |`);
    console.log(`| longest event-loop delay during cold answers | ${(blocked.max / 1e6).toFixed(0)} |`);
    console.log(`| remembered answer (HTTP, JSON) | ${median(remembered).toFixed(1)} |`);
  } finally {
    await server?.close().catch(() => {});
    await client.end().catch(() => {});
    await issuer.close().catch(() => {});
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
