import type { Core } from '../core.ts';
import type { ResultSortField } from '../builders.ts';
import type { ClaimSort } from '../contract/claims.ts';
import { lineStream, ndjsonRecords } from '../export.ts';
import type { Body, FieldsOf, ListQuery, Query, IdempotencyOptions, Reply, RequestOptions } from '../types.ts';
import { upload, type UploadItem, type UploadOptions, type UploadReport, type UploadSource } from '../upload.ts';

/**
 * `client.results`: benchmark results. Results are never edited: upload a new one instead.
 * @example
 * const r = await client.results.create({ benchmark_id, flavor_id, execution_datetime: '2025-01-01T10:00:00Z' }, { score: 42 });
 * for await (const each of client.results.list({ benchmark_id, filters: [where('score').gte(40)], sort_by: [desc('json.score')] })) {
 *   console.log(each.id, each.json);
 * }
 */
export function resultsNamespace(core: Core) {
  const create = (meta: Query<'createResult'>, json: Body<'createResult'>, options?: IdempotencyOptions) =>
    core.request('createResult', { ...options, query: meta, body: json });
  const createMany = (items: Body<'createResults'>['items'], options?: IdempotencyOptions) =>
    core.request('createResults', { ...options, body: { items } });
  /** A comparison or changes asked for as CSV or SVG: text, whatever type the JSON answer has. */
  const asText =
    <Q extends object>(operationId: 'compareResults' | 'findChanges', format: 'csv' | 'svg') =>
    async (query: Q, options?: RequestOptions): Promise<string> => {
      const body = await core.invoke(operationId, { ...options, query: { ...query, format } });
      if (typeof body !== 'string') throw new TypeError(`expected a text answer, got ${typeof body}`);
      return body;
    };
  /** The options of one request of an upload: its own, and the key derived from what it sends (random when none). */
  const requestOf = (options: UploadOptions | undefined, items: readonly UploadItem[], operation: 'createResult' | 'createResults') => ({
    signal: options?.signal,
    timeoutMs: options?.timeoutMs,
    headers: options?.headers,
    idempotencyKey: options?.idempotencyKey?.(items, operation),
  });
  return {
    /**
     * Visible results, filtered (`filters` from `where()`) and sorted (`asc()`/`desc()`).
     * @example
     * client.results.list({ benchmark_id, filters: [where('cpu.count').gte(4)] })
     */
    list: (query?: ListQuery<'listResults', ResultSortField>, options?: RequestOptions) => core.list('listResults', { ...options, query }),
    /**
     * Results matching every term, plus any list filter.
     * @example
     * client.results.search({ terms: ['hpl'] })
     */
    search: (query?: ListQuery<'searchResults', ResultSortField>, options?: RequestOptions) =>
      core.list('searchResults', { ...options, query }),
    /**
     * One result, hidden ones included (marked `hidden`).
     * @example
     * await client.results.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getResult', { ...options, params: { id } }),
    /**
     * Statistics of one metric of a benchmark's visible results per flavor (or site), ranked with
     * declared ties: overlapping median intervals share a rank. Every list filter applies.
     * @example
     * const { groups } = await client.results.compare({ benchmark_id, metric: 'json.result.score', filters: [where('cpu.count').gte(4)] });
     * for (const g of groups) console.log(g.rank ?? '-', g.site.name, g.flavor?.name, g.median, g.median_ci);
     */
    compare: (query: CompareQuery, options?: RequestOptions) =>
      core.request('compareResults', { ...options, query: { ...(query as Query<'compareResults'>), format: 'json' } }),
    /**
     * The comparison as CSV text: a header and one row per group, in ranking order.
     * @example
     * await writeFile('compare.csv', await client.results.compareCsv({ benchmark_id, metric: 'json.result.score' }));
     */
    compareCsv: asText<CompareQuery>('compareResults', 'csv'),
    /**
     * The comparison as a standalone SVG chart (text), for a README or a page.
     * @example
     * await writeFile('compare.svg', await client.results.compareSvg({ benchmark_id, metric: 'json.result.score' }));
     */
    compareSvg: asText<CompareQuery>('compareResults', 'svg'),
    /**
     * Change points over time in one metric of a benchmark's visible results, one series per flavor
     * (or site): E-divisive means with Welch's t-test. Each change comes with its before and after
     * segments, magnitude, p-value and direction.
     * @example
     * const { groups } = await client.results.changes({ benchmark_id, metric: 'json.result.score', changed_after: '2026-05-01' });
     * for (const g of groups) for (const c of g.changes) console.log(g.flavor?.name, c.at, c.direction, c.magnitude, c.pvalue);
     */
    changes: (query: ChangesQuery, options?: RequestOptions) =>
      core.request('findChanges', { ...options, query: { ...(query as Query<'findChanges'>), format: 'json' } }),
    /**
     * The change points as CSV text: a header and one row per change point.
     * @example
     * await writeFile('changes.csv', await client.results.changesCsv({ benchmark_id, metric: 'json.result.score' }));
     */
    changesCsv: asText<ChangesQuery>('findChanges', 'csv'),
    /**
     * The change points as a standalone SVG of small multiples (text), for a README or a page.
     * @example
     * await writeFile('changes.svg', await client.results.changesSvg({ benchmark_id, metric: 'json.result.score' }));
     */
    changesSvg: asText<ChangesQuery>('findChanges', 'svg'),
    /**
     * Every visible result matching the list filters (`filters` from `where()`), no pages, in
     * `execution_datetime, id` order, as each arrives: the answer is streamed and parsed a line at a
     * time, so memory stays constant whatever the count. Nothing is sent until the loop starts; an
     * error answer (422 for a malformed filter, 404 for an unknown benchmark) is thrown by the loop
     * as its SDK error. An answer that breaks off throws an `IncompleteResponseError`, never
     * ends quietly. Leaving the loop, or aborting `options.signal`, closes the connection.
     * @example
     * for await (const result of client.results.export({ benchmark_id, filters: [where('cpu.count').gte(4)] })) {
     *   console.log(result.id, result.flavor.name, result.json);
     * }
     */
    export: (query?: ExportQuery, options?: RequestOptions): AsyncGenerator<ExportedResult, void, undefined> =>
      ndjsonRecords<ExportedResult>(
        () => core.stream('exportResults', { ...options, query: { ...(query as Query<'exportResults'>), format: 'ndjson' } }),
        options?.signal,
      ),
    /**
     * The export as CSV bytes, a web `ReadableStream` (Node and browsers): a header, then one row per
     * result with `columns` (fields and `json.<path>`s; default: id, execution_datetime,
     * benchmark_name, site_name, flavor_name, tags and, with `benchmark_id`, the benchmark's suggested
     * metrics). The request starts at the first read; an error answer errors the stream with its SDK
     * error, and so does an answer that breaks off (`IncompleteResponseError`). Cancel the
     * stream (or abort `options.signal`) to stop.
     * @example
     * // In Node, with Readable from node's stream module and pipeline from its promises API:
     * const csv = client.results.exportCsv({ benchmark_id, columns: ['id', 'flavor_name', 'json.result.score'] });
     * await pipeline(Readable.fromWeb(csv), createWriteStream('results.csv'));
     */
    exportCsv: (query?: ExportCsvQuery, options?: RequestOptions): ReadableStream<Uint8Array> =>
      lineStream(
        () => core.stream('exportResults', { ...options, query: { ...(query as Query<'exportResults'>), format: 'csv' } }),
        options?.signal,
      ),
    /**
     * Uploads a result: where and when it ran, and its JSON (checked against the benchmark's schema).
     * It carries an `Idempotency-Key` (random, or `options.idempotencyKey`), so a lost answer, a
     * timeout or a 5xx is retried without storing the result twice.
     * @example
     * await client.results.create({ benchmark_id, flavor_id, execution_datetime: '2025-01-01T10:00:00Z', tags_ids: [tagId] }, { score: 42 })
     */
    create,
    /**
     * Uploads up to 500 results in one request, all or none (422/404 `BATCH_REFUSED` lists every refused
     * item as `errors[].path` `/items/<index>/…`). Resolves to the ids of the stored results, in order.
     * @example
     * const { ids } = await client.results.createMany([{ benchmark_id, flavor_id, execution_datetime: '2025-01-01T10:00:00Z', json: { score: 42 } }])
     */
    createMany,
    /**
     * Hides a result (admin; it is kept in the database).
     * @example
     * await admin.results.delete(id)
     */
    delete: (id: string, options?: RequestOptions) => core.request('deleteResult', { ...options, params: { id } }),
    /**
     * Replaces the tags of a result (its uploader or an admin); `[]` clears them.
     * @example
     * await client.results.setTags(id, [tagId])
     */
    setTags: (id: string, tags_ids: Body<'updateResultTags'>['tags_ids'], options?: RequestOptions) =>
      core.request('updateResultTags', { ...options, params: { id }, body: { tags_ids } }),
    /**
     * Files a claim against a result, which is hidden until reviewed.
     * @example
     * await client.results.claim(id, 'the numbers are impossible')
     */
    claim: (id: string, message: string, options?: IdempotencyOptions) =>
      core.request('claimResult', { ...options, params: { id }, body: { message } }),
    /**
     * Claims filed against a result (its uploader or an admin).
     * @example
     * client.results.claims(id)
     */
    claims: (id: string, query?: ListQuery<'listResultClaims', FieldsOf<typeof ClaimSort>>, options?: RequestOptions) =>
      core.list('listResultClaims', { ...options, params: { id }, query }),
    /**
     * Who uploaded a result, with email (admin).
     * @example
     * const user = await admin.results.uploader(id)
     */
    uploader: (id: string, options?: RequestOptions) => core.request('getResultUploader', { ...options, params: { id } }),
    /**
     * Uploads many results: an array or iterable of items, an async iterable of them, or NDJSON bytes
     * (a file stream, a web `ReadableStream`), read as requests go out. Sends batches (`createMany`,
     * default 100 per request, 4 requests at once; `batchSize: 1` for one `create` per result) and
     * resolves, never rejecting for an item, to a report: `{ total, stored, failed, outcomes }` with
     * one outcome per item in source order, `{ index, ok: true, id }` or `{ index, ok: false, error }`.
     * A batch refused because of some items stores nothing: those fail with their own details
     * (`error.errors` relative to the item, as for `create`) and the others are sent again. Against a
     * server without the batch operation, items are sent one by one.
     * @example
     * const report = await client.results.upload(items, { onProgress: ({ done, total }) => console.error(`${done}/${total}`) });
     * for (const o of report.outcomes) if (!o.ok) console.error(`item ${o.index}:`, o.error);
     */
    upload: (source: UploadSource, options?: UploadOptions): Promise<UploadReport> =>
      upload<UploadItem>(
        source,
        {
          createBatch: (batch) => createMany(batch, requestOf(options, batch, 'createResults')),
          createOne: (item) => {
            const { json, ...meta } = item;
            return create(meta as Query<'createResult'>, json, requestOf(options, [item], 'createResult'));
          },
        },
        options,
      ),
  };
}

