/**
 * The value axis of the comparison charts, shared by the SVG (`renderCompareSvg`) and the CLI's text
 * chart: a range that can always be drawn, at most `MAX_TICKS` round ticks with distinct labels, and
 * positions that are always finite. Every loop here runs a count fixed before it starts, never "until
 * a value is passed": with two values one floating-point step apart, `v += step` once left `v` where
 * it was, and the chart grew its tick array until the process ran out of memory.
 */

/** The most ticks an axis has (about six are asked for). */
export const MAX_TICKS = 12;
const WANTED_TICKS = 6;
/** A range narrower than this, relative to its values, is drawn as one value: labels could not tell its ends apart. */
const MIN_RELATIVE_SPAN = 1e-9;
/** A range narrower than this is drawn as one value too, so that the tick step stays a normal double (10 ** -324 is 0). */
const MIN_SPAN = 1e-300;
/** Labels in fixed-point notation up to this many digits, in exponent notation beyond. */
const MAX_FIXED_DIGITS = 12;

const clamp = (v: number) => Math.min(Number.MAX_VALUE, Math.max(-Number.MAX_VALUE, v));
/** Half of `hi - lo`: finite for any finite ends, where `hi - lo` overflows (-1.7e308 to 1.7e308). */
const halfSpan = (lo: number, hi: number) => hi / 2 - lo / 2;

/** Whether [lo, hi] is too narrow to draw as a range: it is drawn as one value. */
const isNarrow = (lo: number, hi: number) =>
  halfSpan(lo, hi) * 2 < Math.max(Math.max(Math.abs(lo), Math.abs(hi)) * MIN_RELATIVE_SPAN, MIN_SPAN);

/**
 * A range the charts can draw: `lo < hi`, both finite, wide enough for distinct round ticks,
 * widened by `margin` (a fraction of the width) on each side. A range narrower than a billionth of
 * its values (equal values, values one floating-point step apart) is drawn as one value, ±10% around
 * it ([-1, 1] around zero or values under 1e-299); ends that are not finite, or `lo > hi`, give [-1, 1].
 * @example
 * drawableRange(0, 10, 0.05) // [-0.5, 10.5]
 * drawableRange(1815.85, 1815.8500000000001) // about [1634.265, 1997.435]
 */
export function drawableRange(lo: number, hi: number, margin = 0): [number, number] {
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo <= hi)) [lo, hi] = [-1, 1];
  else if (isNarrow(lo, hi)) {
    const centre = lo / 2 + hi / 2;
    const pad = Math.abs(centre) * 0.1;
    [lo, hi] = pad >= MIN_SPAN ? [clamp(centre - pad), clamp(centre + pad)] : [-1, 1];
  }
  const extra = halfSpan(lo, hi) * (2 * margin);
  return [clamp(lo - extra), clamp(hi + extra)];
}

/** Tick values in increasing order and their labels, as many and as distinct. */
export interface Ticks {
  values: number[];
  labels: string[];
}

/**
 * Round tick values covering [lo, hi]: steps of 1, 2 or 5 times a power of ten, about six of them
 * and never more than `MAX_TICKS`, over `drawableRange(lo, hi)`. Labels in fixed-point notation
 * with the step's decimals, or in exponent notation for very large or very small values; no two alike.
 * @example
 * ticks(0, 10) // { values: [0, 2, 4, 6, 8, 10], labels: ['0', '2', '4', '6', '8', '10'] }
 * ticks(2 ** 53, 2 ** 53 + 2).labels // ['8.5e+15', '9e+15', '9.5e+15']
 */
export function ticks(lo: number, hi: number): Ticks {
  [lo, hi] = drawableRange(lo, hi);
  const raw = halfSpan(lo, hi) / (WANTED_TICKS / 2);
  const exponent = Math.floor(Math.log10(raw));
  const multiple = [1, 2, 5, 10].find((m) => m * 10 ** exponent >= raw) ?? 10;
  const step = multiple * 10 ** exponent;
  const label = labeller(multiple === 10 ? exponent + 1 : exponent, Math.max(Math.abs(lo), Math.abs(hi)));
  // Ticks by index (k × step), never by adding up steps; the range is at most 6e9 steps from zero, so k is exact.
  const first = Math.ceil(lo / step);
  const count = Math.min(MAX_TICKS, Math.floor(hi / step) - first + 1);
  const values: number[] = [];
  const labels: string[] = [];
  for (let i = 0; i < count; i++) {
    const value = Number(((first + i) * step).toPrecision(15));
    const text = label(value);
    if (!Number.isFinite(value) || labels.includes(text)) continue;
    values.push(value);
    labels.push(text);
  }
  return { values, labels };
}

/** Formats multiples of a step of 1, 2 or 5 × 10^`exponent` on an axis reaching `size`. */
function labeller(exponent: number, size: number): (v: number) => string {
  const decimals = Math.max(0, -exponent);
  const whole = Math.max(1, Math.floor(Math.log10(size)) + 1);
  if (whole + decimals <= MAX_FIXED_DIGITS) return (v) => v.toFixed(decimals);
  return (v) => (v === 0 ? '0' : v.toExponential());
}

/**
 * Where a value is drawn between `lo` and `hi`: 0 at `lo`, 1 at `hi`; always a finite number from 0
 * to 1 (values outside at the nearer end, NaN at 0), even where `hi - lo` overflows.
 * @example
 * scaleOf(0, 10)(2.5) // 0.25
 */
export function scaleOf(lo: number, hi: number): (v: number) => number {
  const half = halfSpan(lo, hi);
  return (v) => {
    const at = (v / 2 - lo / 2) / half;
    return at > 0 ? Math.min(1, at) : 0;
  };
}

/** What a chart draws of a group: a line from p5 to p95, a bar over the median's interval, a mark at the median. */
export interface DrawnGroup {
  p5: number;
  p95: number;
  median: number;
  median_ci: readonly number[];
}

/** A chart's value axis: its range, its ticks and where each value goes. */
export interface ValueAxis {
  lo: number;
  hi: number;
  ticks: Ticks;
  /** Where a value is on the axis (a tick): from 0 (at `lo`) to 1 (at `hi`), finite for any value. */
  at: (v: number) => number;
  /** Where a group's value is drawn: `at`, except that values too close to draw apart share one place. */
  drawn: (v: number) => number;
}

/**
 * The value axis of a comparison: every finite p5, p95, median and interval end of `groups`, in a
 * `drawableRange` widened by `margin` on each side. Values too close to draw apart are drawn at
 * one place (not on both sides of a pixel or a column).
 * @example
 * const axis = valueAxis(comparison.groups, 0.05);
 * const tickX = axis.ticks.values.map((v) => left + axis.at(v) * width);
 * const medianX = left + axis.drawn(comparison.groups[0].median) * width;
 */
export function valueAxis(groups: readonly DrawnGroup[], margin = 0): ValueAxis {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const g of groups) {
    for (const v of [g.p5, g.p95, g.median, ...g.median_ci]) {
      if (!Number.isFinite(v)) continue;
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  const one = Number.isFinite(lo) && isNarrow(lo, hi) ? lo / 2 + hi / 2 : undefined;
  [lo, hi] = drawableRange(lo, hi, margin);
  const at = scaleOf(lo, hi);
  return { lo, hi, ticks: ticks(lo, hi), at, drawn: one === undefined ? at : (v) => at(Number.isFinite(v) ? one : v) };
}
