/**
 * Loads the generated data set into PostgreSQL, fast and not through the API:
 *
 * 1. users and the catalogue with ordinary INSERTs (a few hundred rows);
 * 2. results, their tags and claims written as CSV chunks of 100,000 results into the data directory
 *    (the embedded cluster's machine), each loaded with a server-side `COPY … FROM '<file>' (FORMAT
 *    csv)` while the next chunk is generated (two cores: Node generates, PostgreSQL copies);
 * 3. secondary indexes are dropped before and rebuilt after (as pg_restore does), foreign-key triggers
 *    are skipped during the load (session_replication_role = replica) and the references are checked
 *    afterwards with one query per foreign key;
 * 4. VACUUM (ANALYZE) and a CHECKPOINT, so that the measurements start from a settled database.
 */
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { DATA_ISSUER, generateResults, type Catalogue, type GenerateOptions } from './generate.ts';

const TABLES = ['app_user', 'benchmark', 'site', 'flavor', 'tag', 'result', 'result_tag', 'claim'] as const;
export type LoadCounts = Record<(typeof TABLES)[number] | 'result_hidden' | 'result_deleted', number>;

/** A benchmark created through the API (bench/generate.ts, `createdBy`), and what the server built for it. */
export interface CreatedBenchmark {
  key: string;
  id: string;
  createdBy: 'user' | 'admin';
  status: string;
  /** Its metric paths (values complete) right after it was created: chosen by the server in the creating transaction. */
  metricPaths: number;
}

export type LoadReport = Awaited<ReturnType<typeof loadData>>;

const CHUNK = 100_000;
const COLUMNS = {
  result: 'id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden',
  result_tag: 'result_id, tag_id',
  claim: 'id, resource_type, resource_id, message, status, upload_datetime, uploader_iss, uploader_sub',
};
/** The references the skipped foreign-key triggers would have checked, and that hidden results have a reason: rows that fail. */
const CHECKS = {
  result_without_flavor_of_its_site:
    'result r where not exists (select 1 from flavor f where f.id = r.flavor_id and f.site_id = r.site_id)',
  result_without_benchmark: 'result r where not exists (select 1 from benchmark b where b.id = r.benchmark_id)',
  result_without_uploader: 'result r where not exists (select 1 from app_user u where u.iss = r.uploader_iss and u.sub = r.uploader_sub)',
  result_tag_orphans:
    'result_tag rt where not exists (select 1 from result r where r.id = rt.result_id) or not exists (select 1 from tag t where t.id = rt.tag_id)',
  claim_orphans: 'claim c where not exists (select 1 from result r where r.id = c.resource_id)',
  hidden_without_reason: 'result r where r.hidden and not r.deleted and not exists (select 1 from claim c where c.resource_id = r.id)',
};

const csvText = (s: string) => `"${s.replaceAll('"', '""')}"`;
const bool = (b: boolean) => (b ? 't' : 'f');

/** Multi-row INSERTs of `rows` (values in `columns` order) with bound parameters. */
async function insertRows(client: pg.Client, table: string, columns: string, rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const batch = rows.slice(i, i + 1000);
    const tuples = batch.map((row, r) => `(${row.map((_, c) => `$${r * row.length + c + 1}`).join(', ')})`);
    await client.query(`insert into ${table} (${columns}) values ${tuples.join(', ')}`, batch.flat());
  }
}

