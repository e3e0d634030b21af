/** UTC, ISO 8601, without a zone designator, as SPEC.md shows: 2024-05-01T12:00:00.000 */
export function formatTimestamp(value: Date | string): string {
  const date = value instanceof Date ? value : new Date(value);
  return date.toISOString().slice(0, -1); // always ends in Z for years 0 to 9999
}
