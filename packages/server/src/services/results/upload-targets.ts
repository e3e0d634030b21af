/**
 * The catalogue rows an upload names (benchmark, flavor, the flavor's site, tags), read in one
 * statement with their row versions, and remembered per (benchmark, flavor, tags) for the next
 * uploads. A remembered target is never trusted: the guarded insert (services/results/uploads.ts) checks
 * that its rows are still approved and at those versions, and only when they are not are the rows
 * read again.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import type { BenchmarkRow, FlavorRow, SiteRow, TagRow } from '../../entities/index.ts';
import { AppError } from '../../core/errors.ts';
import type { SchemaCompiler } from '../schemas/schema-compiler.ts';

export type Versioned<T> = T & { version: string };

/** The fields of an upload an error can name: the query of POST /results, an item of POST /results:batch. */
export type UploadField = 'benchmark_id' | 'flavor_id' | 'execution_datetime' | 'tags_ids';

/**
 * An error about one field of an upload. The field travels as data, as the one entry of `errors[]`
 * (`{in: 'query', path: field}`): a batch places it under its item (`/items/3/flavor_id`) from there.
 */
export function uploadFieldError(
  status: number,
  code: string,
  field: UploadField,
  detail: string,
  message: string,
  options: { cause?: unknown } = {},
): AppError {
  return new AppError(status, code, detail, { errors: [{ in: 'query', path: field, message }], cause: options.cause });
}

/** The approved catalogue rows an upload refers to, at known versions; tags by name, then id. */
export interface UploadTarget {
  benchmark: Versioned<BenchmarkRow>;
  flavor: Versioned<FlavorRow>;
  site: Versioned<SiteRow>;
  tags: Versioned<TagRow>[];
}

/** The key of a target: the same benchmark, flavor and set of tags, whatever their order. */
export function targetKey(benchmarkId: string, flavorId: string, tagIds: readonly string[]): string {
  return `${benchmarkId} ${flavorId} ${[...tagIds].sort().join(' ')}`;
}

/**
 * The targets of recent uploads, so that an upload is usually validated and stored with one
 * statement. Their benchmarks' result validators come from `validators` (compiled in a worker
 * thread, then cached).
 */
export class UploadTargets {
  private readonly entries: LRUCache<string, UploadTarget>;
  constructor(
    readonly validators: SchemaCompiler,
    ttlMs = 60_000,
    maxEntries = 1_000,
  ) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }
  get(key: string): UploadTarget | undefined {
    return this.entries.get(key);
  }
  set(key: string, target: UploadTarget): void {
    this.entries.set(key, target);
  }
  forget(key: string): void {
    this.entries.delete(key);
  }
}

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
  `(select jsonb_agg(${versioned('t')}) from tag t where t.id = any(?::uuid[])) as tags`;

const notFound = (kind: string, id: string, field: UploadField) =>
  uploadFieldError(404, 'NOT_FOUND', field, `${kind} ${id} was not found.`, 'was not found');

function requireApproved(row: { status: string }, kind: string, id: string, field: UploadField, message = 'is not approved'): void {
  if (row.status !== 'approved') {
    throw uploadFieldError(422, 'NOT_APPROVED', field, `${kind} ${id} is not approved yet: results need approved items.`, message);
  }
}

const byNameThenId = (x: TagRow, y: TagRow) => (x.name < y.name ? -1 : x.name > y.name ? 1 : x.id < y.id ? -1 : 1);

/**
 * Reads the catalogue an upload refers to: 404 for what is missing, 422 for what is not approved,
 * each naming the field that refers to it (the site is the flavor's: its errors name `flavor_id`).
 */
export async function readUploadTarget(
  em: EntityManager,
  benchmarkId: string,
  flavorId: string,
  tagIds: readonly string[],
): Promise<UploadTarget> {
  const [found] = await em.execute<UploadCatalogue[]>(UPLOAD_CATALOGUE_SQL, [benchmarkId, flavorId, flavorId, tagIds]);
  const { benchmark, flavor, site, tags } = found!;
  if (!benchmark) throw notFound('Benchmark', benchmarkId, 'benchmark_id');
  requireApproved(benchmark, 'Benchmark', benchmark.id, 'benchmark_id');
  if (!flavor) throw notFound('Flavor', flavorId, 'flavor_id');
  requireApproved(flavor, 'Flavor', flavor.id, 'flavor_id');
  // The flavor's site_id references the site: read in the same statement, it exists.
  requireApproved(site!, 'Site', site!.id, 'flavor_id', 'is a flavor of a site that is not approved');
  const tagsById = new Map((tags ?? []).map((t) => [t.id, t]));
  for (const id of tagIds) if (!tagsById.has(id)) throw notFound('Tag', id, 'tags_ids');
  for (const id of tagIds) requireApproved(tagsById.get(id)!, 'Tag', id, 'tags_ids');
  return { benchmark, flavor, site: site!, tags: [...tagsById.values()].sort(byNameThenId) };
}
