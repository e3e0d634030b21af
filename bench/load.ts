/**
 * Loads the generated data set into PostgreSQL, fast and not through the API:
 *
 * 1. users and the catalogue with ordinary INSERTs (a few hundred rows);
 * 2. results, their tags and claims written as CSV chunks of 100,000 results into the data
 *    directory (the embedded cluster's machine), each loaded with a server-side
 *    `COPY … FROM '<file>' (FORMAT csv)` while the next chunk is generated (two cores: Node
 *    generates, PostgreSQL copies);
 * 3. secondary indexes are dropped before and rebuilt after (as pg_restore does), foreign-key
 *    triggers are skipped during the load (session_replication_role = replica) and the references
 *    are checked afterwards with one query per foreign key;
 * 4. VACUUM (ANALYZE) and a CHECKPOINT, so that the measurements start from a settled database.
 */
import { chmodSync, closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { DATA_ISSUER, generateResults, type Catalogue, type GenerateOptions } from './generate.ts';

export interface LoadCounts {
  app_user: number;
  benchmark: number;
  site: number;
  flavor: number;
  tag: number;
  result: number;
  result_hidden: number;
  result_deleted: number;
  result_tag: number;
  claim: number;
}

/** A benchmark created through the API (bench/generate.ts, `createdBy`), and what the server built for it. */
export interface CreatedBenchmark {
  key: string;
  id: string;
  createdBy: 'user' | 'admin';
  status: string;
  /** Its metric paths (values complete) right after it was created: chosen by the server in the creating transaction. */
  metricPaths: number;
}

export interface LoadReport {
  method: 'copy-csv';
  seconds: { generateAndCopy: number; indexes: number; vacuumAnalyze: number; total: number };
  csvBytes: number;
  expected: LoadCounts;
  loaded: LoadCounts;
  checks: Record<string, number>;
  sizes: { result_table_mb: number; result_indexes_mb: number; database_mb: number };
  meanJsonBytes: number;
}

const CHUNK = 100_000;

const RESULT_COLUMNS = [
  'id',
  'benchmark_id',
  'site_id',
  'flavor_id',
  'json',
  'execution_datetime',
  'upload_datetime',
  'uploader_iss',
  'uploader_sub',
  'deleted',
  'hidden',
];
const TAG_COLUMNS = ['result_id', 'tag_id'];
const CLAIM_COLUMNS = ['id', 'resource_type', 'resource_id', 'message', 'status', 'upload_datetime', 'uploader_iss', 'uploader_sub'];

const csvText = (s: string) => `"${s.replaceAll('"', '""')}"`;
const bool = (b: boolean) => (b ? 't' : 'f');

/** Multi-row INSERT of `rows` (arrays of values in `columns` order) with bound parameters. */
async function insertRows(client: pg.Client, table: string, columns: string[], rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += 1000) {
    const batch = rows.slice(i, i + 1000);
    const tuples = batch.map((row, r) => `(${row.map((_, c) => `$${r * row.length + c + 1}`).join(', ')})`);
    await client.query(`insert into ${table} (${columns.join(', ')}) values ${tuples.join(', ')}`, batch.flat());
  }
}

async function insertCatalogue(client: pg.Client, c: Catalogue): Promise<void> {
  await insertRows(
    client,
    'app_user',
    ['iss', 'sub', 'email', 'registration_datetime', 'terms_version'],
    c.users.map((u) => [u.iss, u.sub, u.email, u.registration_datetime, u.terms_version]),
  );
  const reviewed = ['status', 'upload_datetime', 'uploader_iss', 'uploader_sub'];
  const rv = (r: { status: string; upload_datetime: Date; uploader_iss: string; uploader_sub: string }) => [
    r.status,
    r.upload_datetime,
    r.uploader_iss,
    r.uploader_sub,
  ];
  // Those created through the API before the load (bench/harness.ts) are there already.
  await insertRows(
    client,
    'benchmark',
    ['id', 'container_image', 'container_tag', 'json_schema', 'description', 'url', ...reviewed],
    c.benchmarks
      .filter((b) => !b.createdBy)
      .map((b) => [b.id, b.container_image, b.container_tag, JSON.stringify(b.json_schema), b.description, b.url, ...rv(b)]),
  );
  await insertRows(
    client,
    'site',
    ['id', 'name', 'address', 'description', ...reviewed],
    c.sites.map((s) => [s.id, s.name, s.address, s.description, ...rv(s)]),
  );
  await insertRows(
    client,
    'flavor',
    ['id', 'site_id', 'name', 'description', ...reviewed],
    c.flavors.map((f) => [f.id, f.site_id, f.name, f.description, ...rv(f)]),
  );
  await insertRows(
    client,
    'tag',
    ['id', 'name', 'description', ...reviewed],
    c.tags.map((t) => [t.id, t.name, t.description, ...rv(t)]),
  );
}

