import { AppError, type ErrorDetail } from '../../core/errors.ts';

export interface SortTerm {
  field: string;
  descending: boolean;
}

export const MAX_SORT_TERMS = 8;

/**
 * Parses `sort_by` (SPEC.md "Sorting"): comma-separated `+field` / `-field` terms without spaces.
 * A `+` that arrived decoded as a space (an unencoded `+` in a URL) is read as `+`.
 * `isAllowed` decides which fields exist (e.g. also `json.<dotted.path>` for results).
 * Unknown fields and operators give 422 listing the allowed fields.
 */
export function parseSort(
  sortBy: string | undefined,
  isAllowed: (field: string) => boolean,
  allowedText: string,
  defaultSort: string,
): SortTerm[] {
  const raw = sortBy === undefined || sortBy.trim() === '' ? defaultSort : sortBy;
  const terms = raw.split(',');
  const problems: ErrorDetail[] = [];
  const out: SortTerm[] = [];
  if (terms.length > MAX_SORT_TERMS) {
    throw new AppError(422, 'INVALID_SORT', `sort_by takes at most ${MAX_SORT_TERMS} terms.`, {
      errors: [{ in: 'query', path: 'sort_by', message: `at most ${MAX_SORT_TERMS} terms` }],
    });
  }
  for (const term of terms) {
    const op = term[0];
    const field = term.slice(1);
    if (op !== '+' && op !== '-' && op !== ' ') {
      problems.push({
        in: 'query',
        path: 'sort_by',
        message: `'${term}' must start with + (ascending, sent as %2B) or - (descending)`,
      });
      continue;
    }
    if (!field || !isAllowed(field)) {
      problems.push({ in: 'query', path: 'sort_by', message: `unknown sort field '${field}'; use one of ${allowedText}` });
      continue;
    }
    out.push({ field, descending: op === '-' });
  }
  if (problems.length) {
    throw new AppError(422, 'INVALID_SORT', `sort_by is invalid: ${problems.map((p) => p.message).join('; ')}.`, { errors: problems });
  }
  return out;
}

/** A parser for resources whose sortable fields are a fixed list of columns. */
export function fixedFieldSort(fields: readonly string[], defaultSort: string) {
  const allowed = new Set(fields);
  return (sortBy: string | undefined) => parseSort(sortBy, (f) => allowed.has(f), fields.join(', '), defaultSort);
}