async function insertCatalogue(client: pg.Client, c: Catalogue): Promise<void> {
  const users = c.users.map((u) => [u.iss, u.sub, u.email, u.registration_datetime, u.terms_version]);
  await insertRows(client, 'app_user', 'iss, sub, email, registration_datetime, terms_version', users);
  const reviewed = 'status, upload_datetime, uploader_iss, uploader_sub';
  const rv = (r: { status: string; upload_datetime: Date; uploader_iss: string; uploader_sub: string }) => [
    r.status,
    r.upload_datetime,
    r.uploader_iss,
    r.uploader_sub,
  ];
  // Those created through the API before the load (bench/harness.ts) are there already.
  const benchmarks = c.benchmarks.filter((b) => !b.createdBy);
  const benchmarkRows = benchmarks.map((b) => [
    b.id,
    b.container_image,
    b.container_tag,
    JSON.stringify(b.json_schema),
    b.description,
    b.url,
    ...rv(b),
  ]);
  await insertRows(client, 'benchmark', `id, container_image, container_tag, json_schema, description, url, ${reviewed}`, benchmarkRows);
  await insertRows(
    client,
    'site',
    `id, name, address, description, ${reviewed}`,
    c.sites.map((s) => [s.id, s.name, s.address, s.description, ...rv(s)]),
  );
  await insertRows(
    client,
    'flavor',
    `id, site_id, name, description, ${reviewed}`,
    c.flavors.map((f) => [f.id, f.site_id, f.name, f.description, ...rv(f)]),
  );
  await insertRows(
    client,
    'tag',
    `id, name, description, ${reviewed}`,
    c.tags.map((t) => [t.id, t.name, t.description, ...rv(t)]),
  );
}

/** A CSV file written through a buffer, in writes of about 4 MB. */
function csvFile(path: string) {
  const fd = openSync(path, 'w', 0o644);
  chmodSync(path, 0o644); // PostgreSQL runs as another user
  let parts: string[] = [];
  let size = 0;
  const file = {
    path,
    bytes: 0,
    write(text: string) {
      parts.push(text);
      size += text.length;
      if (size > 4_000_000) file.flush();
    },
    flush() {
      const chunk = parts.join('');
      file.bytes += Buffer.byteLength(chunk);
      writeSync(fd, chunk);
      parts = [];
      size = 0;
    },
    close() {
      file.flush();
      closeSync(fd);
    },
  };
  return file;
}

export async function countRows(client: pg.Client): Promise<LoadCounts> {
  const counts: Record<string, number> = {};
  for (const t of TABLES) counts[t] = Number((await client.query<{ n: string }>(`select count(*) as n from ${t}`)).rows[0]!.n);
  const { rows } = await client.query<{ h: string; d: string }>(
    'select count(*) filter (where hidden) as h, count(*) filter (where deleted) as d from result',
  );
  return { ...counts, result_hidden: Number(rows[0]!.h), result_deleted: Number(rows[0]!.d) } as LoadCounts;
}

