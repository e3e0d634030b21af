/**
 * Results: upload (validated against the benchmark's schema), reading with embedded catalogue
 * objects loaded in batches, tags, deletion and the uploader view.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Benchmark, Flavor, Result, Site, User, type BenchmarkRow, type FlavorRow, type SiteRow, type TagRow } from '../entities/index.ts';
import type { Caller } from '../core/caller.ts';
import { AppError, errors, type ErrorDetail } from '../core/errors.ts';
import { benchmarkView, flavorView, siteView, tagView } from './views.ts';
import { formatTimestamp } from './format.ts';
import type { ResultValidator } from './json-schema.ts';
import { SchemaNotCompiled, type SchemaCompiler } from './schema-compiler.ts';
import { checkPageDepth, itemsVanishing, pageJson, pageRequest, PAGE_READ_ATTEMPTS } from './pagination.ts';
import { findResultRows, isExpensiveList, metricIndexedList, RESULT_BY_ID_SQL, type ResultListQuery, type ResultScope, type ResultTextRow } from './result-query.ts';
import type { TotalCache } from './total-cache.ts';
import type { EmbedCache, EmbedRef } from './embeds.ts';
import type { MetricIndexes } from './metric-indexes.ts';

/** The per-process caches result reading uses (AppContext). */
export interface ResultServices {
  totals: TotalCache;
  embeds: EmbedCache;
  metrics?: MetricIndexes;
  /** How deep paging may reach (page × per_page); absent: no limit. */
  config?: { maxPageDepth: number };
  /** Runs expensive lists a few at a time (services/admission.ts ExpensiveListAdmission); absent: at once. */
  expensiveLists?: { run<T>(work: () => Promise<T>): Promise<T> };
}
import { JsonText } from '../core/reply.ts';
import { lockResult, refreshHidden, requireUploaderOrAdmin } from './claims.ts';
import { prepared } from '../db/bound-driver.ts';
import { transaction } from '../db/transaction.ts';

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
 * Result items as JSON text. Benchmark, site, flavor and tags come from the embed cache at the
 * versions the page's statement saw (no statement at all once they are known); each document is
 * spliced in as PostgreSQL prints it (`json::text`), never parsed and re-serialised. null when one
 * of those rows was deleted after the page's statement: the caller reads the rows again.
 */
