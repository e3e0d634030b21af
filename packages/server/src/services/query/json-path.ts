/**
 * The one syntax of a path into a result's `json` (docs/querying.md, "JSON paths"), read by every
 * parameter that takes one: filters, `sort_by`, compare's `metric`, export's `columns`.
 *
 * - `json.<dotted.path>` is accepted everywhere: `json.machine.cpu.count`.
 * - A filter's path may also leave the prefix out, `machine.cpu.count`: SPEC.md's filter form, and a
 *   filter's first part can only be a JSON path. Elsewhere the prefix is required: in `sort_by` and
 *   `columns` a bare name is a field (`+id`, `tags`), and `metric` is "a JSON path as in sort_by".
 * - A leading `json.` is always the prefix, never a key: `json.json.x` is the key `x` inside the
 *   top-level key `json`. `json` alone would be the whole document, which nothing compares: refused.
 *
 * Segments are the keys between dots (not empty; a key holding a dot cannot be named); a segment
 * that is an integer also indexes an array (`runs.0`).
 */

export const MAX_PATH_SEGMENTS = 20;
/** The longest path, not counting its `json.` prefix. */
export const MAX_PATH_LENGTH = 200;
export const JSON_PATH_PREFIX = 'json.';

/** How the path forms are named in error messages. */
export const JSON_PATH_FORM = 'json.<dotted.path>';

export type JsonPathParse = { ok: true; segments: string[] } | { ok: false; reason: string };

const MALFORMED = `the path must be dotted non-empty segments, at most ${MAX_PATH_SEGMENTS} segments and ${MAX_PATH_LENGTH} characters`;
const WHOLE_DOCUMENT =
  "'json' alone is the whole document: name a value inside it, json.<dotted.path> (a top-level key named json is json.json)";

/** The segments of `a.b.c`, or null when it is empty, has an empty segment, is too long or holds NUL. */
export function dottedSegments(text: string): string[] | null {
  if (!text || text.length > MAX_PATH_LENGTH || text.includes('\u0000')) return null;
  const segments = text.split('.');
  if (segments.length > MAX_PATH_SEGMENTS || segments.some((s) => s === '')) return null;
  return segments;
}

/**
 * The segments inside `json` that `text` names, or why it names none. `bare`: the `json.` prefix is
 * optional (filters).
 */
export function parseJsonPath(text: string, options: { bare: boolean }): JsonPathParse {
  if (text === 'json') return { ok: false, reason: WHOLE_DOCUMENT };
  const prefixed = text.startsWith(JSON_PATH_PREFIX);
  if (!prefixed && !options.bare) {
    return { ok: false, reason: `write it ${JSON_PATH_FORM} (only a filter's path may leave out the json. prefix)` };
  }
  const segments = dottedSegments(prefixed ? text.slice(JSON_PATH_PREFIX.length) : text);
  return segments ? { ok: true, segments } : { ok: false, reason: MALFORMED };
}

/** The segments of `json.<dotted.path>` (the form of `sort_by` and `columns`), or null. */
export function prefixedJsonPath(text: string): string[] | null {
  const parsed = parseJsonPath(text, { bare: false });
  return parsed.ok ? parsed.segments : null;
}

/** How answers show a path: always with its prefix, `json.machine.cpu.count`. */
export function jsonPathText(segments: readonly string[]): string {
  return `${JSON_PATH_PREFIX}${segments.join('.')}`;
}
