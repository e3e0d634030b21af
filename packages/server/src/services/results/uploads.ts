/**
 * Uploads: POST /results (one result) and POST /results:batch (many, all or none). Both check each
 * item the same way (its execution time, the catalogue rows it names, its document against the
 * benchmark's schema) and store through one guarded insert, for one result or many: a statement
 * that inserts every result and tag only if the catalogue rows are still approved and at the
 * versions the documents were checked against.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../../core/caller.ts';
import { AppError, type ErrorDetail } from '../../core/errors.ts';
import { prepared } from '../../db/bound-driver.ts';
import { formatTimestamp } from '../../core/format.ts';
import type { ResultValidator } from '../schemas/json-schema.ts';
import type { ResultView } from './results.ts';
import { SchemaNotCompiled } from '../schemas/schema-compiler.ts';
import { readUploadTarget, targetKey, uploadFieldError, type UploadTarget, type UploadTargets } from './upload-targets.ts';
import { benchmarkView, flavorView, siteView, tagView } from '../catalogue/views.ts';
import {
  columnArrays,
  insertFromArrays,
  RESULT_TABLE,
  RESULT_TAG_TABLE,
  type ResultRow,
  type ResultTagRow,
} from '../../db/table-columns.ts';

/** How far in the future an execution may start: clocks of uploading machines drift. */
export const CLOCK_TOLERANCE_MS = 5 * 60_000;
const ZONE = /(Z|[+-]\d{2}:?\d{2})$/i;

/** What POST /results takes as its query. */
export interface CreateResultQuery {
  benchmark_id: string;
  flavor_id: string;
  execution_datetime: string;
  tags_ids?: string[];
}

/** One item of a batch upload: what POST /results takes as query and body. */
export interface UploadRequest extends CreateResultQuery {
  json: Record<string, unknown>;
}

/** The most refused items a batch answer lists. */
const MAX_BATCH_ERRORS = 50;

/** How many guarded inserts an upload tries while the catalogue keeps changing under it. */
const STORE_ATTEMPTS = 3;

/** A zoned date-time, not in the future (beyond the clock tolerance). */
function executionTime(value: string): Date {
  const at = new Date(value);
  if (!ZONE.test(value) || Number.isNaN(at.getTime())) {
    throw uploadFieldError(
      422,
      'INVALID_EXECUTION_DATETIME',
      'execution_datetime',
      'execution_datetime must be a date-time with a zone designator (Z or an offset), e.g. 2025-01-31T10:00:00Z.',
      'must include a zone designator',
    );
  }
  if (at.getTime() > Date.now() + CLOCK_TOLERANCE_MS) {
    throw uploadFieldError(
      422,
      'EXECUTION_IN_FUTURE',
      'execution_datetime',
      `execution_datetime ${value} is in the future.`,
      'must not be in the future',
    );
  }
  return at;
}

