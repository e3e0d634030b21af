/**
 * Results: reading (lists, one by id) with embedded catalogue objects loaded in batches, tags,
 * deletion and the uploader view. Uploads are in services/results/uploads.ts.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { Result, User } from '../../entities/index.ts';
import type { Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { JsonText } from '../../core/reply.ts';
import { transaction } from '../../db/transaction.ts';
import type { benchmarkView, flavorView, siteView, tagView } from '../catalogue/views.ts';
import { formatTimestamp } from '../../core/format.ts';
import { checkPageDepth, itemsVanishing, pageJson, pageRequest, PAGE_READ_ATTEMPTS } from '../query/pagination.ts';
import {
  findResultRows,
  isExpensiveList,
  metricPlan,
  RESULT_BY_ID_SQL,
  resultWalk,
  type ResultListQuery,
  type ResultScope,
  type ResultTextRow,
} from './result-query.ts';
import type { TotalCache } from './total-cache.ts';
import type { EmbedCache, EmbedRef } from '../catalogue/embeds.ts';
import type { MetricTable } from '../metrics/metric-lookup.ts';
import { lockResult, refreshHidden, requireUploaderOrAdmin } from '../catalogue/claims.ts';
import { listPaths, pathWarnings, type PathWarning, type SchemaPathsCache } from './path-warnings.ts';
import { columnArrays, insertFromArrays, RESULT_TAG_TABLE, type ResultTagRow } from '../../db/table-columns.ts';

/** The per-process caches result reading uses (AppContext). */
export interface ResultServices {
  /** The paths benchmarks' schemas describe; absent: no warnings. */
  results: { totals: TotalCache; schemaPaths?: SchemaPathsCache };
  catalogue: { embeds: EmbedCache };
  /** Lists read numeric filters and sorts from the metric values table when it can answer (services/metrics/metric-lookup.ts); absent: the documents only. */
  metrics?: { table: MetricTable };
  /** How deep paging may reach (page × per_page); absent: no limit. */
  config?: { maxPageDepth: number };
  /** Runs expensive lists a few at a time (services/runtime/admission.ts ExpensiveListAdmission); absent: at once. */
  runtime?: { expensiveLists: { run<T>(work: () => Promise<T>): Promise<T> } };
}

function requireApproved(row: { status: string }, label: string, id: string): void {
  if (row.status !== 'approved') {
    throw new AppError(422, 'NOT_APPROVED', `${label} ${id} is not approved yet: results need approved items.`);
  }
}

/**
 * Result items as JSON text. Benchmark, site, flavor and tags come from the embed cache at the
 * versions the page's statement saw (no statement at all once they are known); each document is
 * spliced in as PostgreSQL prints it (`json::text`), never parsed and re-serialised. null when one
 * of those rows was deleted after the page's statement: the caller reads the rows again (or, with
 * `skipVanished`, those results are left out).
 */
export async function resultItemsJson(
  em: EntityManager,
  embeds: EmbedCache,
  rows: ResultTextRow[],
  options: { skipVanished?: boolean } = {},
): Promise<string[][] | null> {
  if (rows.length === 0) return [];
  const refs: EmbedRef[] = [];
  const tagsOf = rows.map((r) => (r.tag_versions ? r.tag_versions.split(',').map((pair) => pair.split(' ') as [string, string]) : []));
  rows.forEach((r, i) => {
    refs.push({ kind: 'benchmark', id: r.benchmark_id, version: r.benchmark_version });
    refs.push({ kind: 'site', id: r.site_id, version: r.site_version });
    refs.push({ kind: 'flavor', id: r.flavor_id, version: r.flavor_version });
    for (const [id, version] of tagsOf[i]!) refs.push({ kind: 'tag', id, version });
  });
  const texts = await embeds.texts(em, refs);
  const known = (kind: string, id: string) => texts.has(`${kind}:${id}`);
  if (refs.some((ref) => !known(ref.kind, ref.id))) {
    if (!options.skipVanished) return null;
    // Only the rows whose embedded rows all still exist (an export cannot read its rows again).
    const complete = rows
      .map((r, i) => [r, tagsOf[i]!] as const)
      .filter(
        ([r, tags]) =>
          known('benchmark', r.benchmark_id) &&
          known('site', r.site_id) &&
          known('flavor', r.flavor_id) &&
          tags.every(([id]) => known('tag', id)),
      );
    rows = complete.map(([r]) => r);
    tagsOf.splice(0, tagsOf.length, ...complete.map(([, tags]) => tags));
  }
  const text = (kind: string, id: string) => texts.get(`${kind}:${id}`)!;
  // The key order of ResultView. Each item is a list of pieces: the embedded texts are shared by
  // every result that embeds them, and nothing is concatenated into a page-sized string.
  return rows.map((r, i) => {
    const tags = tagsOf[i]!;
    const pieces = [
      `{"id":"${r.id}","execution_datetime":"${formatTimestamp(r.execution_datetime)}","upload_datetime":"${formatTimestamp(r.upload_datetime)}","benchmark":`,
      text('benchmark', r.benchmark_id),
      ',"site":',
      text('site', r.site_id),
      ',"flavor":',
      text('flavor', r.flavor_id),
      ',"tags":[',
    ];
    tags.forEach(([id], k) => {
      if (k) pieces.push(',');
      pieces.push(text('tag', id));
    });
    pieces.push('],"json":', r.json, `,"hidden":${r.hidden}}`);
    return pieces;
  });
}

