import { AppError } from '../core/errors.ts';

/** An unpaired UTF-16 surrogate: UTF-8 cannot encode it, so it would be stored as U+FFFD. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unstorable(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000') || LONE_SURROGATE.test(value);
  if (Array.isArray(value) && depth < 4) return value.some((v) => unstorable(v, depth + 1));
  return false;
}

/**
 * PostgreSQL cannot store a NUL in text or jsonb, and an unpaired surrogate would silently become
 * U+FFFD. Every statement passes here before it is sent (`onQuery`): such a value is a 422 whatever
 * carried it; fields that know better (a result's JSON, a filter) refuse it earlier, more precisely.
 */
export function refuseUnstorableValues(sql: string, params: readonly unknown[]): string {
  if (params.some((p) => unstorable(p))) {
    throw new AppError(
      422,
      'UNSUPPORTED_CHARACTER',
      'A value holds the NUL character (\\u0000) or an unpaired UTF-16 surrogate, which cannot be stored or searched.',
    );
  }
  return sql;
}
