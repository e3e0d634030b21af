/**
 * The harness's PostgreSQL: the server's embedded cluster under the data directory, tuned and migrated; what the server asks of
 * it for a request, from PostgreSQL's statement log (jsonlog, on only while requests are captured); EXPLAIN (ANALYZE, BUFFERS).
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { buildConfig, connectDatabase, createLogger, migrate, openDatabase, type DatabaseHandle } from '@benchmarks/server';
import { parseJson, sleep, statement } from './measure.ts';
import type { Scenario } from './scenarios.ts';
import type { ServerProcess } from './server.ts';

/** Applied with ALTER SYSTEM (the cluster restarts once to take them); the rest are the defaults. */
export const POSTGRES_SETTINGS: Record<string, string> = Object.fromEntries(
  'shared_buffers=1GB effective_cache_size=8GB maintenance_work_mem=1GB max_wal_size=8GB checkpoint_timeout=30min random_page_cost=1.1'
    .split(' ')
    .map((s) => s.split('=')),
);
/** The statement log: JSON lines in <cluster>/log/bench.json, written only while `log_statement` is on. */
const LOG_SETTINGS = { logging_collector: 'on', log_destination: 'jsonlog', log_filename: 'bench', log_rotation_size: '0' };

export type BenchDatabase = Awaited<ReturnType<typeof startBenchDatabase>>;

async function clientFor(url: string, database?: string): Promise<pg.Client> {
  const u = new URL(url);
  if (database) u.pathname = `/${database}`;
  const client = new pg.Client({ connectionString: u.toString(), application_name: 'bench-harness' });
  await client.connect();
  return client;
}
const migrateSchema = async (url: string) => {
  const orm = await connectDatabase(url);
  await migrate(orm).finally(() => orm.close(true));
};

/** Starts (creating on first use) the embedded cluster under `dataDir`, tuned and migrated. */
export async function startBenchDatabase(dataDir: string, log: (message: string) => void) {
  const open = () => openDatabase(buildConfig({ dataDir }), createLogger('warn'));
  let handle: DatabaseHandle = await open();
  const admin = await clientFor(handle.url, 'postgres');
  let changed = false;
  for (const [name, value] of Object.entries({ ...POSTGRES_SETTINGS, ...LOG_SETTINGS })) {
    if ((await admin.query<{ v: string }>('select current_setting($1) as v', [name])).rows[0]!.v === value) continue;
    await admin.query(`alter system set ${name} = '${value}'`);
    changed = true;
  }
  await admin.end();
  if (changed) {
    log('applying PostgreSQL settings (restart)');
    await handle.embedded!.stop();
    handle = await open();
  }
  const u = new URL(handle.url);
  const database = u.pathname.slice(1);
  const probe = await clientFor(handle.url);
  const version = (await probe.query<{ v: string }>('select version() as v')).rows[0]!.v;
  await probe.end();
  await migrateSchema(handle.url);
  const target = { host: u.hostname, port: Number(u.port), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) };
  return {
    url: handle.url,
    ...target,
    database,
    version,
    client: () => clientFor(handle.url),
    postmasterPid: () => Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]),
    async recreate() {
      const c = await clientFor(handle.url, 'postgres');
      try {
        await c.query(`drop database if exists ${database} with (force)`);
        await c.query(`create database ${database}`);
      } finally {
        await c.end();
      }
      await migrateSchema(handle.url);
    },
    stop: () => handle.embedded!.stop(),
  };
}

export const sqlLiteral = (value: string) => `'${value.replaceAll("'", "''")}'`;