/** The result shape of SPEC.md (what the JSON text of resultItemsJson holds). */
export interface ResultView {
  id: string;
  execution_datetime: string;
  upload_datetime: string;
  benchmark: ReturnType<typeof benchmarkView>;
  site: ReturnType<typeof siteView>;
  flavor: ReturnType<typeof flavorView>;
  tags: ReturnType<typeof tagView>[];
  json: Record<string, unknown>;
  hidden: boolean;
}

/**
 * One page of results as the envelope's JSON text; totals of large lists come from the cache. A
 * page whose embedded rows were deleted meanwhile (with their results, or a tag unlinked) is read
 * again: it then shows the results as they are now. With `benchmark_id`, the JSON paths its schema
 * does not describe are warned about (in the envelope, and returned for the Warning header).
 */
export async function listResults(
  em: EntityManager,
  services: ResultServices,
  query: ResultListQuery,
  scope: ResultScope,
): Promise<{ body: JsonText; warnings: PathWarning[] }> {
  // A cursor reaches any depth at the cost of the first page: only page numbers are capped.
  const walk = resultWalk(query, scope);
  if (services.config && !walk.byCursor) checkPageDepth(pageRequest(query), services.config.maxPageDepth);
  // The one plan of the list: which paths the metric values table answers, and its cost class.
  const plan = await metricPlan(em, services.metrics?.table, query, scope);
  const expensive = isExpensiveList(query, plan);
  const warnings = await pathWarnings(em, services.results.schemaPaths, query.benchmark_id, listPaths(query));
  // An expensive list holds its place while it reads its rows, not while its page is built: the
  // next one's walk runs in PostgreSQL meanwhile.
  const admitted = expensive && services.runtime ? services.runtime.expensiveLists : null;
  for (let attempt = 1; attempt <= PAGE_READ_ATTEMPTS; attempt++) {
    const rowsOf = () =>
      findResultRows(em, query, scope, services.results.totals, { sequential: expensive, walk, table: services.metrics?.table, plan });
    const found = await (admitted ? admitted.run(rowsOf) : rowsOf());
    const { items: rows, fields } = walk.finish(found.rows, found.total);
    const items = await resultItemsJson(em, services.catalogue.embeds, rows);
    if (items) return { body: pageJson(items, fields, warnings.length ? { warnings } : {}), warnings };
  }
  throw itemsVanishing();
}

/** Any result, hidden ones included; 404 when there is none (also when it went with its benchmark). */
export async function getResult(em: EntityManager, services: ResultServices, id: string): Promise<JsonText> {
  for (let attempt = 1; attempt <= PAGE_READ_ATTEMPTS; attempt++) {
    const rows = await em.execute<ResultTextRow[]>(RESULT_BY_ID_SQL, [id]);
    if (!rows[0]) throw errors.notFound('Result', id);
    const items = await resultItemsJson(em, services.catalogue.embeds, rows);
    if (items) return new JsonText(...items[0]!);
  }
  throw itemsVanishing();
}

const ADD_TAGS_SQL = insertFromArrays(RESULT_TAG_TABLE, () => '?', 'on conflict do nothing');

/**
 * Replaces the tags of a result: its uploader or an administrator (403 NOT_UPLOADER otherwise).
 * The result row is locked first (the lock claims and deletion take), and the tags are locked
 * against a concurrent delete or reject: replacements of one result run one after the other, so
 * racing ones end with exactly one of the requested sets, and repeating one changes nothing.
 */
export async function replaceResultTags(em: EntityManager, caller: Caller, id: string, tagIds: readonly string[]): Promise<void> {
  const unique = [...new Set(tagIds)];
  await transaction(em, async (tx) => {
    requireUploaderOrAdmin(caller, await lockResult(tx, id));
    const found = new Map(
      (await tx.execute<{ id: string; status: string }[]>('select id, status from tag where id = any(?::uuid[]) for share', [unique])).map(
        (t) => [t.id, t],
      ),
    );
    for (const tagId of unique) if (!found.has(tagId)) throw errors.notFound('Tag', tagId);
    for (const tagId of unique) requireApproved(found.get(tagId)!, 'Tag', tagId);
    await tx.execute('delete from result_tag where result_id = ? and tag_id <> all(?::uuid[])', [id, unique]);
    const links = unique.map((tagId): ResultTagRow => ({ result_id: id, tag_id: tagId }));
    await tx.execute(ADD_TAGS_SQL, columnArrays(RESULT_TAG_TABLE, links));
  });
}

/** Deletes a result for good: kept in the database, hidden everywhere but GET /results/{id}. */
export async function deleteResult(em: EntityManager, id: string): Promise<void> {
  await transaction(em, async (tx) => {
    await lockResult(tx, id);
    await tx.execute('update result set deleted = true where id = ?', [id]);
    await refreshHidden(tx, id);
  });
}

/** The uploader of a result, with email (administrators only). */
export async function resultUploader(em: EntityManager, id: string) {
  const result = await em.findOne(Result, { id });
  if (!result) throw errors.notFound('Result', id);
  const user = await em.findOneOrFail(User, { iss: result.uploader_iss, sub: result.uploader_sub });
  return {
    iss: user.iss,
    sub: user.sub,
    email: user.removed_datetime ? null : (user.email ?? null),
    registration_datetime: formatTimestamp(user.registration_datetime),
    terms_version: user.terms_version,
    removed: user.removed_datetime != null,
  };
}
