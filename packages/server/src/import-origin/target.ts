/**
 * This service's database, written by the import: every insert keeps the source's id and does
 * nothing when a row with that id is already here (`on conflict do nothing`), so a second run
 * writes nothing and an interrupted run, run again, finishes the work. Results go in batches, one
 * multi-row insert per table and one transaction per batch (results with their tags and claim), so
 * an interruption never leaves half a batch. One import at a time per database: a session-level
 * advisory lock, released when the connection ends.
 */
import type pg from 'pg';
import { ownClient } from '../db/own-connection.ts';
import { lockKeyOf, tryLock } from '../db/advisory-lock.ts';
import { ConfigurationError } from '../core/errors.ts';
import {
  CLAIM_COLUMNS,
  type ClaimRow,
  columnArrays,
  insertFromArrays,
  RESULT_COLUMNS,
  RESULT_TAG_COLUMNS,
  type ResultRow,
  type ResultTagRow,
} from '../services/results/result-rows.ts';
import { redactUrl, type ReviewStatus } from './mapping.ts';

const IMPORT_LOCK = lockKeyOf('import-origin');

export interface TargetUser {
  iss: string;
  sub: string;
  email: string | null;
  registration_datetime: string;
  terms_version: string;
}

interface Reviewed {
  id: string;
  status: ReviewStatus;
  upload_datetime: string;
  uploader_iss: string;
  uploader_sub: string;
}

export interface TargetBenchmark extends Reviewed {
  container_image: string;
  container_tag: string;
  json_schema: string;
  description: string | null;
  url: string | null;
}

export interface TargetSite extends Reviewed {
  name: string;
  address: string;
  description: string | null;
}

export interface TargetFlavor extends Reviewed {
  site_id: string;
  name: string;
  description: string | null;
}

export interface TargetTag extends Reviewed {
  name: string;
  description: string | null;
}

/** A result as imported: the service's own row (services/results/result-rows.ts). */
export type TargetResult = ResultRow;

/** A claim as imported: on a result, as every claim of the service. */
export type TargetClaim = Omit<ClaimRow, 'resource_type'>;

/** What became of one catalogue row: written, already here (same id), or refused for a clash of names. */
export type CatalogueOutcome = { written: true } | { present: true } | { takenBy: string };

interface CatalogueRows {
  benchmark: TargetBenchmark;
  site: TargetSite;
  flavor: TargetFlavor;
  tag: TargetTag;
}
type CatalogueTable = keyof CatalogueRows;

/** Per table: its columns in insert order, and the unique names another row may already hold. */
const CATALOGUE: Record<CatalogueTable, { columns: string[]; casts: string[]; unique: string[] }> = {
  benchmark: {
    columns: ['container_image', 'container_tag', 'json_schema', 'description', 'url'],
    casts: ['text', 'text', 'jsonb', 'text', 'text'],
    unique: ['container_image', 'container_tag'],
  },
  site: { columns: ['name', 'address', 'description'], casts: ['text', 'text', 'text'], unique: ['name'] },
  flavor: { columns: ['site_id', 'name', 'description'], casts: ['uuid', 'text', 'text'], unique: ['site_id', 'name'] },
  tag: { columns: ['name', 'description'], casts: ['text', 'text'], unique: ['name'] },
};
/** The service's own inserts (services/result-rows.ts), on this plain client: `$n` placeholders. */
const numbered = (index: number) => `$${index + 1}`;
const INSERT_RESULTS_SQL = insertFromArrays('result', RESULT_COLUMNS, numbered, 'on conflict (id) do nothing returning id');
const INSERT_RESULT_TAGS_SQL = insertFromArrays('result_tag', RESULT_TAG_COLUMNS, numbered, 'on conflict do nothing');
const INSERT_CLAIMS_SQL = insertFromArrays('claim', CLAIM_COLUMNS, numbered, 'on conflict (id) do nothing returning id');

const REVIEWED = ['id', 'status', 'upload_datetime', 'uploader_iss', 'uploader_sub'];
const REVIEWED_CASTS = ['uuid', 'text', 'timestamptz', 'text', 'text'];

export class ImportTarget {
  readonly #client: pg.Client;

  private constructor(client: pg.Client) {
    this.#client = client;
  }

