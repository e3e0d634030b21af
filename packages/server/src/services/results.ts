/**
 * Results: upload (validated against the benchmark's schema), reading with embedded catalogue
 * objects loaded in batches, tags, deletion and the uploader view.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Benchmark, Flavor, Result, ResultTag, Site, Tag, User, type BenchmarkRow, type FlavorRow, type SiteRow, type TagRow } from '../entities/index.ts';
import type { Caller } from '../http/handler.ts';
import { AppError, errors } from '../http/errors.ts';
import { benchmarkView } from './benchmarks.ts';
import { siteView } from './sites.ts';
import { flavorView } from './flavors.ts';
import { tagView } from './tags.ts';
import { formatTimestamp } from './format.ts';
import { resultValidator } from './json-schema.ts';
import { pageEnvelope } from './pagination.ts';
import { findResultRows, RESULT_TEXT_COLUMNS, type ResultListQuery, type ResultScope, type ResultTextRow } from './result-query.ts';
import type { TotalCache } from './total-cache.ts';
import { JsonText } from '../http/reply.ts';
import { lockResult, refreshHidden, requireUploaderOrAdmin } from './claims.ts';

/** How far in the future an execution may start: clocks of uploading machines drift. */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;
const ZONE = /(Z|[+-]\d{2}:?\d{2})$/i;

type Catalogue = { status: string };

function requireApproved(row: Catalogue, label: string, id: string): void {
  if (row.status !== 'approved') {
    throw new AppError(422, 'NOT_APPROVED', `${label} ${id} is not approved yet: results need approved items.`);
  }
}

/**
 * Result items as JSON text, embedding benchmark, site, flavor and tags: one query per kind for all
 * the rows, never one per row. Each embedded object is serialised once per response however many
 * results share it (a page of 100 results of one benchmark carries its json_schema 100 times), and
 * each document is spliced in as PostgreSQL prints it (`json::text`), never parsed and re-serialised.
 */
export async function resultItemsJson(em: EntityManager, rows: ResultTextRow[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const ids = (key: 'benchmark_id' | 'site_id' | 'flavor_id') => [...new Set(rows.map((r) => r[key]))];
  const [benchmarks, sites, flavors, tags] = await Promise.all([
    em.execute<BenchmarkRow[]>('select * from benchmark where id = any(array[?]::uuid[])', [ids('benchmark_id')]),
    em.execute<SiteRow[]>('select * from site where id = any(array[?]::uuid[])', [ids('site_id')]),
    em.execute<FlavorRow[]>('select * from flavor where id = any(array[?]::uuid[])', [ids('flavor_id')]),
    em.execute<(TagRow & { result_id: string })[]>(
      'select rt.result_id, t.* from result_tag rt join tag t on t.id = rt.tag_id ' +
        'where rt.result_id = any(array[?]::uuid[]) order by t.name, t.id',
      [rows.map((r) => r.id)],
    ),
  ]);
  const texts = <T extends { id: string }>(list: T[], view: (row: T) => unknown) => new Map(list.map((x) => [x.id, JSON.stringify(view(x))]));
  const [b, s, f] = [texts(benchmarks, benchmarkView), texts(sites, siteView), texts(flavors, flavorView)];
  const tagsOf = new Map<string, string[]>();
  for (const t of tags) {
    const list = tagsOf.get(t.result_id) ?? [];
    list.push(JSON.stringify(tagView(t)));
    tagsOf.set(t.result_id, list);
  }
  // The key order of ResultView.
  return rows.map(
    (r) =>
      `{"id":"${r.id}","execution_datetime":"${formatTimestamp(r.execution_datetime)}","upload_datetime":"${formatTimestamp(r.upload_datetime)}",` +
      `"benchmark":${b.get(r.benchmark_id)!},"site":${s.get(r.site_id)!},"flavor":${f.get(r.flavor_id)!},` +
      `"tags":[${(tagsOf.get(r.id) ?? []).join(',')}],"json":${r.json},"hidden":${r.hidden}}`,
  );
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

/** One page of results as the envelope's JSON text; totals of large lists come from the cache. */
export async function listResults(em: EntityManager, query: ResultListQuery, scope: ResultScope, totals?: TotalCache): Promise<JsonText> {
  const { rows, total, request } = await findResultRows(em, query, scope, totals);
  const items = await resultItemsJson(em, rows);
  const { items: _, ...envelope } = pageEnvelope([], total, request);
  return new JsonText(`{"items":[${items.join(',')}],${JSON.stringify(envelope).slice(1)}`);
}

/** Any result, hidden ones included; 404 when there is none. */
export async function getResult(em: EntityManager, id: string): Promise<JsonText> {
  const rows = await em.execute<ResultTextRow[]>(`select ${RESULT_TEXT_COLUMNS} from result r where r.id = ?`, [id]);
  if (!rows[0]) throw errors.notFound('Result', id);
  return new JsonText((await resultItemsJson(em, rows))[0]!);
}

/** The tags of these ids, each existing (404) and approved (422); duplicates collapsed. */
async function approvedTags(em: EntityManager, tagIds: readonly string[]): Promise<TagRow[]> {
  const unique = [...new Set(tagIds)];
  if (unique.length === 0) return [];
  const found = new Map((await em.find(Tag, { id: { $in: unique } })).map((t) => [t.id, t]));
  for (const id of unique) if (!found.has(id)) throw errors.notFound('Tag', id);
  for (const id of unique) requireApproved(found.get(id)!, 'Tag', id);
  return unique.map((id) => found.get(id)!).sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id < y.id ? -1 : 1));
}

