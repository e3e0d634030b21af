/**
 * What a page costs deep into a list, by page number (an offset) and by cursor (a keyset condition):
 * an embedded PostgreSQL in a temporary directory, `--results` results (default 200,000) over 4
 * benchmarks, one of which (half the results) has a metric index on `result.score`; a real server
 * in this process (page depth unlimited, so that page numbers can be compared at any depth); then,
 * for three lists, the time of GET page 1, 2, 100, 1,000 and the last page of 100 results, by number
 * and by cursor (the cursor of page P is the next_cursor of page P − 1, asked once beforehand; totals
 * are not cached, so every page by number counts the list, as a first page of a walk does):
 *
 * - `GET /results` (the default order, `execution_datetime, id`: an index walk);
 * - `GET /results?benchmark_id=B&sort_by=-json.result.score` (the benchmark's indexed metric);
 * - `GET /results?sort_by=-json.result.score` (a JSON path no index serves: every page sorts).
 *
 * Medians of `--runs` requests each (default 5), over HTTP on 127.0.0.1, after one warm-up.
 *
 *   node --import ./scripts/dev/register.js bench/deep-pages.ts [--results 200000] [--runs 5]
 *
 * Figures in docs/performance.md ("Deep pages").
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startIssuer } from '@benchmarks/demo/issuer';
import { startEmbeddedPostgres } from '../packages/server/src/db/embedded.ts';
import { connect, migrate } from '../packages/server/src/db/orm.ts';
import { buildConfig } from '../packages/server/src/config.ts';
import { startServer } from '../packages/server/src/server.ts';
import { seedSyntheticResults } from './database.ts';

const { values: args } = parseArgs({
  options: { results: { type: 'string', default: '200000' }, runs: { type: 'string', default: '5' } },
});
const RESULTS = Number(args.results);
const RUNS = Number(args.runs);
const PER_PAGE = 100;
const BENCHMARKS = 4;
const log = (m: string) => process.stderr.write(`${m}\n`);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function seed(c: pg.Client): Promise<string> {
  const schema = {
    type: 'object',
    properties: { result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true } } } },
  };
  // Half the results are of the first benchmark; scores with ties; executions a second apart.
  const { benchmarks } = await seedSyntheticResults(c, {
    results: RESULTS,
    schemas: Array.from({ length: BENCHMARKS }, (_, i) => (i === 0 ? schema : {})),
    image: (i) => `ghcr.io/bench/deep${i}`,
    benchmark: 'case when g % 2 = 0 then ids[1] else ids[2 + g % 3] end',
    json: "jsonb_build_object('result', jsonb_build_object('score', (g::bigint * 7919) % 100000 / 10.0), 'pad', md5(g::text))",
    executed: "timestamptz '2024-01-01Z' + make_interval(secs => g)",
  });
  log(`seeded ${RESULTS} results`);
  return benchmarks[0]!;
}

interface Row {
  list: string;
  position: string;
  byPage: number;
  byCursor: number | null;
}

async function main() {
  const dir = await mkdtemp(join(tmpdir(), 'bench-deep-pages-'));
  await chmod(dir, 0o755);
  const db = await startEmbeddedPostgres(dir);
  const issuer = await startIssuer();
  const client = new pg.Client({ connectionString: db.url, application_name: 'bench-deep-pages' });
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  try {
    const orm = await connect(db.url);
    await migrate(orm);
    await orm.close(true);
    await client.connect();
    const version = (await client.query<{ v: string }>("select current_setting('server_version') as v")).rows[0]!.v;
    const metric = await seed(client);
    server = await startServer(
      buildConfig({
        host: '127.0.0.1',
        port: '0',
        databaseUrl: db.url,
        oidcIssuer: issuer.issuer,
        logLevel: 'silent',
        rateLimit: '0',
        readRateLimit: '0',
        maxPageDepth: '100000000',
        statementTimeout: '0',
        totalsCacheSeconds: '0',
      }),
    );
    await server.context.metrics.reconcile(server.context.orm.em.fork());
    await server.context.metrics.idle();
    const api = `${server.url}/api/v1/results`;
    const get = async (query: Record<string, string | number>) => {
      const started = performance.now();
      const res = await fetch(`${api}?${new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]))}`);
      const body = (await res.json()) as { items: unknown[]; next_cursor: string | null; total: number };
      if (res.status !== 200) throw new Error(`${res.status} ${JSON.stringify(body)}`);
      return { ms: performance.now() - started, body };
    };
    const time = async (query: Record<string, string | number>) => {
      await get(query);
      const times: number[] = [];
      for (let i = 0; i < RUNS; i++) times.push((await get(query)).ms);
      return median(times);
    };
    const lists: [string, Record<string, string | number>][] = [
      ['GET /results (default order)', {}],
      ['benchmark_id=B, sort_by=-json.result.score (indexed metric)', { benchmark_id: metric, sort_by: '-json.result.score' }],
      ['sort_by=-json.result.score (no index)', { sort_by: '-json.result.score' }],
    ];
    const rows: Row[] = [];
    for (const [label, query] of lists) {
      const base = { ...query, per_page: PER_PAGE };
      const { total } = (await get(base)).body;
      const last = Math.ceil(total / PER_PAGE);
      for (const page of new Set([1, 2, 100, 1000, last].filter((p) => p <= last))) {
        const byPage = await time({ ...base, page });
        // The cursor that leads to this page: the next_cursor of the page before. A walk's first
        // page is always by number (and counts the list); later ones count nothing.
        const cursor = page === 1 ? undefined : (await get({ ...base, page: page - 1 })).body.next_cursor!;
        const byCursor = cursor ? await time({ ...base, cursor }) : null;
        rows.push({ list: label, position: page === last ? `${page} (last)` : String(page), byPage, byCursor });
        log(`${label} page ${page}: ${byPage.toFixed(1)} ms by number, ${byCursor?.toFixed(1) ?? '-'} ms by cursor`);
      }
    }
    const cpu = (await import('node:os')).cpus();
    console.log(
      `\n${RESULTS.toLocaleString('en')} results, ${PER_PAGE} per page, PostgreSQL ${version}, ${cpu.length} × ${cpu[0]?.model ?? 'CPU'}; median of ${RUNS} requests\n`,
    );
    console.log('| list | page | by page number | by cursor |');
    console.log('|---|---|---|---|');
    for (const r of rows) {
      console.log(
        `| ${r.list} | ${r.position} | ${r.byPage.toFixed(1)} ms | ${r.byCursor === null ? '(first page)' : `${r.byCursor.toFixed(1)} ms`} |`,
      );
    }
  } finally {
    await server?.close().catch(() => {});
    await client.end().catch(() => {});
    await issuer.close().catch(() => {});
    await db.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
