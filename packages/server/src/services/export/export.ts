/**
 * GET /results:export (COMPARE.md): every visible result matching the list filters, streamed in
 * `execution_datetime, id` order as NDJSON or CSV, in constant memory whatever the count.
 *
 * The rows come from a server-side cursor (`declare … cursor`, then `fetch` a batch at a time) on a
 * connection of the export's own, outside the application pool: a long export neither holds a
 * pool connection nor runs under a request's statement cancellation, and one read-only snapshot
 * gives a consistent file. The next batch is fetched while one is written, and no further until
 * the response has room for it (back-pressure from the socket), so a slow reader holds two
 * batches, not the result set. Everything that can fail on the request (columns, filters, the
 * benchmark, the connection, the first batch) fails before the first byte, as a problem+json answer.
 *
 * Speed (docs/performance.md, scenario 10): an NDJSON line costs PostgreSQL its `json::text` and a
 * lookup of its tags' ids (the catalogue's versions are read once per export), and Node its embed
 * texts copied as bytes (LineEncoder).
 */
import { Readable } from 'node:stream';
import type pg from 'pg';
import { ownClient } from '../../db/own-connection.ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import { EXPORT_FIELDS, type ExportQuery } from '@benchmarks/sdk/contract/export';
import { AppError, errors } from '../../core/errors.ts';
import { numbered } from '../../db/bound-driver.ts';
import { csvField, csvText, type CsvCell } from '@benchmarks/sdk/csv';
import type { EmbedCache } from '../catalogue/embeds.ts';
import { formatTimestamp } from '../../core/format.ts';
import { prefixedJsonPath } from '../query/json-path.ts';
import { suggestedMetrics } from '../metrics/metric-values.ts';
import { RESULT_COLUMNS, resultWhere, type ResultTextRow } from '../results/result-query.ts';
import { resultItemsJson } from '../results/results.ts';

export type ExportParams = Static<typeof ExportQuery>;
export type ExportFormat = 'ndjson' | 'csv';
type Field = (typeof EXPORT_FIELDS)[number];

/** Rows per `fetch`: about a megabyte of NDJSON at the demo's result sizes. */
export const EXPORT_BATCH_ROWS = 500;

export type ExportColumn = { name: string; field: Field } | { name: string; path: string[] };

const DEFAULT_FIELDS: Field[] = ['id', 'execution_datetime', 'benchmark_name', 'site_name', 'flavor_name', 'tags'];

/** The CSV columns asked for (422 INVALID_COLUMN on one that is neither a field nor a JSON path), else the default ones. */
export function exportColumns(columns: readonly string[] | undefined, suggested: readonly string[][]): ExportColumn[] {
  if (!columns) {
    return [
      ...DEFAULT_FIELDS.map((field) => ({ name: field, field })),
      ...suggested.map((path) => ({ name: `json.${path.join('.')}`, path })),
    ];
  }
  return columns.map((name, i) => {
    if ((EXPORT_FIELDS as readonly string[]).includes(name)) return { name, field: name as Field };
    const path = prefixedJsonPath(name);
    if (path) return { name, path };
    throw new AppError(
      422,
      'INVALID_COLUMN',
      `columns[${i}] '${name}' is neither a field (${EXPORT_FIELDS.join(', ')}) nor a JSON path json.<dotted.path> (at most 20 segments).`,
      { errors: [{ in: 'query', path: `columns/${i}`, message: 'must be a field or json.<dotted.path>' }] },
    );
  });
}

/** What an export needs of the process: the embed cache (NDJSON) and the pool's statement timeout. */
export interface ExportServices {
  embeds: EmbedCache;
  statementTimeoutMs: number;
  /**
   * How long the cursor's transaction may wait for a slow reader between two batches (PostgreSQL's
   * idle_in_transaction_session_timeout; 0: no limit). A backstop only: the route ends a stalled or
   * overlong export itself (http/export-deadlines.ts), so this is longer than both.
   */
  idleTimeoutMs?: number;
}

