/**
 * This service's database, written by the import: every insert keeps the source's id and does
 * nothing when that id is here, so a second run writes nothing. A batch of results is one insert per
 * table in one transaction, never half written. One import at a time: a session-level advisory lock.
 */
import type pg from 'pg';
import { redactUrl } from '../db/own-connection.ts';
import { lockKeyOf, tryLock } from '../db/advisory-lock.ts';
import { ConfigurationError } from '../core/errors.ts';
import {
  BENCHMARK_TABLE,
  type BenchmarkRow,
  CLAIM_TABLE,
  type ClaimRow,
  columnArrays,
  FLAVOR_TABLE,
  type FlavorRow,
  insertFromArrays,
  RESULT_TABLE,
  RESULT_TAG_TABLE,
  type ResultRow,
  type ResultTagRow,
  type RowOf,
  SITE_TABLE,
  type SiteRow,
  type Table,
  TAG_TABLE,
  type TagRow,
  USER_TABLE,
  type UserRow,
} from '../db/table-columns.ts';
import type { ReviewStatus } from './mapping.ts';
import { openImportClient } from './source.ts';

const IMPORT_LOCK = lockKeyOf('import-origin');

// The rows as imported are the service's own (db/table-columns.ts): a column a migration adds fails the typecheck here.

/** A catalogue row as imported: the service's own row, its status one the service knows. */
type Reviewed<Row> = Row & { status: ReviewStatus };

/** A claim as imported: on a result, as every claim of the service. */
export type TargetClaim = Omit<ClaimRow, 'resource_type'>;

/** What became of one catalogue row: written, already here (same id), or refused for a clash of names. */
export type CatalogueOutcome = { written: true } | { present: true } | { takenBy: string };

interface CatalogueRows {
  benchmark: Reviewed<BenchmarkRow>;
  site: Reviewed<SiteRow>;
  flavor: Reviewed<FlavorRow>;
  tag: Reviewed<TagRow>;
}
type CatalogueTable = keyof CatalogueRows;

/** Per catalogue table: its declaration, and the unique names another row may already hold. */
const CATALOGUE = {
  benchmark: { table: BENCHMARK_TABLE, unique: ['container_image', 'container_tag'] },
  site: { table: SITE_TABLE, unique: ['name'] },
  flavor: { table: FLAVOR_TABLE, unique: ['site_id', 'name'] },
  tag: { table: TAG_TABLE, unique: ['name'] },
} as const satisfies { [T in CatalogueTable]: { table: { name: T }; unique: readonly (keyof CatalogueRows[T] & string)[] } };

/** The service's own inserts (db/table-columns.ts), on this plain client: `$n` placeholders. */
const numbered = (index: number) => `$${index + 1}`;
const INSERT_USERS_SQL = insertFromArrays(USER_TABLE, numbered, 'on conflict do nothing returning iss, sub');
const INSERT_RESULTS_SQL = insertFromArrays(RESULT_TABLE, numbered, 'on conflict (id) do nothing returning id');
const INSERT_RESULT_TAGS_SQL = insertFromArrays(RESULT_TAG_TABLE, numbered, 'on conflict do nothing');
const INSERT_CLAIMS_SQL = insertFromArrays(CLAIM_TABLE, numbered, 'on conflict (id) do nothing returning id');
const INSERT_CATALOGUE_SQL = Object.fromEntries(
  Object.entries(CATALOGUE).map(([name, { table }]) => [name, insertFromArrays(table, numbered, 'on conflict do nothing returning id')]),
) as Record<CatalogueTable, string>;

export class ImportTarget {
  readonly #client: pg.Client;

  private constructor(client: pg.Client) {
    this.#client = client;
  }

  /** Connects, checks the schema is migrated and takes the import lock; one clear error otherwise. */
  static open(url: string): Promise<ImportTarget> {
    return openImportClient(url, 'target', undefined, async (client) => {
      const [migrated] = (await client.query<{ ok: boolean }>("select to_regclass('app_setting') is not null as ok")).rows;
      if (!migrated?.ok) {
        throw new ConfigurationError(`The database at ${redactUrl(url)} is not migrated: run benchmarks-server migrate first.`);
      }
      if (!(await tryLock(async (sql, params) => (await client.query(sql, params)).rows, IMPORT_LOCK))) {
        throw new ConfigurationError(`Another import-origin is writing to ${redactUrl(url)}: wait for it to end.`);
      }
      return new ImportTarget(client);
    });
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
  async insertUsers(users: readonly UserRow[]): Promise<Set<string>> {
    if (!users.length) return new Set();
    const { rows } = await this.#client.query<{ iss: string; sub: string }>(INSERT_USERS_SQL, columnArrays(USER_TABLE, users));
    return new Set(rows.map((r) => userKey(r)));
  }

  /** Inserts one catalogue row with its id; else says why: that id is here, or another row holds its unique name. */
  async insertCatalogue<Name extends CatalogueTable>(table: Name, item: CatalogueRows[Name]): Promise<CatalogueOutcome> {
    // The signature ties the row to its table; past it, any declared table and its row.
    const { table: into, unique } = CATALOGUE[table] as { table: Table; unique: readonly string[] };
    const row = item as unknown as RowOf<Table>;
    const written = await this.#client.query(INSERT_CATALOGUE_SQL[table], columnArrays(into, [row]));
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
  async insertResults(results: readonly ResultRow[]): Promise<Set<string>> {
    if (!results.length) return new Set();
    const { rows } = await this.#client.query<{ id: string }>(INSERT_RESULTS_SQL, columnArrays(RESULT_TABLE, results));
    return new Set(rows.map((r) => r.id));
  }

  /** Links results to tags; returns how many links were written. */
  async insertResultTags(links: readonly ResultTagRow[]): Promise<number> {
    if (!links.length) return 0;
    const { rowCount } = await this.#client.query(INSERT_RESULT_TAGS_SQL, columnArrays(RESULT_TAG_TABLE, links));
    return rowCount ?? 0;
  }

  /** Inserts claims; returns the ids written. */
  async insertClaims(claims: readonly TargetClaim[]): Promise<Set<string>> {
    if (!claims.length) return new Set();
    const rows = claims.map((c): ClaimRow => ({ ...c, resource_type: 'result' }));
    const written = await this.#client.query<{ id: string }>(INSERT_CLAIMS_SQL, columnArrays(CLAIM_TABLE, rows));
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