/** A statement's parameters written in as literals (`Parameters: $1 = '…', $2 = NULL`). */
function withParameters(text: string, detail = ''): string {
  const values = new Map([...detail.matchAll(/\$(\d+) = (NULL|'(?:[^']|'')*')/g)].map((m) => [m[1]!, m[2] === 'NULL' ? 'null' : m[2]!]));
  return statement(text).replace(/\$(\d+)\b/g, (all, n: string) => values.get(n) ?? all);
}

/**
 * The connections of the server that do a request's work: its pool, and the export's own (the others
 * named `benchmarks-server <purpose>` are background work: metric values, the change listener…).
 */
const REQUEST_CONNECTIONS = new Set(['benchmarks-server', 'benchmarks-server export']);

export type StatementLog = ReturnType<typeof statementLog>;
/**
 * The statements the server's request connections sent, from PostgreSQL's log, bound values written
 * in: `during(work)` turns the log on for `work`, whose `take()` answers those since the last take
 * (up to a mark the harness's own connection writes).
 */
export function statementLog(dataDir: string, client: pg.Client) {
  const dir = join(dataDir, 'postgres', 'log');
  const file = () => (existsSync(dir) ? readdirSync(dir).find((f) => f.endsWith('.json')) : undefined);
  let offset = file() ? statSync(join(dir, file()!)).size : 0;
  let marks = 0;
  const set = async (value: 'all' | 'none') => {
    await client.query(`alter system set log_statement = '${value}'`);
    await client.query('select pg_reload_conf()');
    await sleep(300); // every backend reads the new value at its next command
  };
  const take = async (): Promise<string[]> => {
    const mark = `bench-mark-${process.pid}-${++marks}`;
    await client.query(`select '${mark}'`);
    for (const until = Date.now() + 15_000; Date.now() < until; await sleep(20)) {
      const name = file();
      if (!name) continue;
      const fd = openSync(join(dir, name), 'r');
      const buffer = Buffer.alloc(Math.max(0, statSync(join(dir, name)).size - offset));
      readSync(fd, buffer, 0, buffer.length, offset);
      closeSync(fd);
      const out: string[] = [];
      for (let at = 0, nl = buffer.indexOf(10); nl >= 0; at = nl + 1, nl = buffer.indexOf(10, at)) {
        const e = JSON.parse(buffer.toString('utf8', at, nl)) as { application_name?: string; message?: string; detail?: string };
        if (e.application_name === 'bench-harness' && e.message?.includes(mark)) {
          offset += nl + 1;
          return out;
        }
        const m = /^(?:statement|execute [^:]+): ([\s\S]*)$/.exec(e.message ?? '');
        if (m && REQUEST_CONNECTIONS.has(e.application_name ?? '')) out.push(withParameters(m[1]!, e.detail));
      }
    }
    throw new Error(`the statement log (${dir}) did not show the mark ${mark}`);
  };
  return {
    async during<T>(work: (take: () => Promise<string[]>) => Promise<T>): Promise<T> {
      await set('all');
      try {
        await take();
        return await work(take);
      } finally {
        await set('none');
      }
    },
  };
}

/**
 * A list page: `… limit N offset M`, possibly inside the subquery `(…) p` that the outputs wrap, or
 * the page of a sort walked in the metric values table: `(… limit N offset M) k join result r on
 * r.id = k.result_id order by …) p`.
 */
export const PAGE_STATEMENT =
  /\blimit '?\d+'? offset '?\d+'?(\s*\)\s*p|\) k join result r on r\.id = k\.result_id order by [^()]*\)\s*p)?\s*$/i;