/**
 * The export's database connection ended (PostgreSQL stopped, an operator or a timeout ended the
 * session) while its answer was streaming: the answer ends early, as an aborted transfer.
 */
export class ExportInterruptedError extends Error {
  readonly code = 'EXPORT_INTERRUPTED';
  constructor(cause: unknown) {
    super(`The export's database connection was lost: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'ExportInterruptedError';
  }
}

/** The longest a closing export waits for the batch it is fetching, so that its connection ends cleanly. */
const CLOSE_WAIT_MS = 2_000;

interface Statement {
  sql: string;
  params: unknown[];
}

const CSV_FIELD_SQL: Record<Field, string> = {
  id: 'r.id::text',
  execution_datetime: 'r.execution_datetime',
  upload_datetime: 'r.upload_datetime',
  benchmark_name: "(select b.container_image || ':' || b.container_tag from benchmark b where b.id = r.benchmark_id)",
  site_name: '(select s.name from site s where s.id = r.site_id)',
  flavor_name: '(select f.name from flavor f where f.id = r.flavor_id)',
  tags: "(select string_agg(t.name, ';' order by t.name, t.id) from result_tag rt join tag t on t.id = rt.tag_id where rt.result_id = r.id)",
};

/**
 * What an NDJSON export reads of each result: a list page's outputs (RESULT_OUTPUTS) without the
 * versions of the catalogue rows it embeds, which one snapshot sees once (CatalogueVersions), and
 * with its tags' ids only. Per result, that is a third less work for PostgreSQL.
 */
const NDJSON_OUTPUTS =
  'p.id, p.benchmark_id, p.site_id, p.flavor_id, p.json::text as json, p.execution_datetime, p.upload_datetime, p.hidden, ' +
  "(select string_agg(rt.tag_id::text, ',') from result_tag rt where rt.result_id = p.id) as tag_ids";

type NdjsonRow = Omit<ResultTextRow, 'benchmark_version' | 'site_version' | 'flavor_version' | 'tag_versions'> & { tag_ids: string | null };

/**
 * The version (`xmin`) of every catalogue row in the export's snapshot, and each tag's place in
 * `order by name, id` (the database's collation, as list pages order tags): read once, in the
 * cursor's transaction, instead of once per result. The catalogue is small next to the results.
 */
type Versioned = 'benchmark' | 'site' | 'flavor' | 'tag';

class CatalogueVersions {
  private constructor(
    private readonly versions: Record<Versioned, Map<string, string>>,
    private readonly tagPlaces: Map<string, number>,
  ) {}

  static async read(client: pg.Client): Promise<CatalogueVersions> {
    const { rows } = await client.query<{ kind: Versioned; id: string; version: string; place: number }>(
      "select 'benchmark' as kind, id::text as id, xmin::text as version, 0 as place from benchmark " +
        "union all select 'site', id::text, xmin::text, 0 from site " +
        "union all select 'flavor', id::text, xmin::text, 0 from flavor " +
        "union all select 'tag', id::text, xmin::text, (row_number() over (order by name, id))::int from tag",
    );
    const versions: Record<Versioned, Map<string, string>> = { benchmark: new Map(), site: new Map(), flavor: new Map(), tag: new Map() };
    for (const r of rows) versions[r.kind].set(r.id, r.version);
    return new CatalogueVersions(versions, new Map(rows.filter((r) => r.kind === 'tag').map((r) => [r.id, r.place])));
  }

  /**
   * The row as a list page reads it (a version unknown here is '': the embed cache reads the row
   * again). Built field by field: this runs for every result, and a spread copy costs 200 times more.
   */
  textRow(row: NdjsonRow): ResultTextRow {
    const v = this.versions;
    return {
      id: row.id,
      benchmark_id: row.benchmark_id,
      site_id: row.site_id,
      flavor_id: row.flavor_id,
      json: row.json,
      execution_datetime: row.execution_datetime,
      upload_datetime: row.upload_datetime,
      hidden: row.hidden,
      benchmark_version: v.benchmark.get(row.benchmark_id) ?? '',
      site_version: v.site.get(row.site_id) ?? '',
      flavor_version: v.flavor.get(row.flavor_id) ?? '',
      tag_versions: row.tag_ids === null ? null : this.tagVersions(row.tag_ids),
    };
  }

  /** `id version` of each tag, in name order. */
  private tagVersions(ids: string): string {
    const tags = ids.split(',');
    if (tags.length > 1) tags.sort((a, b) => (this.tagPlaces.get(a) ?? 0) - (this.tagPlaces.get(b) ?? 0));
    let out = '';
    for (const id of tags) out += `${out ? ',' : ''}${id} ${this.versions.tag.get(id) ?? ''}`;
    return out;
  }
}

/** The cursor's statement: the list's WHERE (services/results/result-query.ts) in export order. */
function exportStatement(query: ExportParams, format: ExportFormat, columns: ExportColumn[]): Statement {
  const { where } = resultWhere(query, { visible: true });
  const order = 'order by r.execution_datetime, r.id';
  if (format === 'ndjson') {
    return {
      sql: `select ${NDJSON_OUTPUTS} from (select ${RESULT_COLUMNS} from result r ${where.toSql()} ${order}) p`,
      params: [...where.params],
    };
  }
  const selected: string[] = [];
  const params: unknown[] = [];
  columns.forEach((column, i) => {
    if ('field' in column) {
      selected.push(`${CSV_FIELD_SQL[column.field]} as c${i}`);
    } else {
      // The value as text (strings unquoted, null for JSON null or a missing path) and its JSON type.
      selected.push(`r.json #>> ?::text[] as c${i}`, `jsonb_typeof(r.json #> ?::text[]) as t${i}`);
      params.push(column.path, column.path);
    }
  });
  return { sql: `select ${selected.join(', ')} from result r ${where.toSql()} ${order}`, params: [...params, ...where.params] };
}

