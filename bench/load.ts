/**
 * Loads the generated data set with SQL: the catalogue by INSERT; results, tags and claims by server-side COPY of CSV files of
 * 50,000 results while the next is generated; indexes rebuilt and foreign keys checked after; then VACUUM (ANALYZE), CHECKPOINT.
 */
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { table } from './catalogue.ts';
import { DATA_ISSUER, generateResults, type Catalogue, type GenerateOptions } from './generate.ts';

const TABLES = ['app_user', 'benchmark', 'site', 'flavor', 'tag', 'result', 'result_tag', 'claim'] as const;
export type LoadCounts = Record<(typeof TABLES)[number] | 'result_hidden' | 'result_deleted', number>;
export type LoadReport = Awaited<ReturnType<typeof loadData>>;
/** A benchmark created through the API (bench/generate.ts, `createdBy`), and its metric paths (values complete) right after. */
export type CreatedBenchmark = { key: string; id: string; createdBy: 'user' | 'admin'; status: string; metricPaths: number };

const CHUNK = 50_000;
export const RESULT_COLUMNS =
  'id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden';
/** The columns of a reviewed row of the catalogue. */
export const REVIEWED = 'status, upload_datetime, uploader_iss, uploader_sub';
const COPIED = {
  result: RESULT_COLUMNS,
  result_tag: 'result_id, tag_id',
  claim: 'id, resource_type, resource_id, message, status, upload_datetime, uploader_iss, uploader_sub',
};
/** The references the skipped foreign-key triggers would have checked, and that hidden results have a reason: rows that fail. */
const CHECKS = table(`
result_without_flavor_of_its_site|result r where not exists (select 1 from flavor f where f.id = r.flavor_id and f.site_id = r.site_id)
result_without_benchmark|result r where not exists (select 1 from benchmark b where b.id = r.benchmark_id)
result_without_uploader|result r where not exists (select 1 from app_user u where u.iss = r.uploader_iss and u.sub = r.uploader_sub)
result_tag_orphans|result_tag rt where not exists (select 1 from result r where r.id = rt.result_id) or not exists (select 1 from tag t where t.id = rt.tag_id)
claim_orphans|claim c where not exists (select 1 from result r where r.id = c.resource_id)
hidden_without_reason|result r where r.hidden and not r.deleted and not exists (select 1 from claim c where c.resource_id = r.id)`);
export const count = async (client: pg.Client, from: string, params: unknown[] = []) =>
  Number((await client.query<{ n: string }>(`select count(*) as n from ${from}`, params)).rows[0]!.n);

/** Users and the catalogue, with multi-row INSERTs of bound parameters (the rows' keys are the columns). */
async function insertCatalogue(client: pg.Client, c: Catalogue): Promise<void> {
  const tables: [string, string, Record<string, unknown>[]][] = [
    ['app_user', 'iss, sub, email, registration_datetime, terms_version', c.users],
    // Those created through the API before the load (bench/harness.ts) are there already.
    [
      'benchmark',
      `id, container_image, container_tag, json_schema, description, url, ${REVIEWED}`,
      c.benchmarks.filter((b) => !b.createdBy),
    ],
    ['site', `id, name, address, description, ${REVIEWED}`, c.sites],
    ['flavor', `id, site_id, name, description, ${REVIEWED}`, c.flavors],
    ['tag', `id, name, description, ${REVIEWED}`, c.tags],
  ];
  for (const [table, columns, rows] of tables)
    for (let i = 0; i < rows.length; i += 1000) {
      const value = (row: Record<string, unknown>, k: string) => (k === 'json_schema' ? JSON.stringify(row[k]) : row[k]);
      const batch = rows.slice(i, i + 1000).map((row) => columns.split(', ').map((k) => value(row, k)));
      const tuples = batch.map((row, r) => `(${row.map((_, k) => `$${r * row.length + k + 1}`).join(', ')})`);
      await client.query(`insert into ${table} (${columns}) values ${tuples.join(', ')}`, batch.flat());
    }
}

export async function countRows(client: pg.Client): Promise<LoadCounts> {
  const counts: Record<string, number> = {};
  for (const t of TABLES) counts[t] = await count(client, t);
  const [result_hidden, result_deleted] = [await count(client, 'result where hidden'), await count(client, 'result where deleted')];
  return { ...counts, result_hidden, result_deleted } as LoadCounts;
}