/** A zoned date-time, not in the future (beyond the clock tolerance). */
function executionTime(value: string): Date {
  const at = new Date(value);
  if (!ZONE.test(value) || Number.isNaN(at.getTime())) {
    throw new AppError(422, 'INVALID_EXECUTION_DATETIME', 'execution_datetime must be a date-time with a zone designator (Z or an offset), e.g. 2025-01-31T10:00:00Z.', {
      errors: [{ in: 'query', path: 'execution_datetime', message: 'must include a zone designator' }],
    });
  }
  if (at.getTime() > Date.now() + CLOCK_TOLERANCE_MS) {
    throw new AppError(422, 'EXECUTION_IN_FUTURE', `execution_datetime ${value} is in the future.`, {
      errors: [{ in: 'query', path: 'execution_datetime', message: 'must not be in the future' }],
    });
  }
  return at;
}

/** PostgreSQL cannot store U+0000 in jsonb: the JSON pointer of the first string or key holding one. */
function nulPointer(json: unknown): string | null {
  const stack: [unknown, string][] = [[json, '']];
  while (stack.length) {
    const [value, pointer] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) return pointer || '/';
    } else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const at = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
        if (key.includes('\u0000')) return at;
        stack.push([child, at]);
      }
    }
  }
  return null;
}

export interface CreateResultQuery {
  benchmark_id: string;
  flavor_id: string;
  execution_datetime: string;
  tags_ids?: string[];
}

/** What an upload needs to know of the catalogue, read in one statement. */
interface UploadCatalogue {
  benchmark: BenchmarkRow | null;
  flavor: FlavorRow | null;
  site: SiteRow | null;
  tags: TagRow[] | null;
}

const UPLOAD_CATALOGUE_SQL =
  'select (select to_jsonb(b) from benchmark b where b.id = ?) as benchmark, ' +
  '(select to_jsonb(f) from flavor f where f.id = ?) as flavor, ' +
  '(select to_jsonb(s) from site s where s.id = (select site_id from flavor where id = ?)) as site, ' +
  '(select jsonb_agg(t) from tag t where t.id = any(array[?]::uuid[])) as tags';

/**
 * Uploads a result: two statements in all (the catalogue it refers to, then the result with its
 * tags in one atomic insert), besides the caller's lookup.
 */