/** One CSV line of a row of the CSV statement. */
function csvLine(row: Record<string, unknown>, columns: ExportColumn[]): string {
  const cells = columns.map((column, i): CsvCell => {
    const value = row[`c${i}`];
    if (value === null || value === undefined) return null;
    if ('field' in column) {
      if (value instanceof Date) return formatTimestamp(value);
      return column.field === 'id' ? (value as string) : csvText(value as string);
    }
    // A JSON string is user text (formula guard); numbers, booleans, objects and arrays are JSON.
    return row[`t${i}`] === 'string' ? csvText(value as string) : (value as string);
  });
  return cells.map(csvField).join(',');
}

/** The benchmark's suggested metric paths (CSV default columns); 404 when it does not exist. */
async function suggestedPaths(em: EntityManager, benchmarkId: string): Promise<string[][]> {
  const [row] = await em.execute<{ json_schema: unknown }[]>('select json_schema from benchmark where id = ?', [benchmarkId]);
  if (!row) throw errors.notFound('Benchmark', benchmarkId);
  return suggestedMetrics(row.json_schema);
}

/**
 * A cursor on a connection of its own; `close` ends both (also halfway). When the connection ends
 * by itself (PostgreSQL ends the session, the database stops), `onLost` is told at once, even while
 * no statement runs: the export must not wait for its reader to notice.
 */
class ExportCursor {
  /** The catalogue's versions in the cursor's snapshot, when opened for NDJSON. */
  versions: CatalogueVersions | null = null;
  /** Called once when the connection ends other than by `close`. */
  onLost: (err: ExportInterruptedError) => void = () => {};
  /** The statement running now, if any. */
  private running: Promise<unknown> | null = null;
  private closing = false;
  private lost = false;

