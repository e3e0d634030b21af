/**
 * Warnings about JSON paths a benchmark's schema does not describe (docs/querying.md). A list, a
 * comparison or an export of one benchmark that names such a path is answered all the same (a
 * schema may allow more than it describes), and says so: the answer's `warnings` and its `Warning`
 * header (http/warnings.ts) name the path and the nearest described one.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import type { Static } from '@sinclair/typebox';
import { UNDESCRIBED_PATH, type Warning } from '@benchmarks/sdk/contract/warnings';
import { parseFilters } from '../query/json-filter.ts';
import { jsonPathText, prefixedJsonPath } from '../query/json-path.ts';
import { parseResultSort } from './result-query.ts';
import { DescribedPaths } from '../schemas/schema-paths.ts';

export type PathWarning = Static<typeof Warning>;

/** The query parameters that take JSON paths. */
export type PathParameter = 'filters' | 'sort_by' | 'metric' | 'columns';

/** A JSON path a query names, and where. */
export interface UsedPath {
  parameter: PathParameter;
  segments: string[];
}

/** Benchmarks whose described paths are kept. */
const MAX_SCHEMAS = 256;

/**
 * The described paths of each benchmark's schema, per row version (`xmin`): a schema changed by
 * any server process is read again at the next use, never used stale. One statement per use, by
 * primary key; the schema itself is read only when its version is new to this process.
 */
export class SchemaPathsCache {
  private readonly entries = new LRUCache<string, { version: string; paths: DescribedPaths }>({ max: MAX_SCHEMAS });

  /** The benchmark's described paths; null when there is no such benchmark. */
  async of(em: EntityManager, benchmarkId: string): Promise<DescribedPaths | null> {
    const known = this.entries.get(benchmarkId);
    const [row] = await em.execute<{ version: string; json_schema: unknown }[]>(
      'select xmin::text as version, case when xmin::text = ? then null else json_schema end as json_schema from benchmark where id = ?',
      [known?.version ?? '', benchmarkId],
    );
    if (!row) return null;
    const paths = known && known.version === row.version ? known.paths : new DescribedPaths(row.json_schema);
    this.entries.set(benchmarkId, { version: row.version, paths });
    return paths;
  }
}

/** The JSON paths of a result list's filters and sort terms. */
export function listPaths(query: { filters?: string[]; sort_by?: string }): UsedPath[] {
  const sorted = parseResultSort(query.sort_by).map((term) => prefixedJsonPath(term.field));
  return [
    ...parseFilters(query.filters).map((f): UsedPath => ({ parameter: 'filters', segments: f.path })),
    ...sorted.filter((path) => path !== null).map((segments): UsedPath => ({ parameter: 'sort_by', segments })),
  ];
}

/** The JSON paths of a comparison: its metric's segments, then its filters. */
export function comparePaths(metric: string[], query: { filters?: string[] }): UsedPath[] {
  return [
    { parameter: 'metric', segments: metric },
    ...parseFilters(query.filters).map((f): UsedPath => ({ parameter: 'filters', segments: f.path })),
  ];
}

/** The JSON paths of an export's filters and (CSV) columns. */
export function exportPaths(query: { filters?: string[]; columns?: string[] }, format: 'ndjson' | 'csv'): UsedPath[] {
  const columns = format === 'csv' ? (query.columns ?? []).map(prefixedJsonPath) : [];
  return [
    ...parseFilters(query.filters).map((f): UsedPath => ({ parameter: 'filters', segments: f.path })),
    ...columns.filter((path) => path !== null).map((segments): UsedPath => ({ parameter: 'columns', segments })),
  ];
}

/**
 * A warning for each distinct path of `used` the benchmark's schema does not describe, with the
 * nearest described path. None without a benchmark, for an unknown one, or when its schema names
 * no property at all (`{}`: every path would be warned about, which tells nobody anything).
 */
export async function pathWarnings(
  em: EntityManager,
  cache: SchemaPathsCache | undefined,
  benchmarkId: string | undefined,
  used: readonly UsedPath[],
): Promise<PathWarning[]> {
  if (!cache || !benchmarkId || used.length === 0) return [];
  const described = await cache.of(em, benchmarkId);
  if (!described?.describesAnything) return [];
  const warnings: PathWarning[] = [];
  const seen = new Set<string>();
  for (const { parameter, segments } of used) {
    const path = jsonPathText(segments);
    if (seen.has(path)) continue;
    seen.add(path);
    if (described.describes(segments)) continue;
    const nearest = described.suggest(segments);
    const suggestion = nearest ? jsonPathText(nearest) : null;
    warnings.push({
      code: UNDESCRIBED_PATH,
      parameter,
      path,
      suggestion,
      message: `${path} is not described by the benchmark's schema${suggestion ? `; did you mean ${suggestion}?` : ''}`,
    });
  }
  return warnings;
}