/** PostgreSQL cannot store U+0000 in jsonb: the JSON pointer of the first string or key holding one. */
export function nulPointer(json: unknown): string | null {
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

/** Checks a document against its benchmark's schema: every violation (bounded), in `json`. */
async function validateDocument(targets: UploadTargets, target: UploadTarget, json: Record<string, unknown>): Promise<void> {
  const { benchmark } = target;
  let validate: ResultValidator;
  try {
    validate = await targets.validators.validator(benchmark.json_schema);
  } catch (err) {
    if (!(err instanceof SchemaNotCompiled)) throw err; // e.g. 503: the server is stopping
    throw uploadFieldError(
      422,
      'INVALID_BENCHMARK_SCHEMA',
      'benchmark_id',
      `The json_schema of benchmark ${benchmark.id} does not compile (${err.message}); ask an administrator to fix it.`,
      'names a benchmark whose json_schema does not compile',
      { cause: err },
    );
  }
  const nul = nulPointer(json);
  if (nul) {
    throw new AppError(422, 'UNSUPPORTED_CHARACTER', 'The result holds the NUL character (\\u0000), which cannot be stored.', {
      errors: [{ in: 'json', path: nul, message: 'must not contain the NUL character' }],
    });
  }
  const problems = validate(json);
  if (problems) {
    throw new AppError(
      422,
      'SCHEMA_VIOLATION',
      `The result does not satisfy the json_schema of benchmark ${benchmark.id}: ${problems.length} violation(s).`,
      { errors: problems },
    );
  }
}

/** An upload refused: the item's index and why (a 4xx AppError whose `errors[]` name its fields). */
interface Refusal {
  index: number;
  error: AppError;
}

/** `err` as the reason to refuse an item; anything else (a 5xx, a bug) is no item's fault and propagates. */
function refusable(err: unknown): AppError {
  if (!(err instanceof AppError) || err.status >= 500) throw err;
  return err;
}

/** A result about to be stored. */
interface UploadRow {
  id: string;
  target: UploadTarget;
  executedAt: Date;
  json: Record<string, unknown>;
}

/**
 * Inserts results and their tags in one statement, only if every catalogue row they name is still
 * approved and at the version checked: `ref` lists each distinct (kind, id, version) once. Returns
 * how many results were stored: all of them, or none when something changed in between.
 */
const GUARDED_INSERT_SQL =
  'with ref as (select g.version = case g.kind ' +
  "when 'benchmark' then (select xmin::text from benchmark where id = g.id and status = 'approved') " +
  "when 'flavor' then (select xmin::text from flavor where id = g.id and status = 'approved') " +
  "when 'site' then (select xmin::text from site where id = g.id and status = 'approved') " +
  "when 'tag' then (select xmin::text from tag where id = g.id and status = 'approved') end as current " +
  'from unnest(?::text[], ?::uuid[], ?::text[]) as g(kind, id, version)), ' +
  'ok as (select not exists (select 1 from ref where current is not true) as ok), ' +
  `r as (${insertFromArrays(RESULT_TABLE, () => '?', ', ok where ok.ok returning id')}), ` +
  `rt as (${insertFromArrays(RESULT_TAG_TABLE, () => '?', 'where exists (select 1 from r)')}) ` +
  'select count(*)::int as stored from r';

/** Stores `rows` with one guarded insert; false when a catalogue row changed since it was read. */
async function guardedInsert(em: EntityManager, caller: Caller, rows: readonly UploadRow[], uploadedAt: Date): Promise<boolean> {
  const refs = new Map<string, [kind: string, id: string, version: string]>();
  const ref = (kind: string, row: { id: string; version: string }) =>
    refs.set(`${kind} ${row.id} ${row.version}`, [kind, row.id, row.version]);
  for (const { target } of rows) {
    ref('benchmark', target.benchmark);
    ref('flavor', target.flavor);
    ref('site', target.site);
    for (const tag of target.tags) ref('tag', tag);
  }
  const results = rows.map(
    (r): ResultRow => ({
      id: r.id,
      benchmark_id: r.target.benchmark.id,
      site_id: r.target.site.id,
      flavor_id: r.target.flavor.id,
      json: JSON.stringify(r.json),
      execution_datetime: r.executedAt,
      upload_datetime: uploadedAt,
      uploader_iss: caller.identity.iss,
      uploader_sub: caller.identity.sub,
      deleted: false,
      hidden: false,
    }),
  );
  const tags = rows.flatMap((r) => r.target.tags.map((t): ResultTagRow => ({ result_id: r.id, tag_id: t.id })));
  // Each array is one parameter: one text for one result or 500, with or without tags, prepared.
  const sql = prepared(GUARDED_INSERT_SQL);
  const [result] = await em.execute<{ stored: number }[]>(sql, [
    [...refs.values()].map(([kind]) => kind),
    [...refs.values()].map(([, id]) => id),
    [...refs.values()].map(([, , version]) => version),
    ...columnArrays(RESULT_TABLE, results),
    ...columnArrays(RESULT_TAG_TABLE, tags),
  ]);
  return result!.stored === rows.length;
}

/**
 * Checks every item and stores them all, or throws. Each item's execution time is checked first,
 * then the catalogue of each distinct target comes from `targets` or is read (in parallel on the
 * pool, one after another in a transaction), then each document is checked against its benchmark's
 * schema; when any item is refused, `refused` builds the error thrown (every refusal, in item
 * order). When the guarded insert finds a row changed, the targets are read and the documents
 * checked again: 503 `changing` after STORE_ATTEMPTS tries.
 */
async function storeUploads(
  em: EntityManager,
  targets: UploadTargets,
  caller: Caller,
  items: readonly UploadRequest[],
  refused: (refusals: Refusal[]) => AppError,
  changing: string,
): Promise<{ rows: UploadRow[]; uploadedAt: Date }> {
  const badTimes: Refusal[] = [];
  const checked: { index: number; item: UploadRequest; tagIds: string[]; key: string; executedAt: Date }[] = [];
  items.forEach((item, index) => {
    try {
      const tagIds = [...new Set(item.tags_ids ?? [])];
      checked.push({
        index,
        item,
        tagIds,
        key: targetKey(item.benchmark_id, item.flavor_id, tagIds),
        executedAt: executionTime(item.execution_datetime),
      });
    } catch (err) {
      badTimes.push({ index, error: refusable(err) });
    }
  });
  for (let attempt = 1; ; attempt++) {
    // Each distinct target once, remembered or read; a refused one is refused for each of its items.
    const found = new Map<string, UploadTarget | AppError>();
    const missing = new Map<string, (typeof checked)[number]>();
    for (const c of checked) {
      if (found.has(c.key) || missing.has(c.key)) continue;
      const known = targets.get(c.key);
      if (known) found.set(c.key, known);
      else missing.set(c.key, c);
    }
    const read = async ([key, c]: [string, (typeof checked)[number]]) => {
      try {
        const target = await readUploadTarget(em, c.item.benchmark_id, c.item.flavor_id, c.tagIds);
        targets.set(key, target);
        found.set(key, target);
      } catch (err) {
        found.set(key, refusable(err));
      }
    };
    // A transaction (an upload with an Idempotency-Key) has one connection: one statement at a time.
    if (em.isInTransaction()) for (const entry of missing) await read(entry);
    else await Promise.all([...missing].map(read));
    const refusals = [...badTimes];
    const rows: UploadRow[] = [];
    for (const c of checked) {
      const target = found.get(c.key)!;
      if (target instanceof AppError) {
        refusals.push({ index: c.index, error: target });
        continue;
      }
      try {
        await validateDocument(targets, target, c.item.json);
        rows.push({ id: randomUUID(), target, executedAt: c.executedAt, json: c.item.json });
      } catch (err) {
        refusals.push({ index: c.index, error: refusable(err) });
      }
    }
    if (refusals.length) throw refused(refusals.sort((a, b) => a.index - b.index));
    const uploadedAt = new Date();
    if (await guardedInsert(em, caller, rows, uploadedAt)) return { rows, uploadedAt };
    // Something changed since these rows were read: read them again (404/422 if they are gone).
    for (const c of checked) targets.forget(c.key);
    if (attempt >= STORE_ATTEMPTS) throw new AppError(503, 'CATALOGUE_CHANGING', changing, { headers: { 'Retry-After': '1' } });
  }
}

/**
 * Uploads a result (POST /results). Usually one statement besides the caller's lookup: the
 * catalogue rows it refers to come from `targets`, and the insert checks they are unchanged. When
 * they are unknown or have changed, they are read (and the document checked) again: two
 * statements, three when a concurrent change has to be caught up with.
 */
export async function createResult(
  em: EntityManager,
  targets: UploadTargets,
  caller: Caller,
  query: CreateResultQuery,
  json: Record<string, unknown>,
): Promise<ResultView> {
  const { rows, uploadedAt } = await storeUploads(
    em,
    targets,
    caller,
    [{ ...query, json }],
    ([first]) => first!.error,
    'The benchmark, flavor, site or tags of this result changed while it was stored; try again.',
  );
  const { id, target, executedAt } = rows[0]!;
  return {
    id,
    execution_datetime: formatTimestamp(executedAt),
    upload_datetime: formatTimestamp(uploadedAt),
    benchmark: benchmarkView(target.benchmark),
    site: siteView(target.site),
    flavor: flavorView(target.flavor),
    tags: target.tags.map(tagView),
    json,
    hidden: false,
  };
}

/**
 * Where in a batch body the errors of a refused item belong, from their data: a field of the item
 * (`in: 'query'`, with the error's detail) or a place in its document (`in: 'json'`); an error
 * naming neither belongs to the item as a whole.
 */
function itemErrors({ index, error }: Refusal): ErrorDetail[] {
  const at = `/items/${index}`;
  const message = (text: string) => `item ${index}: ${text}`;
  if (!error.errors?.length) return [{ in: 'body', path: at, message: message(error.detail) }];
  return error.errors.map((e) =>
    e.in === 'json'
      ? { in: 'body', path: `${at}/json${e.path === '/' ? '' : e.path}`, message: message(e.message) }
      : { in: 'body', path: `${at}/${e.path}`, message: message(error.detail) },
  );
}

/**
 * Uploads many results, all or none (POST /results:batch): each item is checked as createResult
 * checks one, and every refused item is reported with its index and field (404 when each names
 * something unknown, 422 otherwise). Then one guarded insert stores them all.
 */
export async function createResults(
  em: EntityManager,
  targets: UploadTargets,
  caller: Caller,
  items: readonly UploadRequest[],
): Promise<{ ids: string[] }> {
  const { rows } = await storeUploads(
    em,
    targets,
    caller,
    items,
    (refusals) =>
      new AppError(
        refusals.every((r) => r.error.status === 404) ? 404 : 422,
        'BATCH_REFUSED',
        `${refusals.length} of ${items.length} results were refused; nothing was stored.`,
        // In item order, so the first 50 are those of the first items.
        { errors: refusals.flatMap(itemErrors).slice(0, MAX_BATCH_ERRORS) },
      ),
    'The benchmarks, flavors, sites or tags of these results changed while they were stored; try again.',
  );
  return { ids: rows.map((r) => r.id) };
}
