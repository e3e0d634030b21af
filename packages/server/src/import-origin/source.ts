/**
 * The original service's database, read in one repeatable-read, read-only transaction (one snapshot),
 * each table through a cursor a batch at a time. Its naive timestamps are read in the time zone they
 * were written in (its server's) and handed on as text with their offset, microseconds included.
 */
import type pg from 'pg';
import { ownClient, redactUrl } from '../db/own-connection.ts';
import { ConfigurationError } from '../core/errors.ts';

export interface SourceUser {
  iss: string;
  sub: string;
  email: string | null;
  registration_datetime: string;
}

export interface SourceTag {
  id: string;
  name: string;
  description: string | null;
}

interface Uploaded {
  id: string;
  uploader_iss: string;
  uploader_sub: string;
  upload_datetime: string;
  status: string | null;
}

export interface SourceBenchmark extends Uploaded {
  docker_image: string;
  docker_tag: string;
  url: string | null;
  /** The `json` column's text as stored (it may hold what jsonb refuses). */
  json_schema: string | null;
  description: string | null;
}

export interface SourceSite extends Uploaded {
  name: string;
  address: string;
  description: string | null;
}

export interface SourceFlavor extends Uploaded {
  site_id: string;
  name: string;
  description: string | null;
}

/** A result with the claim its `_claim_report_id` links to, if any. */
export interface SourceResult extends Omit<Uploaded, 'status'> {
  execution_datetime: string;
  deleted: boolean;
  json: string;
  benchmark_id: string;
  flavor_id: string;
  site_id: string;
  claim_id: string | null;
  claim_type: string | null;
  claim_status: string | null;
  claim_message: string | null;
  claim_upload_datetime: string | null;
  claim_uploader_iss: string | null;
  claim_uploader_sub: string | null;
}

type Counted = 'users' | 'tags' | 'benchmarks' | 'sites' | 'flavors' | 'results' | 'result_tags' | 'claims' | 'submits';
export type SourceCounts = Record<Counted, number>;

/** The tables the import reads, as the original names them. */
const TABLES = ['user', 'tag', 'benchmark', 'site', 'flavor', 'result', 'result_tags', 'claim', 'submit'];

/** The statements the import runs, with the source's time zone as a quoted literal. */
function statements(tz: string) {
  const at = (column: string) => `(${column} at time zone ${tz})::text`;
  const uploaded = `id, uploader_iss, uploader_sub, ${at('upload_datetime')} as upload_datetime, status::text as status`;
  return {
    users: `select iss, sub, email, ${at('registration_datetime')} as registration_datetime from "user" order by iss, sub`,
    tags: 'select id, name, description from tag order by id',
    benchmarks: `select ${uploaded}, docker_image, docker_tag, url, json_schema::text as json_schema, description from benchmark order by id`,
    sites: `select ${uploaded}, name, address, description from site order by id`,
    flavors: `select ${uploaded}, site_id, name, description from flavor order by id`,
    results: `select r.id, r.uploader_iss, r.uploader_sub, ${at('r.upload_datetime')} as upload_datetime,
        ${at('r.execution_datetime')} as execution_datetime, r.deleted, r.json::text as json,
        r.benchmark_id, r.flavor_id, r.site_id, c.id as claim_id, c.resource_type as claim_type,
        c.status::text as claim_status, c.message as claim_message, ${at('c.upload_datetime')} as claim_upload_datetime,
        c.uploader_iss as claim_uploader_iss, c.uploader_sub as claim_uploader_sub
      from result r left join claim c on c.id = r._claim_report_id order by r.id`,
    unlinkedClaims: 'select c.id from claim c where not exists (select 1 from result r where r._claim_report_id = c.id) order by c.id',
    /** The earliest time the source can hold data from: its first registration (else now). */
    epoch: `select coalesce(min(registration_datetime) at time zone ${tz}, now())::text as epoch from "user"`,
    counts: `select (select count(*) from "user")::int as users, (select count(*) from tag)::int as tags,
        (select count(*) from benchmark)::int as benchmarks, (select count(*) from site)::int as sites,
        (select count(*) from flavor)::int as flavors, (select count(*) from result)::int as results,
        (select count(*) from result_tags)::int as result_tags, (select count(*) from claim)::int as claims,
        (select count(*) from submit)::int as submits`,
  };
}

type Statements = ReturnType<typeof statements>;
type Streamed = 'users' | 'tags' | 'benchmarks' | 'sites' | 'flavors' | 'results' | 'unlinkedClaims';

export class OriginSource {
  readonly #client: pg.Client;
  readonly #sql: Statements;
  #cursors = 0;

  private constructor(client: pg.Client, sql: Statements) {
    this.#client = client;
    this.#sql = sql;
  }

