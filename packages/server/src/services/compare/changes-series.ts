/**
 * One series of GET /results:changes from the text the statement returns (services/compare/changes.ts,
 * `readSeries`) to what the answer shows: parsed, segmented (changes-stats.ts) and sketched for the
 * chart. Everything proportional to the series' length happens here, so that a long series can be
 * handled in a worker thread (changes-worker.ts) whole, and only the small summary comes back.
 */
import { type SketchColumn, sketchColumns } from '@benchmarks/sdk/changes-chart';
import { type ChangeOptions, changePoints, summarise } from './changes-stats.ts';

/** The chart's shared time axis (epoch milliseconds) and its columns. */
export interface TimeAxis {
  from: number;
  to: number;
  columns: number;
}

interface Side {
  n: number;
  mean: number;
  median: number;
}

/** A series' answer, times in epoch milliseconds. */
export interface SeriesSummary {
  n: number;
  first: number;
  last: number;
  segments: (Side & { from: number; to: number; stddev: number | null })[];
  changes: { index: number; at: number; result_id: string; before: Side; after: Side; magnitude: number | null; pvalue: number }[];
  sketch: SketchColumn[];
}

/** `value id milliseconds` of each point, joined by commas: its values, result ids and times. */
export function parsePoints(text: string): { values: Float64Array; ids: string[]; times: Float64Array } {
  const points = text.split(',');
  const values = new Float64Array(points.length);
  const times = new Float64Array(points.length);
  const ids: string[] = new Array(points.length);
  for (let i = 0; i < points.length; i++) {
    const point = points[i]!;
    const first = point.indexOf(' ');
    const second = point.indexOf(' ', first + 1);
    // + 0: a negative number that rounds to zero is 0, as elsewhere in the API.
    values[i] = Number(point.slice(0, first)) + 0;
    ids[i] = point.slice(first + 1, second);
    times[i] = Number(point.slice(second + 1));
  }
  return { values, ids, times };
}

/** The series' segments, change points and sketch. */
export function summariseSeries(text: string, options: ChangeOptions, axis: TimeAxis): SeriesSummary {
  const { values, ids, times } = parsePoints(text);
  const { segments, changes } = summarise(values, changePoints(values, options));
  const side = ({ n, mean, median }: Side) => ({ n, mean, median });
  return {
    n: values.length,
    first: times[0]!,
    last: times[values.length - 1]!,
    segments: segments.map((s) => ({ ...side(s), from: times[s.from]!, to: times[s.to - 1]!, stddev: s.stddev })),
    changes: changes.map((c) => ({
      index: c.index,
      at: times[c.index]!,
      result_id: ids[c.index]!,
      before: side(c.before),
      after: side(c.after),
      magnitude: c.magnitude,
      pvalue: c.pvalue,
    })),
    sketch: sketchColumns(times, values, axis.from, axis.to, axis.columns),
  };
}