export async function resultItemsJson(em: EntityManager, embeds: EmbedCache, rows: ResultTextRow[]): Promise<string[][] | null> {
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
  if (refs.some((ref) => !texts.has(`${ref.kind}:${ref.id}`))) return null;
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
 * again: it then shows the results as they are now.
 */
export async function listResults(em: EntityManager, services: ResultServices, query: ResultListQuery, scope: ResultScope): Promise<JsonText> {
  if (services.config) checkPageDepth(pageRequest(query), services.config.maxPageDepth);
  const expensive = isExpensiveList(query, await metricIndexedList(em, query, scope, services.metrics));
  const read = async () => {
    for (let attempt = 1; attempt <= PAGE_READ_ATTEMPTS; attempt++) {
      const { rows, total, request } = await findResultRows(em, query, scope, services.totals, services.metrics, { sequential: expensive });
      const items = await resultItemsJson(em, services.embeds, rows);
      if (items) return pageJson(items, total, request);
    }
    throw itemsVanishing();
  };
  return expensive && services.expensiveLists ? services.expensiveLists.run(read) : read();
}

/** Any result, hidden ones included; 404 when there is none (also when it went with its benchmark). */
export async function getResult(em: EntityManager, services: ResultServices, id: string): Promise<JsonText> {
  for (let attempt = 1; attempt <= PAGE_READ_ATTEMPTS; attempt++) {
    const rows = await em.execute<ResultTextRow[]>(RESULT_BY_ID_SQL, [id]);
    if (!rows[0]) throw errors.notFound('Result', id);
    const items = await resultItemsJson(em, services.embeds, rows);
    if (items) return new JsonText(...items[0]!);
  }
  throw itemsVanishing();
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

type Versioned<T> = T & { version: string };

/** What an upload needs to know of the catalogue, read in one statement, with row versions. */
interface UploadCatalogue {
  benchmark: Versioned<BenchmarkRow> | null;
  flavor: Versioned<FlavorRow> | null;
  site: Versioned<SiteRow> | null;
  tags: Versioned<TagRow>[] | null;
}

const versioned = (alias: string) => `to_jsonb(${alias}) || jsonb_build_object('version', ${alias}.xmin::text)`;
const UPLOAD_CATALOGUE_SQL =
  `select (select ${versioned('b')} from benchmark b where b.id = ?) as benchmark, ` +
  `(select ${versioned('f')} from flavor f where f.id = ?) as flavor, ` +
  `(select ${versioned('s')} from site s where s.id = (select site_id from flavor where id = ?)) as site, ` +
  `(select jsonb_agg(${versioned('t')}) from tag t where t.id = any(array[?]::uuid[])) as tags`;

/**
 * Inserts the result and its tags in one statement, only if the benchmark, flavor, site and tags
 * are still approved and at the versions the upload was validated against; returns 1 when stored,
 * 0 when something changed in between.
 */
const GUARDED_INSERT_SQL = prepared(
  'with ok as (select ' +
  "(select xmin::text from benchmark where id = ? and status = 'approved') = ? " +
  "and (select xmin::text from flavor where id = ? and status = 'approved') = ? " +
  "and (select xmin::text from site where id = ? and status = 'approved') = ? " +
  "and (select count(*) from tag t where t.id = any(array[?]::uuid[]) and t.status = 'approved' and t.id::text || ' ' || t.xmin::text = any(array[?]::text[])) = ? as ok), " +
  'r as (insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden) ' +
  'select ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, false, false from ok where ok.ok returning id), ' +
  'rt as (insert into result_tag (result_id, tag_id) select r.id, t.id from r, unnest(array[?]::uuid[]) as t(id)) ' +
  'select count(*)::int as stored from r',
); // prepared: one text per number of tags (arrays expand into one placeholder each)

/** The approved catalogue rows an upload refers to, at known versions. */
interface UploadTarget {
  benchmark: Versioned<BenchmarkRow>;
  flavor: Versioned<FlavorRow>;
  site: Versioned<SiteRow>;
  tags: Versioned<TagRow>[];
}

/**
 * The targets of recent uploads, per (benchmark, flavor, tags), so that an upload is validated and
 * stored in one statement: the insert itself checks that nothing changed (GUARDED_INSERT_SQL), and
 * only when something did are the rows read again. Their benchmarks' result validators come from
 * `validators` (compiled in a worker thread, then cached).
 */
export class UploadTargets {
  private readonly entries = new Map<string, { target: UploadTarget; expires: number }>();
  constructor(
    readonly validators: SchemaCompiler,
    private readonly ttlMs = 60_000,
    private readonly maxEntries = 1_000,
  ) {}
  get(key: string): UploadTarget | undefined {
    const hit = this.entries.get(key);
    return hit && hit.expires > Date.now() ? hit.target : undefined;
  }
  set(key: string, target: UploadTarget): void {
    this.entries.delete(key);
    this.entries.set(key, { target, expires: Date.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
  forget(key: string): void {
    this.entries.delete(key);
  }
}

/** Reads the catalogue an upload refers to: 404 for what is missing, 422 for what is not approved. */
async function readUploadTarget(em: EntityManager, query: CreateResultQuery, tagIds: string[]): Promise<UploadTarget> {
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
  return { benchmark, flavor, site: site!, tags: [...tagsById.values()].sort(byNameThenId) };
}

async function validateUpload(targets: UploadTargets, benchmark: BenchmarkRow, json: Record<string, unknown>): Promise<void> {
  let validate: ResultValidator;
  try {
    validate = await targets.validators.validator(benchmark.json_schema);
  } catch (err) {
    if (!(err instanceof SchemaNotCompiled)) throw err; // e.g. 503: the server is stopping
    const reason = err.message;
    throw new AppError(422, 'INVALID_BENCHMARK_SCHEMA', `The json_schema of benchmark ${benchmark.id} does not compile (${reason}); ask an administrator to fix it.`, { cause: err });
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
}

/**
 * Uploads a result. Usually one statement besides the caller's lookup: the catalogue rows it refers
 * to come from `targets`, and the insert checks they are unchanged. When they are unknown or have
 * changed, they are read (and the document validated) again: two statements, three when a
 * concurrent change has to be caught up with.
 */
export async function createResult(
  em: EntityManager,
  targets: UploadTargets,
  caller: Caller,
  query: CreateResultQuery,
  json: Record<string, unknown>,
): Promise<ResultView> {
  const executedAt = executionTime(query.execution_datetime);
  const tagIds = [...new Set(query.tags_ids ?? [])];
  const key = `${query.benchmark_id} ${query.flavor_id} ${[...tagIds].sort().join(' ')}`;
  const id = randomUUID();
  const text = JSON.stringify(json);
  let target = targets.get(key);
  for (let attempt = 0; ; attempt++) {
    if (!target) {
      target = await readUploadTarget(em, query, tagIds);
      targets.set(key, target);
    }
    await validateUpload(targets, target.benchmark, json);
    const { benchmark, flavor, site, tags } = target;
    const uploadedAt = new Date();
    const [row] = await em.execute<{ stored: number }[]>(GUARDED_INSERT_SQL, [
      benchmark.id, benchmark.version, flavor.id, flavor.version, site.id, site.version,
      tags.map((t) => t.id), tags.map((t) => `${t.id} ${t.version}`), tags.length,
      id, benchmark.id, site.id, flavor.id, text, executedAt, uploadedAt, caller.identity.iss, caller.identity.sub,
      tags.map((t) => t.id),
    ]);
    if (row!.stored === 1) {
      return {
        id,
        execution_datetime: formatTimestamp(executedAt),
        upload_datetime: formatTimestamp(uploadedAt),
        benchmark: benchmarkView(benchmark),
        site: siteView(site),
        flavor: flavorView(flavor),
        tags: tags.map(tagView),
        json,
        hidden: false,
      };
    }
    // Something changed since these rows were read: read them again (404/422 if they are gone).
    targets.forget(key);
    target = undefined;
    if (attempt >= 2) {
      throw new AppError(503, 'CATALOGUE_CHANGING', 'The benchmark, flavor, site or tags of this result changed while it was stored; try again.', {
        headers: { 'Retry-After': '1' },
      });
    }
  }
}

/** One item of a batch upload: what POST /results takes as query and body. */
export interface UploadRequest extends CreateResultQuery {
  json: Record<string, unknown>;
}

/** The most refused items a batch answer lists. */
const MAX_BATCH_ERRORS = 50;

/** Where in a batch body an upload error belongs, and its details there. */
function itemErrors(index: number, err: AppError): ErrorDetail[] {
  const at = `/items/${index}`;
  const field =
    err.code === 'INVALID_EXECUTION_DATETIME' || err.code === 'EXECUTION_IN_FUTURE'
      ? 'execution_datetime'
      : /^(Flavor|Site) /.test(err.detail)
        ? 'flavor_id'
        : /^Tag /.test(err.detail)
          ? 'tags_ids'
          : 'benchmark_id';
  if (err.errors?.length && (err.code === 'SCHEMA_VIOLATION' || err.code === 'UNSUPPORTED_CHARACTER')) {
    return err.errors.map((e) => ({ in: 'body' as const, path: `${at}/json${e.path === '/' ? '' : e.path}`, message: `item ${index}: ${e.message}` }));
  }
  return [{ in: 'body', path: `${at}/${field}`, message: `item ${index}: ${err.detail}` }];
}

/**
 * Uploads many results, all or none (POST /results:batch). Each item is checked as createResult
 * checks one; the catalogue rows of every distinct (benchmark, flavor, tags) come from `targets`
 * or one read each; then every result and tag is inserted by one statement that also checks that
 * those rows are unchanged and approved. Refused items are all reported, with their index.
 */
export async function createResults(em: EntityManager, targets: UploadTargets, caller: Caller, items: readonly UploadRequest[]): Promise<{ ids: string[] }> {
  const problems: ErrorDetail[] = [];
  let allNotFound = true;
  const refuse = (index: number, err: unknown) => {
    if (!(err instanceof AppError) || err.status >= 500) throw err;
    if (err.status !== 404) allNotFound = false;
    problems.push(...itemErrors(index, err));
  };
  const prepared = items.map((item, index) => {
    try {
      const tagIds = [...new Set(item.tags_ids ?? [])];
      return { index, item, tagIds, key: `${item.benchmark_id} ${item.flavor_id} ${[...tagIds].sort().join(' ')}`, executedAt: executionTime(item.execution_datetime) };
    } catch (err) {
      refuse(index, err);
      return null;
    }
  });
  for (let attempt = 0; ; attempt++) {
    // The catalogue of each distinct target, remembered or read (a refused one is refused for each item).
    const found = new Map<string, UploadTarget | AppError>();
    const missing = new Map<string, NonNullable<(typeof prepared)[number]>>();
    for (const p of prepared) {
      if (!p || found.has(p.key) || missing.has(p.key)) continue;
      const known = targets.get(p.key);
      if (known) found.set(p.key, known);
      else missing.set(p.key, p);
    }
    // The others read together (in parallel on the pool), not one after another.
    await Promise.all(
      [...missing].map(async ([key, p]) => {
        try {
          const target = await readUploadTarget(em, p.item, p.tagIds);
          targets.set(key, target);
          found.set(key, target);
        } catch (err) {
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          found.set(key, err);
        }
      }),
    );
    const rows: { id: string; target: UploadTarget; executedAt: Date; text: string }[] = [];
    // Every document checked against the rows just found (again after a concurrent change).
    for (const p of prepared) {
      if (!p) continue;
      const target = found.get(p.key)!;
      if (target instanceof AppError) {
        refuse(p.index, target);
        continue;
      }
      try {
        await validateUpload(targets, target.benchmark, p.item.json);
      } catch (err) {
        refuse(p.index, err);
      }
    }
    if (problems.length) {
      const refused = new Set(problems.map((e) => e.path.split('/')[2])).size;
      const index = (e: ErrorDetail) => Number(e.path.split('/')[2]);
      throw new AppError(allNotFound ? 404 : 422, 'BATCH_REFUSED', `${refused} of ${items.length} results were refused; nothing was stored.`, {
        // In item order (stable: an item's own details keep theirs), so the first 50 are the first items.
        errors: [...problems].sort((a, b) => index(a) - index(b)).slice(0, MAX_BATCH_ERRORS),
      });
    }
    for (const p of prepared) rows.push({ id: randomUUID(), target: found.get(p!.key) as UploadTarget, executedAt: p!.executedAt, text: JSON.stringify(p!.item.json) });

    // One guard for every distinct target: its rows unchanged and approved.
    const distinct = [...new Set(rows.map((r) => r.target))];
    const guards: string[] = [];
    const guardParams: unknown[] = [];
    for (const t of distinct) {
      guards.push(
        "(select xmin::text from benchmark where id = ? and status = 'approved') = ? " +
          "and (select xmin::text from flavor where id = ? and status = 'approved') = ? " +
          "and (select xmin::text from site where id = ? and status = 'approved') = ?",
      );
      guardParams.push(t.benchmark.id, t.benchmark.version, t.flavor.id, t.flavor.version, t.site.id, t.site.version);
    }
    const tags = new Map(distinct.flatMap((t) => t.tags.map((tag) => [tag.id, tag] as const)));
    guards.push("(select count(*) from tag t where t.id = any(array[?]::uuid[]) and t.status = 'approved' and t.id::text || ' ' || t.xmin::text = any(array[?]::text[])) = ?");
    guardParams.push([...tags.keys()], [...tags.values()].map((t) => `${t.id} ${t.version}`), tags.size);
    const tagRows = rows.flatMap((r) => r.target.tags.map((t) => [r.id, t.id] as const));
    const uploadedAt = new Date();
    const [stored] = await em.execute<{ stored: number }[]>(
      `with ok as (select ${guards.join(' and ')} as ok), ` +
        'r as (insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden) ' +
        'select u.id, u.benchmark_id, u.site_id, u.flavor_id, u.json::jsonb, u.execution_datetime, ?, ?, ?, false, false ' +
        'from unnest(array[?]::uuid[], array[?]::uuid[], array[?]::uuid[], array[?]::uuid[], array[?]::text[], array[?]::timestamptz[]) ' +
        'as u(id, benchmark_id, site_id, flavor_id, json, execution_datetime), ok where ok.ok returning id), ' +
        'rt as (insert into result_tag (result_id, tag_id) select v.result_id, v.tag_id ' +
        'from unnest(array[?]::uuid[], array[?]::uuid[]) as v(result_id, tag_id) where exists (select 1 from r)) ' +
        'select count(*)::int as stored from r',
      [
        ...guardParams,
        uploadedAt, caller.identity.iss, caller.identity.sub,
        rows.map((r) => r.id), rows.map((r) => r.target.benchmark.id), rows.map((r) => r.target.site.id), rows.map((r) => r.target.flavor.id),
        rows.map((r) => r.text), rows.map((r) => r.executedAt),
        tagRows.map(([id]) => id), tagRows.map(([, tag]) => tag),
      ],
    );
    if (stored!.stored === rows.length) return { ids: rows.map((r) => r.id) };
    // Something changed since these rows were read: read them again.
    for (const t of distinct) for (const p of prepared) if (found.get(p!.key) === t) targets.forget(p!.key);
    if (attempt >= 2) {
      throw new AppError(503, 'CATALOGUE_CHANGING', 'The benchmarks, flavors, sites or tags of these results changed while they were stored; try again.', {
        headers: { 'Retry-After': '1' },
      });
    }
  }
}

const byNameThenId = (x: TagRow, y: TagRow) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id < y.id ? -1 : 1);

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
      (await tx.execute<{ id: string; status: string }[]>('select id, status from tag where id = any(array[?]::uuid[]) for share', [unique])).map((t) => [t.id, t]),
    );
    for (const tagId of unique) if (!found.has(tagId)) throw errors.notFound('Tag', tagId);
    for (const tagId of unique) requireApproved(found.get(tagId)!, 'Tag', tagId);
    await tx.execute('delete from result_tag where result_id = ? and tag_id <> all(array[?]::uuid[])', [id, unique]);
    await tx.execute(
      'insert into result_tag (result_id, tag_id) select ?, t.id from unnest(array[?]::uuid[]) as t(id) on conflict do nothing',
      [id, unique],
    );
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
