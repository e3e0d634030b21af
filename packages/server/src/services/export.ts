/**
 * GET /results:export (COMPARE.md): every visible result matching the list filters, streamed in
 * `execution_datetime, id` order as NDJSON or CSV, in constant memory whatever the count.
 *
 * The rows come from a server-side cursor (`declare … cursor`, then `fetch` a batch at a time) on a
 * connection of the export's own, outside the application pool: a long export neither holds a
 * pool connection nor runs under a request's statement cancellation, and one read-only snapshot
 * gives a consistent file. A batch is fetched only when the response has room for it (back-pressure
 * from the socket), so a slow reader holds one batch, not the result set. Everything that can fail
 * on the request (columns, filters, the benchmark, the connection, the first batch) fails before
 * the first byte, as a problem+json answer.
 */
import { Readable } from 'node:stream';
import pg from 'pg';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import { EXPORT_FIELDS, type ExportQuery } from '@benchmarks/sdk/contract/export';
import { AppError, errors } from '../core/errors.ts';
import { numbered } from '../db/bound-driver.ts';
import { csvField, csvText, type CsvCell } from './csv.ts';
import type { EmbedCache } from './embeds.ts';
import { formatTimestamp } from './format.ts';
import { parsePath } from './json-filter.ts';
import { suggestedMetrics } from './metric-indexes.ts';
import { RESULT_COLUMNS, RESULT_OUTPUTS, resultWhere, type ResultTextRow } from './result-query.ts';
import { resultItemsJson } from './results.ts';

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
    const path = name.startsWith('json.') ? parsePath(name.slice('json.'.length)) : null;
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
  /** How long the cursor's transaction may wait for a slow reader between two batches. */
  idleTimeoutMs?: number;
}

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

/** The cursor's statement: the list's WHERE (services/result-query.ts) in export order. */
function exportStatement(query: ExportParams, format: ExportFormat, columns: ExportColumn[]): Statement {
  const { where } = resultWhere(query, { visible: true });
  const order = 'order by r.execution_datetime, r.id';
  if (format === 'ndjson') {
    return {
      sql: `select ${RESULT_OUTPUTS} from (select ${RESULT_COLUMNS} from result r ${where.toSql()} ${order}) p`,
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

/** A cursor on a connection of its own; `close` ends both (also halfway). */
class ExportCursor {
  private constructor(private readonly client: pg.Client) {}

  static async open(em: EntityManager, statement: Statement, services: ExportServices): Promise<ExportCursor> {
    const { text, values } = numbered(statement.sql, statement.params);
    const client = new pg.Client({
      connectionString: em.config.get('clientUrl'),
      application_name: 'benchmarks-server export',
      connectionTimeoutMillis: 5_000,
      statement_timeout: services.statementTimeoutMs,
      idle_in_transaction_session_timeout: services.idleTimeoutMs ?? 60_000,
    });
    client.on('error', () => {}); // reported by the fetch that fails
    try {
      await client.connect();
    } catch {
      throw errors.unavailable('DATABASE_UNAVAILABLE', 'The database did not accept a connection for the export. Try again shortly.');
    }
    const cursor = new ExportCursor(client);
    try {
      await client.query('begin isolation level repeatable read read only');
      await client.query(`declare export_rows no scroll cursor for ${text}`, values);
      return cursor;
    } catch (err) {
      await cursor.close();
      throw err;
    }
  }

  async fetch(): Promise<Record<string, unknown>[]> {
    return (await this.client.query(`fetch ${EXPORT_BATCH_ROWS} from export_rows`)).rows;
  }

  async close(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

/** The chunks of an export: one per batch, the first one already read. */
async function* chunks(
  cursor: ExportCursor,
  first: Record<string, unknown>[],
  render: (rows: Record<string, unknown>[]) => Promise<string>,
  header: string,
): AsyncGenerator<string> {
  try {
    let rows = first;
    let head = header;
    for (;;) {
      const text = head + (await render(rows));
      head = '';
      if (text) yield text;
      if (rows.length < EXPORT_BATCH_ROWS) return;
      rows = await cursor.fetch();
    }
  } finally {
    // Also when the client goes away halfway (the stream is destroyed and the generator returns).
    await cursor.close();
  }
}

/**
 * The export as a stream, once its first batch is read: an error before that (columns, filters, an
 * unknown benchmark, the database) rejects, and the route answers it as problem+json.
 */
export async function exportResults(
  em: EntityManager,
  services: ExportServices,
  query: ExportParams,
  format: ExportFormat,
): Promise<Readable> {
  const suggested = query.benchmark_id ? await suggestedPaths(em, query.benchmark_id) : [];
  const columns = format === 'csv' ? exportColumns(query.columns, suggested) : [];
  const statement = exportStatement(query, format, columns);
  const cursor = await ExportCursor.open(em, statement, services);
  let first: Record<string, unknown>[];
  try {
    first = await cursor.fetch();
  } catch (err) {
    await cursor.close();
    throw err;
  }
  const render =
    format === 'csv'
      ? async (rows: Record<string, unknown>[]) => rows.map((row) => `${csvLine(row, columns)}\r\n`).join('')
      : async (rows: Record<string, unknown>[]) => {
          // Results whose benchmark, site, flavor or a tag was deleted since the snapshot are left out.
          const items = await resultItemsJson(em, services.embeds, rows as unknown as ResultTextRow[], { skipVanished: true });
          return items!.map((pieces) => `${pieces.join('')}\n`).join('');
        };
  const header = format === 'csv' ? `${columns.map((c) => csvField(c.name)).join(',')}\r\n` : '';
  return Readable.from(chunks(cursor, first, render, header), { objectMode: false });
}