export async function loadData(client: pg.Client, catalogue: Catalogue, options: GenerateOptions, dir: string, log: (m: string) => void) {
  const started = Date.now();
  // Users registered through the API before the load (bench/harness.ts) are there already.
  const [c, app_user] = [catalogue, catalogue.users.length + (await countRows(client)).app_user];
  const catalogued = { app_user, benchmark: c.benchmarks.length, site: c.sites.length, flavor: c.flavors.length, tag: c.tags.length };
  const expected: LoadCounts = { ...catalogued, result: 0, result_hidden: 0, result_deleted: 0, result_tag: 0, claim: 0 };
  await insertCatalogue(client, catalogue);
  const csvDir = join(dir, 'csv');
  mkdirSync(csvDir, { recursive: true });
  chmodSync(csvDir, 0o755);
  // The load skips the triggers that write metric values: what the server recorded of the benchmarks created through it
  // (their paths, complete with no results) is forgotten, so that their values are filled in afterwards as the others' are.
  await client.query('delete from metric_benchmark');
  await client.query('delete from metric_path');
  await client.query(`set session_replication_role = replica; set synchronous_commit = off; set maintenance_work_mem = '1GB'`);
  const { rows: indexes } = await client.query<{ name: string; definition: string }>(
    `select i.indexname as name, i.indexdef as definition from pg_indexes i
     where i.schemaname = current_schema() and i.tablename in ('result', 'result_tag', 'claim')
       and not exists (select 1 from pg_constraint c where c.conname = i.indexname)
     order by i.indexname`,
  );
  for (const r of indexes) await client.query(`drop index ${r.name}`);

  let [csvBytes, jsonBytes, chunk] = [0, 0, 0];
  let lines: Record<keyof typeof COPIED, string[]> = { result: [], result_tag: [], claim: [] };
  // The COPYs of a chunk run one after another, while the next chunk is generated; one chunk waits at most.
  let copying: Promise<void> = Promise.resolve();
  const flush = async () => {
    const files = Object.entries(lines).map(([table, text]) => {
      const path = join(csvDir, `${table}-${String(chunk).padStart(3, '0')}.csv`);
      const body = text.join('');
      writeFileSync(path, body);
      chmodSync(path, 0o644); // PostgreSQL runs as another user
      csvBytes += Buffer.byteLength(body);
      return { path, copy: `copy ${table} (${COPIED[table as keyof typeof COPIED]}) from '${path}' with (format csv)` };
    });
    [lines, chunk] = [{ result: [], result_tag: [], claim: [] }, chunk + 1];
    const previous = copying;
    copying = previous.then(async () => {
      for (const f of files) {
        await client.query(f.copy);
        rmSync(f.path, { force: true });
      }
    });
    copying.catch(() => {}); // awaited below and at the end
    await previous;
  };
  const csv = (s: string) => `"${s.replaceAll('"', '""')}"`;
  const bool = (b: boolean) => (b ? 't' : 'f');
  for (const r of generateResults(catalogue, options)) {
    const json = JSON.stringify(r.json);
    jsonBytes += json.length;
    expected.result++;
    if (r.hidden) expected.result_hidden++;
    if (r.deleted) expected.result_deleted++;
    expected.result_tag += r.tag_ids.length;
    const [executed, uploaded, iss, c] = [r.execution_datetime.toISOString(), r.upload_datetime.toISOString(), DATA_ISSUER, r.claim];
    const row = `${r.id},${r.benchmark.id},${r.flavor.site_id},${r.flavor.id},${csv(json)},${executed},${uploaded},${iss},${r.uploader_sub}`;
    lines.result.push(`${row},${bool(r.deleted)},${bool(r.hidden)}\n`);
    for (const tag of r.tag_ids) lines.result_tag.push(`${r.id},${tag}\n`);
    if (c) expected.claim++;
    if (c)
      lines.claim.push(
        `${c.id},result,${r.id},${csv(c.message)},${c.status},${c.upload_datetime.toISOString()},${iss},${c.uploader_sub}\n`,
      );
    if (expected.result % CHUNK === 0) await flush();
    const n = (v: number) => v.toLocaleString('en-US');
    if (expected.result % 100_000 === 0) log(`generated ${n(expected.result)} of ${n(options.results)} results`);
  }
  await flush();
  await copying;
  const loadedAt = Date.now();
  log(`rows loaded in ${((loadedAt - started) / 1000).toFixed(1)} s; building ${indexes.length} indexes`);
  for (const index of indexes) await client.query(index.definition);
  await client.query('set session_replication_role = origin');
  const indexedAt = Date.now();
  const checks: Record<string, number> = {};
  for (const [name, from] of CHECKS) checks[name] = await count(client, from);
  const checkedAt = Date.now();
  for (const table of TABLES) await client.query(`vacuum (analyze) ${table}`);
  await client.query('checkpoint');
  const vacuumedAt = Date.now();
  const sizes = `select pg_table_size('result') as t, pg_indexes_size('result') as i, pg_database_size(current_database()) as d`;
  const size = (await client.query<{ t: string; i: string; d: string }>(sizes)).rows[0]!;
  const mb = (v: string) => Math.round(Number(v) / 1048576);
  rmSync(csvDir, { recursive: true, force: true });
  return {
    method: 'copy-csv' as const,
    seconds: {
      generateAndCopy: (loadedAt - started) / 1000,
      indexes: (indexedAt - loadedAt) / 1000,
      vacuumAnalyze: (vacuumedAt - checkedAt) / 1000,
      total: (vacuumedAt - started) / 1000,
    },
    csvBytes,
    expected,
    loaded: await countRows(client),
    checks,
    sizes: { result_table_mb: mb(size.t), result_indexes_mb: mb(size.i), database_mb: mb(size.d) },
    meanJsonBytes: Math.round(jsonBytes / Math.max(1, expected.result)),
  };
}