  private constructor(private readonly client: pg.Client) {
    const lose = (cause: unknown) => {
      if (this.closing || this.lost) return;
      this.lost = true;
      this.onLost(new ExportInterruptedError(cause));
    };
    client.on('error', lose);
    client.on('end', () => lose(new Error('the connection ended')));
  }

  static async open(em: EntityManager, statement: Statement, services: ExportServices, format: ExportFormat): Promise<ExportCursor> {
    const { text, values } = numbered(statement.sql, statement.params);
    const client = ownClient('export', { connectionString: em.config.get('clientUrl'), connectionTimeoutMillis: 5_000 });
    client.on('error', () => {}); // until the cursor listens: reported by the statement that fails
    try {
      await client.connect();
    } catch {
      throw errors.unavailable('DATABASE_UNAVAILABLE', 'The database did not accept a connection for the export. Try again shortly.');
    }
    const cursor = new ExportCursor(client);
    try {
      await client.query('begin isolation level repeatable read read only');
      // The timeouts are the transaction's, not sent at connect: PgBouncer refuses startup
      // parameters it does not know, and in its transaction mode the transaction is the session.
      // This first statement takes the snapshot: the versions read next are those the cursor's rows see.
      await client.query(`select set_config('statement_timeout', $1, true), set_config('idle_in_transaction_session_timeout', $2, true)`, [
        String(services.statementTimeoutMs),
        String(services.idleTimeoutMs ?? 60_000),
      ]);
      if (format === 'ndjson') cursor.versions = await CatalogueVersions.read(client);
      await client.query(`declare export_rows no scroll cursor for ${text}`, values);
      return cursor;
    } catch (err) {
      await cursor.close();
      throw err;
    }
  }

  async fetch(): Promise<Record<string, unknown>[]> {
    const batch = this.client.query(`fetch ${EXPORT_BATCH_ROWS} from export_rows`);
    this.running = batch;
    try {
      return (await batch).rows;
    } finally {
      if (this.running === batch) this.running = null;
    }
  }