/**
 * The query of `results.compare`: the contract's, with `filters` from `where()` allowed and the format
 * chosen by the method.
 * @example
 * const q: CompareQuery = { benchmark_id, metric: 'json.result.score', group_by: 'site', better: 'lower' };
 */
export type CompareQuery = Omit<ListQuery<'compareResults'>, 'format'>;

/** The query of `results.changes`: the contract's, with `filters` from `where()` allowed and the format set by the method. */
export type ChangesQuery = Omit<ListQuery<'findChanges'>, 'format'>;

/**
 * The query of `results.export`: every filter of `results.list` (`filters` from `where()` allowed),
 * no pages, no sort (exports come in `execution_datetime, id` order).
 * @example
 * const q: ExportQuery = { benchmark_id, filters: [where('machine.cpu.count').gte(4)], execution_after: '2025-01-01' };
 */
export type ExportQuery = Omit<ListQuery<'exportResults'>, 'format' | 'columns'>;

/**
 * The query of `results.exportCsv`: {@link ExportQuery} and the CSV `columns`, in order.
 * @example
 * const q: ExportCsvQuery = { benchmark_id, columns: ['id', 'flavor_name', 'json.result.score'] };
 */
export type ExportCsvQuery = Omit<ListQuery<'exportResults'>, 'format'>;

/**
 * One result of an export: the same object as `results.get` returns.
 * @example
 * const seen: ExportedResult[] = [];
 */
export type ExportedResult = Reply<'getResult'>;