export async function createResult(em: EntityManager, caller: Caller, query: CreateResultQuery, json: Record<string, unknown>): Promise<ResultView> {
  const executedAt = executionTime(query.execution_datetime);
  const tagIds = [...new Set(query.tags_ids ?? [])];
  const [found] = await em.execute<UploadCatalogue[]>(UPLOAD_CATALOGUE_SQL, [query.benchmark_id, query.flavor_id, query.flavor_id, tagIds]);
  const { benchmark, flavor, site } = found!;
  if (!benchmark) throw errors.notFound('Benchmark', query.benchmark_id);
  requireApproved(benchmark, 'Benchmark', benchmark.id);
  if (!flavor) throw errors.notFound('Flavor', query.flavor_id);
  requireApproved(flavor, 'Flavor', flavor.id);
  requireApproved(site!, 'Site', site!.id);
  const tagsById = new Map((found!.tags ?? []).map((t) => [t.id, t]));
  for (const id of tagIds) if (!tagsById.has(id)) throw errors.notFound('Tag', id);
  for (const id of tagIds) requireApproved(tagsById.get(id)!, 'Tag', id);
  const tags = [...tagsById.values()].sort(byNameThenId);

  let validate;
  try {
    validate = resultValidator(benchmark.id, benchmark.json_schema);
  } catch (err) {
    throw new AppError(422, 'INVALID_BENCHMARK_SCHEMA', `The json_schema of benchmark ${benchmark.id} does not compile; ask an administrator to fix it.`, { cause: err });
  }
  const nul = nulPointer(json);
  if (nul) {
    throw new AppError(422, 'UNSUPPORTED_CHARACTER', 'The result holds the NUL character (\\u0000), which cannot be stored.', {
      errors: [{ in: 'json', path: nul, message: 'must not contain the NUL character' }],
    });
  }
  const problems = validate(json);
  if (problems) {
    throw new AppError(422, 'SCHEMA_VIOLATION', `The result does not satisfy the json_schema of benchmark ${benchmark.id}: ${problems.length} violation(s).`, { errors: problems });
  }

  const id = randomUUID();
  const uploadedAt = new Date();
  const text = JSON.stringify(json);
  // One statement, so one transaction: the result and its tags are stored together or not at all.
  await em.execute(
    'with r as (insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden) ' +
      'values (?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, false, false) returning id) ' +
      'insert into result_tag (result_id, tag_id) select r.id, t.id from r, unnest(array[?]::uuid[]) as t(id)',
    [id, benchmark.id, site!.id, flavor.id, text, executedAt, uploadedAt, caller.identity.iss, caller.identity.sub, tags.map((t) => t.id)],
  );
  return {
    id,
    execution_datetime: formatTimestamp(executedAt),
    upload_datetime: formatTimestamp(uploadedAt),
    benchmark: benchmarkView(benchmark),
    site: siteView(site!),
    flavor: flavorView(flavor),
    tags: tags.map(tagView),
    json,
    hidden: false,
  };
}

const byNameThenId = (x: TagRow, y: TagRow) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id < y.id ? -1 : 1);

/** Replaces the tags of a result: its uploader or an administrator (403 NOT_UPLOADER otherwise). */
export async function replaceResultTags(em: EntityManager, caller: Caller, id: string, tagIds: readonly string[]): Promise<void> {
  const result = await em.findOne(Result, { id });
  if (!result) throw errors.notFound('Result', id);
  requireUploaderOrAdmin(caller, result);
  const tags = await approvedTags(em, tagIds);
  await em.transactional(async (tx) => {
    await tx.execute('delete from result_tag where result_id = ?', [id]);
    for (const tag of tags) tx.create(ResultTag, { result_id: id, tag_id: tag.id });
    await tx.flush();
  });
}

/** Deletes a result for good: kept in the database, hidden everywhere but GET /results/{id}. */
export async function deleteResult(em: EntityManager, id: string): Promise<void> {
  await em.transactional(async (tx) => {
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
