/** How the explorer writes numbers: four significant digits (integers whole). The tests use it too. */
export function fmt(x: number | null | undefined): string {
  if (x === null || x === undefined) return '–';
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x);
  return String(Number(x.toPrecision(4)));
}

/** An interval: `[1.3, 1.41]`. */
export const fmtInterval = (ci: readonly [number, number] | readonly number[] | null | undefined) =>
  ci ? `[${fmt(ci[0])}, ${fmt(ci[1])}]` : '–';

/** A p-value: `0.00018`, `1.2e-12`. */
export const fmtP = (p: number | null | undefined) => (p === null || p === undefined ? '–' : p < 1e-4 ? p.toExponential(1) : fmt(p));

/** A time of the API (UTC, without zone) as `2026-01-21 00:00`. */
export const fmtTime = (t: string | null | undefined) => (t ? `${t.slice(0, 10)} ${t.slice(11, 16)}` : '–');