  /**
   * Connects, checks the time zone and that the database has the original service's tables and
   * columns, and opens the snapshot. Every problem is a ConfigurationError of one sentence.
   */
  static open(url: string, timezone: string): Promise<OriginSource> {
    return openImportClient(url, 'source', 10_000, async (client) => {
      await client.query("set time zone 'UTC'");
      await checkTimezone(client, timezone);
      const sql = statements(client.escapeLiteral(timezone));
      await checkSchema(client, url, sql);
      await client.query('begin isolation level repeatable read, read only');
      return new OriginSource(client, sql);
    });
  }

  async counts(): Promise<SourceCounts> {
    return (await this.#client.query<SourceCounts>(this.#sql.counts)).rows[0]!;
  }

  /** The earliest time of the source (its first registration), as timestamptz text. */
  async epoch(): Promise<string> {
    return (await this.#client.query<{ epoch: string }>(this.#sql.epoch)).rows[0]!.epoch;
  }

  users = (size: number) => this.#stream<SourceUser>('users', size);
  tags = (size: number) => this.#stream<SourceTag>('tags', size);
  benchmarks = (size: number) => this.#stream<SourceBenchmark>('benchmarks', size);
  sites = (size: number) => this.#stream<SourceSite>('sites', size);
  flavors = (size: number) => this.#stream<SourceFlavor>('flavors', size);
  results = (size: number) => this.#stream<SourceResult>('results', size);
  /** Claims no result links to (a later claim of the same result replaced the link): nothing to attach them to. */
  unlinkedClaims = (size: number) => this.#stream<{ id: string }>('unlinkedClaims', size);

  /** The tags of some results. */
  async tagsOf(resultIds: readonly string[]): Promise<{ result_id: string; tag_id: string }[]> {
    const { rows } = await this.#client.query<{ result_id: string; tag_id: string }>(
      'select result_id, tag_id from result_tags where result_id = any($1::uuid[]) order by result_id, tag_id',
      [resultIds],
    );
    return rows;
  }

  /** The rows of a statement, `size` at a time, from a cursor of the snapshot. */
  async *#stream<Row extends pg.QueryResultRow>(what: Streamed, size: number): AsyncGenerator<Row[]> {
    const cursor = `import_${what.toLowerCase()}_${++this.#cursors}`;
    await this.#client.query(`declare ${cursor} no scroll cursor for ${this.#sql[what]}`);
    try {
      for (;;) {
        const { rows } = await this.#client.query<Row>(`fetch forward ${size} from ${cursor}`);
        if (rows.length) yield rows;
        if (rows.length < size) return;
      }
    } finally {
      await this.#client.query(`close ${cursor}`).catch(() => {});
    }
  }

  /** Ends the snapshot (nothing was written) and the connection. */
  async close(): Promise<void> {
    await this.#client.query('rollback').catch(() => {});
    await this.#client.end().catch(() => {});
  }
}

/**
 * A connection of the import to its `which` database, set up by `setUp`: one clear error when it
 * cannot be reached, and closed again when `setUp` fails.
 */
export async function openImportClient<T>(
  url: string,
  which: 'source' | 'target',
  timeoutMs: number | undefined,
  setUp: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = ownClient('import-origin', { connectionString: url, connectionTimeoutMillis: timeoutMs });
  client.on('error', () => {}); // the next statement reports it
  try {
    await client.connect();
  } catch (err) {
    throw new ConfigurationError(`Cannot reach the ${which} database at ${redactUrl(url)}: ${(err as Error).message}`);
  }
  try {
    return await setUp(client);
  } catch (err) {
    await client.end().catch(() => {});
    throw err;
  }
}

async function checkTimezone(client: pg.Client, timezone: string): Promise<void> {
  try {
    await client.query('select now() at time zone $1', [timezone]);
  } catch (err) {
    throw new ConfigurationError(
      `--source-timezone '${timezone}' is not a time zone the source database knows (e.g. UTC, Europe/Madrid): ${(err as Error).message}`,
    );
  }
}

/** Every table, then every statement (with no rows), so that a missing column is named at once. */
async function checkSchema(client: pg.Client, url: string, sql: Statements): Promise<void> {
  const { rows } = await client.query<{ name: string; found: string | null }>(
    'select name, to_regclass(quote_ident(name))::text as found from unnest($1::text[]) as name',
    [TABLES],
  );
  const missing = rows.filter((r) => !r.found).map((r) => r.name);
  const not = `${redactUrl(url)} does not hold the original service's schema`;
  if (missing.length) throw new ConfigurationError(`The database at ${not}: no table ${missing.map((m) => `"${m}"`).join(', ')}.`);
  for (const what of ['users', 'tags', 'benchmarks', 'sites', 'flavors', 'results'] as const) {
    try {
      await client.query(`select * from (${sql[what]}) as checked limit 0`);
    } catch (err) {
      throw new ConfigurationError(`The database at ${not}: ${(err as Error).message}.`);
    }
  }
}