/** What a statement does in a request, by its first matching pattern. */
const ROLES: [RegExp, string][] = [
  [/^\s*(begin|commit|rollback|savepoint|release|start transaction)\b/i, 'transaction'],
  [/^\s*select count\(\*\)/i, 'total'],
  [PAGE_STATEMENT, 'page'],
  [/\bfrom result r where r\.id = /i, 'result row'],
  [/^\s*(with \w+ as \(\s*)?insert\b|\binsert into result\b/i, 'insert'],
  [/\bxmin::text as version\b/i, 'embedded rows (until cached)'],
  [/\bapp_user\b/i, 'caller lookup'],
  [/\bvar_samp\(/i, 'compare'],
  [/\bjsonb_to_recordset\(.*\barray_agg\(|\barray_agg\(.*\bjsonb_to_recordset\(/is, 'compare order statistics'],
  [/^\s*declare\s+\w+\s+no\s+scroll\s+cursor\b/i, 'export cursor'],
  [/^\s*fetch\b/i, 'export fetch'],
  [/\border by r\.execution_datetime, r\.id\)\s*p\s*$/i, 'export rows'],
  [/\bresult_tag\b/i, 'tags of the page'],
];
export const statementRole = (sql: string) => ROLES.find(([re]) => re.test(sql))?.[1] ?? 'lookup';

export type CapturedRequest = Awaited<ReturnType<typeof captureScenario>>[number];
/** Statements that are not the request's work and cannot be explained. */
const UTILITY = /^\s*(set|reset|show|listen|unlisten|discard|deallocate|select pg_advisory)/i;
/**
 * Sends every variant of `scenario` once, alone, recording the statements it caused (executable SQL,
 * in order), its answer and what is wrong with it, and its wall time alone (ms).
 */
export function captureScenario(server: ServerProcess, log: StatementLog, scenario: Scenario) {
  return log.during(async (take) => {
    const out = [];
    for (const [variant, { request, consume, check }] of scenario.variants.entries()) {
      const started = performance.now();
      const res = await fetch(`${server.url}${request.path}`, { ...request, headers: { accept: 'application/json', ...request.headers } });
      const body = consume && res.ok ? await consume(res) : await res.text().then((text) => parseJson(text, text));
      const ms = performance.now() - started;
      const statements = (await take()).filter((s) => !UTILITY.test(s));
      out.push({ variant, status: res.status, body, statements, problem: check(res.status, body), ms });
    }
    return out;
  });
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of a scenario's requests, one per distinct set of statement shapes (3 at
 * most), written to `file`: each in a transaction that is rolled back (so inserts are measured but not
 * kept; an upload's own rows are removed first, so that its INSERT runs again). The first one's statements.
 */
export async function explainScenario(client: pg.Client, scenario: Scenario, requests: CapturedRequest[], file: string) {
  const shape = (sql: string) => sql.replace(/'(?:[^']|'')*'/g, '?').replace(/\b\d+(\.\d+)?\b/g, '?');
  const distinct = (plan: string, re: RegExp) => [...new Set([...plan.matchAll(re)].map((m) => m[1]!))];
  const [INDEX, SEQ_SCAN] = [/(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\S+)/g, /Seq Scan on (\S+)/g];
  const about =
    '# Every statement the server issued for the request,\n# in order, with EXPLAIN (ANALYZE, BUFFERS) (run inside a transaction that is rolled back).';
  const lines = [`# Scenario ${scenario.id}: ${scenario.title}`, `# ${scenario.endpoint}`, about, ''];
  const seen = new Set<string>();
  const summaries = [];
  for (const r of requests) {
    const key = r.statements.map(shape).join('\n');
    if (seen.has(key) || seen.size >= 3) continue;
    seen.add(key);
    const stored = (scenario.storedIds?.(r.body) ?? []).map(sqlLiteral);
    const statements = (scenario.explained?.(r.statements) ?? r.statements).filter((sql) => statementRole(sql) !== 'transaction');
    lines.push(`## Request: ${scenario.variants[r.variant]!.label}`, `## ${scenario.variants[r.variant]!.request.path}`, '');
    const summary = [];
    await client.query('begin');
    try {
      if (stored.length) await client.query(`delete from result where id in (${stored.join(', ')})`);
      for (const [i, sql] of statements.entries()) {
        await client.query('savepoint explain');
        const { plan, error } = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${sql}`).then(
          ({ rows }) => ({ plan: rows.map((row) => row['QUERY PLAN']).join('\n'), error: null }),
          (err: Error) => ({ plan: '', error: err.message }),
        );
        await client.query(error ? 'rollback to savepoint explain' : 'release savepoint explain');
        const role = statementRole(sql);
        const text = sql.length > 4000 ? `${sql.slice(0, 4000)} … (${sql.length} characters)` : sql;
        lines.push(`-- [${i + 1}/${statements.length}] ${role}`, `${text};`, '', error ? `ERROR: ${error}` : plan, '');
        const [time, indexes, seqScans] = [/Execution Time: ([\d.]+) ms/.exec(plan), distinct(plan, INDEX), distinct(plan, SEQ_SCAN)];
        summary.push({ role, executionMs: time ? Number(time[1]) : null, indexes, seqScans, error });
      }
    } finally {
      await client.query('rollback');
    }
    summaries.push(summary);
  }
  writeFileSync(file, lines.join('\n'));
  return summaries[0] ?? [];
}