  /**
   * Ends the connection. A batch still being fetched is awaited first (briefly): node-postgres
   * destroys the socket of a client ended halfway through a statement, and PostgreSQL then logs
   * `FATAL: connection to client lost` for what is only a reader gone away.
   */
  async close(): Promise<void> {
    this.closing = true;
    const running = this.running;
    if (running && !this.lost) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([running.catch(() => {}), new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await this.client.end().catch(() => {});
  }
}

/** A fetch already sent: awaited later, its failure kept until then (never an unhandled rejection). */
function inFlight(cursor: ExportCursor): Promise<Record<string, unknown>[]> {
  const batch = cursor.fetch();
  batch.catch(() => {}); // rethrown where it is awaited; ignored when the export ends first
  return batch;
}

/** Embedded texts kept encoded, at most (all forgotten when full): the catalogue rows in use. */
const SHARED_TEXTS = 1_000;

/**
 * NDJSON lines as bytes, one Buffer per batch. The texts of the embedded catalogue rows repeat in
 * every line that embeds them (a benchmark's, with its JSON Schema, is most of a line): they are
 * encoded once and copied, instead of joined into one string with the rest and encoded again for
 * every result (a quarter of the server's time per result).
 */
class LineEncoder {
  private readonly shared = new Map<string, Buffer>();

  encode(items: string[][]): Buffer {
    this.learn(items);
    let length = 0;
    for (const pieces of items) {
      for (const piece of pieces) length += this.shared.get(piece)?.length ?? Buffer.byteLength(piece);
      length += 1;
    }
    const out = Buffer.allocUnsafe(length);
    let at = 0;
    for (const pieces of items) {
      for (const piece of pieces) {
        const bytes = this.shared.get(piece);
        if (bytes) at += bytes.copy(out, at);
        else at += out.write(piece, at);
      }
      out[at++] = 0x0a;
    }
    return out;
  }

  /** Texts of 64 characters or more found twice in a batch are embedded ones (a result's own pieces are its alone). */
  private learn(items: string[][]): void {
    const seen = new Set<string>();
    for (const pieces of items) {
      for (const piece of pieces) {
        if (piece.length < 64 || this.shared.has(piece)) continue;
        if (!seen.has(piece)) seen.add(piece);
        else {
          if (this.shared.size >= SHARED_TEXTS) this.shared.clear();
          this.shared.set(piece, Buffer.from(piece));
        }
      }
    }
  }
}

/**
 * The most bytes handed to the socket in one write. A write counts as accepted by the client's
 * connection only once all of it is (http/export-deadlines.ts watches that progress), so pieces of
 * a batch, not whole batches (a megabyte or more), keep a slow but steady reader from looking stalled.
 */
export const EXPORT_WRITE_BYTES = 64 * 1024;

/** `chunk` in pieces of at most EXPORT_WRITE_BYTES (views of one Buffer, not copies). */
function* pieces(chunk: string | Buffer): Generator<Buffer> {
  const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
  for (let at = 0; at < bytes.length; at += EXPORT_WRITE_BYTES) yield bytes.subarray(at, at + EXPORT_WRITE_BYTES);
}

/** The chunks of an export: each batch in pieces, the first one already read, the next fetched while one is written. */
async function* chunks(
  cursor: ExportCursor,
  first: Record<string, unknown>[],
  render: (rows: Record<string, unknown>[]) => Promise<string | Buffer>,
  header: string,
): AsyncGenerator<Buffer> {
  try {
    let rows = first;
    if (header) yield Buffer.from(header);
    for (;;) {
      const next = rows.length < EXPORT_BATCH_ROWS ? null : inFlight(cursor);
      yield* pieces(await render(rows));
      if (!next) return;
      rows = await next;
    }
  } finally {
    // Also when the client goes away halfway (the stream is destroyed and the generator returns).
    await cursor.close();
  }
}

/** The export as a stream, once its first batch is read: what fails before that rejects (a problem+json answer). */
export async function exportResults(
  em: EntityManager,
  services: ExportServices,
  query: ExportParams,
  format: ExportFormat,
): Promise<Readable> {
  const suggested = query.benchmark_id ? await suggestedPaths(em, query.benchmark_id) : [];
  const columns = format === 'csv' ? exportColumns(query.columns, suggested) : [];
  const statement = exportStatement(query, format, columns);
  const cursor = await ExportCursor.open(em, statement, services, format);
  let first: Record<string, unknown>[];
  try {
    first = await cursor.fetch();
  } catch (err) {
    await cursor.close();
    throw err;
  }
  const lines = new LineEncoder();
  const render =
    format === 'csv'
      ? async (rows: Record<string, unknown>[]) => rows.map((row) => `${csvLine(row, columns)}\r\n`).join('')
      : async (rows: Record<string, unknown>[]) => {
          // Results whose benchmark, site, flavor or a tag was deleted since the snapshot are left out.
          const textRows = (rows as unknown as NdjsonRow[]).map((row) => cursor.versions!.textRow(row));
          return lines.encode((await resultItemsJson(em, services.embeds, textRows, { skipVanished: true }))!);
        };
  const header = format === 'csv' ? `${columns.map((c) => csvField(c.name)).join(',')}\r\n` : '';
  const stream = Readable.from(chunks(cursor, first, render, header), { objectMode: false });
  // A connection that ends while the answer streams ends the answer at once (and with it the
  // export's place), even while the reader is not asking for more.
  cursor.onLost = (err) => stream.destroy(err);
  // A stream destroyed before it was first read (its client gone before the answer started) never
  // runs the generator, nor its `finally`: the connection is ended here too (ending twice is harmless).
  stream.once('close', () => void cursor.close());
  return stream;
}