/** Appends text to a file through a buffer, flushing in 4 MB writes. */
class BufferedFile {
  private fd: number;
  private parts: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(readonly path: string) {
    this.fd = openSync(path, 'w', 0o644);
    chmodSync(path, 0o644);
  }
  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size > 4_000_000) this.flush();
  }
  flush(): void {
    if (!this.parts.length) return;
    const chunk = this.parts.join('');
    this.bytes += Buffer.byteLength(chunk);
    writeSync(this.fd, chunk);
    this.parts = [];
    this.size = 0;
  }
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

interface SecondaryIndex {
  name: string;
  definition: string;
}

async function dropSecondaryIndexes(client: pg.Client): Promise<SecondaryIndex[]> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select i.indexname as name, i.indexdef as definition from pg_indexes i
     where i.schemaname = current_schema() and i.tablename in ('result', 'result_tag', 'claim')
       and not exists (select 1 from pg_constraint c where c.conname = i.indexname)
     order by i.indexname`,
  );
  for (const r of rows) await client.query(`drop index ${r.name}`);
  return rows;
}

function emptyCounts(): LoadCounts {
  return { app_user: 0, benchmark: 0, site: 0, flavor: 0, tag: 0, result: 0, result_hidden: 0, result_deleted: 0, result_tag: 0, claim: 0 };
}

export async function countRows(client: pg.Client): Promise<LoadCounts> {
  const counts = emptyCounts();
  for (const table of ['app_user', 'benchmark', 'site', 'flavor', 'tag', 'result_tag', 'claim'] as const) {
    counts[table] = Number((await client.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]!.n);
  }
  const r = (
    await client.query<{ n: string; h: string; d: string }>(
      'select count(*) as n, count(*) filter (where hidden) as h, count(*) filter (where deleted) as d from result',
    )
  ).rows[0]!;
  counts.result = Number(r.n);
  counts.result_hidden = Number(r.h);
  counts.result_deleted = Number(r.d);
  return counts;
}

export async function loadData(
  client: pg.Client,
  catalogue: Catalogue,
  options: GenerateOptions,
  workDir: string,
  log: (message: string) => void,
): Promise<LoadReport> {
  const started = Date.now();
  const expected = emptyCounts();
  // Users registered through the API before the load (bench/harness.ts) are there already.
  expected.app_user = catalogue.users.length + (await countRows(client)).app_user;
  expected.benchmark = catalogue.benchmarks.length;
  expected.site = catalogue.sites.length;
  expected.flavor = catalogue.flavors.length;
  expected.tag = catalogue.tags.length;

  await insertCatalogue(client, catalogue);

  const csvDir = join(workDir, 'csv');
  mkdirSync(csvDir, { recursive: true });
  chmodSync(csvDir, 0o755);

  // The load skips the triggers that write the results' metric values: what the server recorded of
  // the benchmarks created through it before the load (their paths, complete since they had no
  // results) is forgotten, so that their values are filled in afterwards as the others' are.
  if ((await client.query("select to_regclass('metric_benchmark') is not null as present")).rows[0].present) {
    await client.query('delete from metric_benchmark');
    await client.query('delete from metric_path');
  }
  const replica = await client.query('set session_replication_role = replica').then(
    () => true,
    () => false,
  );
  await client.query('set synchronous_commit = off');
  await client.query(`set maintenance_work_mem = '1GB'`);
  const indexes = await dropSecondaryIndexes(client);

  let csvBytes = 0;
  let jsonBytes = 0;
  // COPYs run one after another on the client (chained, never two queries at once), in the
  // background of the generation of the next chunk.
  const copies: Promise<void>[] = [];
  let last: Promise<void> = Promise.resolve();
  let failure: unknown;
  const copy = (table: string, columns: string[], file: BufferedFile) => {
    file.close();
    csvBytes += file.bytes;
    last = last
      .then(async () => {
        if (failure) return;
        await client.query(`copy ${table} (${columns.join(', ')}) from '${file.path}' with (format csv)`);
        rmSync(file.path, { force: true });
      })
      .catch((err: unknown) => {
        failure ??= err;
      });
    copies.push(last);
  };

  let chunk = 0;
  let files: { result: BufferedFile; tags: BufferedFile; claims: BufferedFile } | null = null;
  const closeChunk = async () => {
    if (!files) return;
    copy('result', RESULT_COLUMNS, files.result);
    copy('result_tag', TAG_COLUMNS, files.tags);
    copy('claim', CLAIM_COLUMNS, files.claims);
    files = null;
    // Let PostgreSQL copy this chunk while the next one is generated, but keep at most two in flight.
    if (copies.length > 6) await Promise.all(copies.slice(0, copies.length - 3));
    if (failure) throw failure;
  };

  let i = 0;
  for (const r of generateResults(catalogue, options)) {
    const json = JSON.stringify(r.json);
    jsonBytes += json.length;
    expected.result++;
    if (r.hidden) expected.result_hidden++;
    if (r.deleted) expected.result_deleted++;
    expected.result_tag += r.tag_ids.length;
    if (r.claim) expected.claim++;
    if (!files) {
      const name = (kind: string) => join(csvDir, `${kind}-${String(chunk).padStart(3, '0')}.csv`);
      files = {
        result: new BufferedFile(name('result')),
        tags: new BufferedFile(name('result_tag')),
        claims: new BufferedFile(name('claim')),
      };
      chunk++;
    }
    const at = (d: Date) => d.toISOString();
    files.result.write(
      `${r.id},${r.benchmark.id},${r.flavor.site_id},${r.flavor.id},${csvText(json)},${at(r.execution_datetime)},${at(r.upload_datetime)},${DATA_ISSUER},${r.uploader_sub},${bool(r.deleted)},${bool(r.hidden)}\n`,
    );
    for (const tag of r.tag_ids) files.tags.write(`${r.id},${tag}\n`);
    const c = r.claim;
    if (c)
      files.claims.write(
        `${c.id},result,${r.id},${csvText(c.message)},${c.status},${at(c.upload_datetime)},${DATA_ISSUER},${c.uploader_sub}\n`,
      );
    if (++i % CHUNK === 0) await closeChunk();
    if (i % 100_000 === 0) log(`generated ${i.toLocaleString('en-US')} of ${options.results.toLocaleString('en-US')} results`);
  }
  await closeChunk();
  await Promise.all(copies);
  if (failure) throw failure;
  const loadedAt = Date.now();
  log(`rows loaded in ${((loadedAt - started) / 1000).toFixed(1)} s; building ${indexes.length} indexes`);

  for (const index of indexes) await client.query(index.definition);
  if (replica) await client.query('set session_replication_role = origin');
  const indexedAt = Date.now();

  // The references the skipped foreign-key triggers would have checked.
  const checks: Record<string, number> = {};
  const check = async (name: string, sql: string) => {
    checks[name] = Number((await client.query<{ n: string }>(sql)).rows[0]!.n);
  };
  await check(
    'result_without_flavor_of_its_site',
    'select count(*) as n from result r where not exists (select 1 from flavor f where f.id = r.flavor_id and f.site_id = r.site_id)',
  );
  await check(
    'result_without_benchmark',
    'select count(*) as n from result r where not exists (select 1 from benchmark b where b.id = r.benchmark_id)',
  );
  await check(
    'result_without_uploader',
    'select count(*) as n from result r where not exists (select 1 from app_user u where u.iss = r.uploader_iss and u.sub = r.uploader_sub)',
  );
  await check(
    'result_tag_orphans',
    'select count(*) as n from result_tag rt where not exists (select 1 from result r where r.id = rt.result_id) or not exists (select 1 from tag t where t.id = rt.tag_id)',
  );
  await check('claim_orphans', 'select count(*) as n from claim c where not exists (select 1 from result r where r.id = c.resource_id)');
  await check(
    'hidden_without_reason',
    'select count(*) as n from result r where r.hidden and not r.deleted and not exists (select 1 from claim c where c.resource_id = r.id)',
  );
  const checkedAt = Date.now();

  for (const table of ['app_user', 'benchmark', 'site', 'flavor', 'tag', 'result', 'result_tag', 'claim'])
    await client.query(`vacuum (analyze) ${table}`);
  await client.query('checkpoint');
  const vacuumedAt = Date.now();

  const loaded = await countRows(client);
  const size = (
    await client.query<{ t: string; i: string; d: string }>(
      `select pg_table_size('result') as t, pg_indexes_size('result') as i, pg_database_size(current_database()) as d`,
    )
  ).rows[0]!;
  const mb = (v: string) => Math.round(Number(v) / 1048576);
  try {
    rmSync(csvDir, { recursive: true, force: true });
  } catch {
    // best effort
  }
  return {
    method: 'copy-csv',
    seconds: {
      generateAndCopy: (loadedAt - started) / 1000,
      indexes: (indexedAt - loadedAt) / 1000,
      vacuumAnalyze: (vacuumedAt - checkedAt) / 1000,
      total: (vacuumedAt - started) / 1000,
    },
    csvBytes,
    expected,
    loaded,
    checks,
    sizes: { result_table_mb: mb(size.t), result_indexes_mb: mb(size.i), database_mb: mb(size.d) },
    meanJsonBytes: Math.round(jsonBytes / Math.max(1, expected.result)),
  };
}
