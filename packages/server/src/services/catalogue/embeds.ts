/**
 * The benchmark, site, flavor and tags that every result embeds, as JSON text, remembered per row
 * version. A page of results names the version (`xmin`) of each catalogue row it embeds, read in
 * the same statement as the page, so a remembered text is used only while the row is unchanged
 * (whichever server process changed it): nothing is ever served stale. Rows not remembered are
 * read in one statement per kind; entries also expire after `ttlMs`, so the cache stays bounded to
 * what is in use.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { LRUCache } from 'lru-cache';
import type { BenchmarkRow, FlavorRow, SiteRow, TagRow } from '../../entities/index.ts';
import { benchmarkView, flavorView, siteView, tagView } from './views.ts';

/** The row of each kind: `VIEWS[kind](row)` type-checks for a kind `K` and a row of `EmbedRows[K]`. */
interface EmbedRows {
  benchmark: BenchmarkRow;
  site: SiteRow;
  flavor: FlavorRow;
  tag: TagRow;
}

export type EmbedKind = keyof EmbedRows;

const VIEWS: { [K in EmbedKind]: (row: EmbedRows[K]) => unknown } = {
  benchmark: benchmarkView,
  site: siteView,
  flavor: flavorView,
  tag: tagView,
};

/** A catalogue row a response embeds, at the version the response's statement saw. */
export interface EmbedRef {
  kind: EmbedKind;
  id: string;
  version: string;
}

export class EmbedCache {
  private readonly entries: LRUCache<string, { version: string; text: string }>;

  constructor(ttlMs = 60_000, maxEntries = 5_000) {
    this.entries = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }

  /**
   * The JSON text of each reference, reading the rows not remembered at their version. A row deleted
   * since the caller's statement has no text: callers read their page again (PAGE_READ_ATTEMPTS).
   */
  async texts(em: EntityManager, refs: Iterable<EmbedRef>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const missing = new Map<EmbedKind, Set<string>>();
    for (const ref of refs) {
      const key = `${ref.kind}:${ref.id}`;
      if (out.has(key)) continue;
      const hit = this.entries.get(key);
      if (hit && hit.version === ref.version) {
        out.set(key, hit.text);
      } else {
        if (!missing.has(ref.kind)) missing.set(ref.kind, new Set());
        missing.get(ref.kind)!.add(ref.id);
      }
    }
    if (missing.size === 0) return out;
    const read = await Promise.all(
      [...missing].map(async <K extends EmbedKind>([kind, ids]: [K, Set<string>]) => {
        const rows = await em.execute<(EmbedRows[K] & { version: string })[]>(
          `select t.*, t.xmin::text as version from ${kind} t where t.id = any(?::uuid[])`,
          [[...ids]],
        );
        // A view picks its fields: `version` is not among them.
        return rows.map((row) => ({ key: `${kind}:${row.id}`, version: row.version, text: JSON.stringify(VIEWS[kind](row)) }));
      }),
    );
    for (const { key, version, text } of read.flat()) {
      out.set(key, text);
      this.entries.set(key, { version, text });
    }
    return out;
  }

  get size(): number {
    return this.entries.size;
  }
}