  /** Connects, checks the schema is migrated and takes the import lock; one clear error otherwise. */
  static async open(url: string): Promise<ImportTarget> {
    const client = ownClient('import-origin', { connectionString: url });
    client.on('error', () => {}); // the next statement reports it
    try {
      await client.connect();
    } catch (err) {
      throw new ConfigurationError(`Cannot reach the target database at ${redactUrl(url)}: ${(err as Error).message}`);
    }
    try {
      const [migrated] = (await client.query<{ ok: boolean }>("select to_regclass('app_setting') is not null as ok")).rows;
      if (!migrated?.ok) {
        throw new ConfigurationError(`The database at ${redactUrl(url)} is not migrated: run benchmarks-server migrate first.`);
      }
      if (!(await tryLock(async (sql, params) => (await client.query(sql, params)).rows, IMPORT_LOCK))) {
        throw new ConfigurationError(`Another import-origin is writing to ${redactUrl(url)}: wait for it to end.`);
      }
      return new ImportTarget(client);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
  }

  /** Runs `work` in one transaction: all of it is written, or (it throws) none. */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    await this.#client.query('begin');
    try {
      const out = await work();
      await this.#client.query('commit');
      return out;
    } catch (err) {
      await this.#client.query('rollback').catch(() => {});
      throw err;
    }
  }

  /** The ids of `table` among `ids` that are here already. */
  async existing(table: 'result' | 'claim', ids: readonly string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const { rows } = await this.#client.query<{ id: string }>(`select id from ${table} where id = any($1::uuid[])`, [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /** Inserts users; returns the `iss sub` keys of those written (the others were here). */
  async insertUsers(users: readonly TargetUser[]): Promise<Set<string>> {
    const { rows } = await this.#client.query<{ iss: string; sub: string }>(
      `insert into app_user (iss, sub, email, registration_datetime, terms_version)
       select * from unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[])
       on conflict do nothing returning iss, sub`,
      columnsOf(users, ['iss', 'sub', 'email', 'registration_datetime', 'terms_version']),
    );
    return new Set(rows.map((r) => userKey(r)));
  }

  /**
   * Inserts one catalogue row with its id. When nothing is written, says why: a row with that id
   * is here (present), or another row holds its unique name (takenBy: that row's id).
   */
  async insertCatalogue<Table extends CatalogueTable>(table: Table, item: CatalogueRows[Table]): Promise<CatalogueOutcome> {
    const row = item as unknown as Record<string, unknown>;
    const { columns, casts, unique } = CATALOGUE[table];
    const all = [...REVIEWED, ...columns];
    const types = [...REVIEWED_CASTS, ...casts];
    const values = all.map((c) => row[c]);
    const written = await this.#client.query(
      `insert into ${table} (${all.join(', ')}) values (${types.map((t, i) => `$${i + 1}::${t}`).join(', ')})
       on conflict do nothing returning id`,
      values,
    );
    if (written.rowCount) return { written: true };
    const same = await this.#client.query(`select 1 from ${table} where id = $1`, [row.id]);
    if (same.rowCount) return { present: true };
    const holder = await this.#client.query<{ id: string }>(
      `select id from ${table} where ${unique.map((c, i) => `${c} = $${i + 1}`).join(' and ')}`,
      unique.map((c) => row[c]),
    );
    return { takenBy: holder.rows[0]?.id ?? 'unknown' };
  }

  /** Inserts results; returns the ids written. */
  async insertResults(results: readonly TargetResult[]): Promise<Set<string>> {
    if (!results.length) return new Set();
    const { rows } = await this.#client.query<{ id: string }>(INSERT_RESULTS_SQL, columnArrays(RESULT_COLUMNS, results));
    return new Set(rows.map((r) => r.id));
  }

  /** Links results to tags; returns how many links were written. */
  async insertResultTags(links: readonly ResultTagRow[]): Promise<number> {
    if (!links.length) return 0;
    const { rowCount } = await this.#client.query(INSERT_RESULT_TAGS_SQL, columnArrays(RESULT_TAG_COLUMNS, links));
    return rowCount ?? 0;
  }

  /** Inserts claims; returns the ids written. */
  async insertClaims(claims: readonly TargetClaim[]): Promise<Set<string>> {
    if (!claims.length) return new Set();
    const rows = claims.map((c): ClaimRow => ({ ...c, resource_type: 'result' }));
    const written = await this.#client.query<{ id: string }>(INSERT_CLAIMS_SQL, columnArrays(CLAIM_COLUMNS, rows));
    return new Set(written.rows.map((r) => r.id));
  }

  /** Ends the connection, which releases the import lock. */
  async close(): Promise<void> {
    await this.#client.end().catch(() => {});
  }
}

/** The key of a user in sets and messages. */
export function userKey(user: { iss: string; sub: string }): string {
  return `${user.iss} ${user.sub}`;
}

/** One array per column, for `unnest`: a multi-row insert in one statement with a fixed text. */
function columnsOf<Row>(rows: readonly Row[], columns: (keyof Row & string)[]): unknown[][] {
  return columns.map((c) => rows.map((r) => r[c]));
}