export async function loadData(
  client: pg.Client,
  catalogue: Catalogue,
  options: GenerateOptions,
  workDir: string,
  log: (message: string) => void,
) {
  const started = Date.now();
  // Users registered through the API before the load (bench/harness.ts) are there already.
  const expected: LoadCounts = {
    app_user: catalogue.users.length + (await countRows(client)).app_user,
    benchmark: catalogue.benchmarks.length,
    site: catalogue.sites.length,
    flavor: catalogue.flavors.length,
    tag: catalogue.tags.length,
    result: 0,
    result_hidden: 0,
    result_deleted: 0,
    result_tag: 0,
    claim: 0,
  };
  await insertCatalogue(client, catalogue);
  const csvDir = join(workDir, 'csv');
  mkdirSync(csvDir, { recursive: true });
  chmodSync(csvDir, 0o755);

  // The load skips the triggers that write the results' metric values: what the server recorded of
  // the benchmarks created through it before the load (their paths, complete since they had no
  // results) is forgotten, so that their values are filled in afterwards as the others' are.
  await client.query('delete from metric_benchmark');
  await client.query('delete from metric_path');
  await client.query('set session_replication_role = replica');
  await client.query('set synchronous_commit = off');
  await client.query(`set maintenance_work_mem = '1GB'`);
  const { rows: indexes } = await client.query<{ name: string; definition: string }>(
    `select i.indexname as name, i.indexdef as definition from pg_indexes i
     where i.schemaname = current_schema() and i.tablename in ('result', 'result_tag', 'claim')
       and not exists (select 1 from pg_constraint c where c.conname = i.indexname)
     order by i.indexname`,
  );
  for (const r of indexes) await client.query(`drop index ${r.name}`);

  let csvBytes = 0;
  let jsonBytes = 0;
  // COPYs run one after another on the client, in the background of the generation of the next chunk.
  const copies: Promise<void>[] = [];
  let failure: unknown;
  const copy = (table: keyof typeof COLUMNS, file: ReturnType<typeof csvFile>) => {
    file.close();
    csvBytes += file.bytes;
    const last = (copies.at(-1) ?? Promise.resolve())
      .then(async () => {
        if (failure) return;
        await client.query(`copy ${table} (${COLUMNS[table]}) from '${file.path}' with (format csv)`);
        rmSync(file.path, { force: true });
      })
      .catch((err: unknown) => {
        failure ??= err;
      });
    copies.push(last);
  };
  let chunk = 0;
  let files: Record<keyof typeof COLUMNS, ReturnType<typeof csvFile>> | null = null;
  const closeChunk = async () => {
    if (!files) return;
    for (const table of Object.keys(COLUMNS) as (keyof typeof COLUMNS)[]) copy(table, files[table]);
    files = null;
    // Let PostgreSQL copy this chunk while the next one is generated, but keep at most two in flight.
    if (copies.length > 6) await Promise.all(copies.slice(0, copies.length - 3));
    if (failure) throw failure;
  };

  const at = (d: Date) => d.toISOString();
  for (const r of generateResults(catalogue, options)) {
    const json = JSON.stringify(r.json);
    jsonBytes += json.length;
    expected.result++;
    if (r.hidden) expected.result_hidden++;
    if (r.deleted) expected.result_deleted++;
    expected.result_tag += r.tag_ids.length;
    if (r.claim) expected.claim++;
    const name = (table: string) => join(csvDir, `${table}-${String(chunk).padStart(3, '0')}.csv`);
    files ??= { result: csvFile(name('result')), result_tag: csvFile(name('result_tag')), claim: csvFile(name('claim')) };
    files.result.write(
      `${r.id},${r.benchmark.id},${r.flavor.site_id},${r.flavor.id},${csvText(json)},${at(r.execution_datetime)},${at(r.upload_datetime)},${DATA_ISSUER},${r.uploader_sub},${bool(r.deleted)},${bool(r.hidden)}\n`,
    );
    for (const tag of r.tag_ids) files.result_tag.write(`${r.id},${tag}\n`);
    const c = r.claim;
    if (c)
      files.claim.write(
        `${c.id},result,${r.id},${csvText(c.message)},${c.status},${at(c.upload_datetime)},${DATA_ISSUER},${c.uploader_sub}\n`,
      );
    if (expected.result % CHUNK === 0) {
      chunk++;
      await closeChunk();
      log(`generated ${expected.result.toLocaleString('en-US')} of ${options.results.toLocaleString('en-US')} results`);
    }
  }
  await closeChunk();
  await Promise.all(copies);
  if (failure) throw failure;
  const loadedAt = Date.now();
  log(`rows loaded in ${((loadedAt - started) / 1000).toFixed(1)} s; building ${indexes.length} indexes`);

  for (const index of indexes) await client.query(index.definition);
  await client.query('set session_replication_role = origin');
  const indexedAt = Date.now();
  const checks: Record<string, number> = {};
  for (const [name, from] of Object.entries(CHECKS))
    checks[name] = Number((await client.query<{ n: string }>(`select count(*) as n from ${from}`)).rows[0]!.n);
  const checkedAt = Date.now();
  for (const table of TABLES) await client.query(`vacuum (analyze) ${table}`);
  await client.query('checkpoint');
  const vacuumedAt = Date.now();

  const size = (
    await client.query<{ t: string; i: string; d: string }>(
      `select pg_table_size('result') as t, pg_indexes_size('result') as i, pg_database_size(current_database()) as d`,
    )
  ).rows[0]!;
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
