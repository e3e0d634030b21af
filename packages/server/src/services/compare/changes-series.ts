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
  /** The change points as segmented (changes-stats.ts, `changePoints`): what a later summary of the same series can reuse. */
  cuts: number[];
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

/**
 * The series' segments, change points and sketch. `cuts`: its change points as an earlier summary of
 * the same text with the same options found them (changes-segmenter.ts remembers them), which spares
 * the segmentation, the one part that grows faster than the series.
 */
export function summariseSeries(text: string, options: ChangeOptions, axis: TimeAxis, cuts?: readonly number[]): SeriesSummary {
  const { values, ids, times } = parsePoints(text);
  const points = cuts ? [...cuts] : changePoints(values, options);
  const { segments, changes } = summarise(values, points);
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
    cuts: points,
  };
}
