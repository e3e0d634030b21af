/** Date bounds of list queries: `2025-01-31` (midnight UTC) or a date-time with a zone designator. */
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i;

/** A date or a date-time with a zone designator that also names a real instant. */
export function isDateBound(value: string): boolean {
  if (!DATE.test(value) && !DATE_TIME_WITH_ZONE.test(value)) return false;
  return !Number.isNaN(Date.parse(DATE.test(value) ? `${value}T00:00:00Z` : value));
}

/** Parses a date bound into a Date (a bare date is midnight UTC). */
export function parseDateBound(value: string): Date {
  return new Date(DATE.test(value) ? `${value}T00:00:00Z` : value);
}
