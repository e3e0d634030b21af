import { JsonText } from '../../core/reply.ts';
import { AppError, errors } from '../../core/errors.ts';

/**
 * How many times a page is read when a row it embeds was deleted between the page's statement and
 * the read of the row's text (services/catalogue/embeds.ts): each new read shows what is there now.
 */
export const PAGE_READ_ATTEMPTS = 3;

/** The answer when every read met a deleted row: items are being deleted faster than they are read. */
export const itemsVanishing = () =>
  errors.unavailable('CATALOGUE_CHANGING', 'Items of this answer kept being deleted while it was read; try again.');

/** The paginated list envelope of SPEC.md, with the cursor of the next page (services/query/cursor.ts). */
export interface PageEnvelope<T> extends PageFields {
  items: T[];
}

/** The envelope's fields besides its items. */
export interface PageFields {
  has_next: boolean;
  has_prev: boolean;
  next_num: number | null;
  prev_num: number | null;
  page: number;
  pages: number;
  per_page: number;
  total: number;
  /** The cursor of the next page; null when there is none. */
  next_cursor: string | null;
}

export interface PageRequest {
  page: number;
  per_page: number;
}

export const DEFAULT_PER_PAGE = 100;

/** Page and per_page from a validated query (defaults: page 1, per_page 100). */
export function pageRequest(query: { page?: number; per_page?: number }): PageRequest {
  return { page: query.page ?? 1, per_page: query.per_page ?? DEFAULT_PER_PAGE };
}

/**
 * Refuses a page that reaches deeper than `maxDepth` items into its list (page × per_page): an
 * offset makes the database produce and throw away every item before the page, so deep pages cost
 * as much as listing everything. 422 PAGE_TOO_DEEP names the limit.
 */
export function checkPageDepth({ page, per_page }: PageRequest, maxDepth: number): void {
  if (page * per_page <= maxDepth) return;
  const deepest = Math.max(1, Math.floor(maxDepth / per_page));
  throw new AppError(
    422,
    'PAGE_TOO_DEEP',
    `Pages reach at most ${maxDepth} results into a list (page × per_page ≤ ${maxDepth}); with per_page=${per_page} the last page is ${deepest}. ` +
      'To go further, walk on by cursor: every page answers next_cursor, and cursor=<next_cursor> (without page) gives the page after it at any depth; or narrow the list (benchmark_id, site_id, flavor_id, dates).',
    {
      errors: [{ in: 'query', path: 'page', message: `page × per_page must be at most ${maxDepth}` }],
      extensions: { limit: maxDepth },
    },
  );
}

/**
 * The fields of page `page` of `total` items. A page past the end has no items but the right
 * total; `pages` is 0 when nothing matches. next_cursor is the walk's to set (services/query/cursor.ts).
 */
export function pageFields(total: number, page: number, per_page: number): PageFields {
  const pages = Math.ceil(total / per_page);
  const has_next = page < pages;
  const has_prev = page > 1 && pages > 0;
  return {
    has_next,
    has_prev,
    next_num: has_next ? page + 1 : null,
    prev_num: has_prev ? Math.min(page - 1, pages) : null,
    page,
    pages,
    per_page,
    total,
    next_cursor: null,
  };
}

/**
 * The envelope as JSON text around items that are JSON text already (assembled, not re-serialised),
 * with `extra` members after SPEC.md's (a result list's `warnings`).
 */
export function pageJson(
  items: readonly (string | readonly string[])[],
  fields: PageFields,
  extra: Record<string, unknown> = {},
): JsonText {
  const envelope = { ...fields, ...extra };
  const parts = ['{"items":['];
  items.forEach((item, i) => {
    if (i) parts.push(',');
    if (typeof item === 'string') parts.push(item);
    else parts.push(...item);
  });
  parts.push(`],${JSON.stringify(envelope).slice(1)}`);
  return new JsonText(...parts);
}
