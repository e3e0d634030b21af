/**
 * One series of GET /results:changes from the bytes the statement returns (services/changes/changes.ts,
 * `readSeries`) to what the answer shows: sorted, segmented (changes-stats.ts) and sketched for the
 * chart. Everything proportional to the series' length happens here, so that a long series can be
 * handled in a worker thread (changes-worker.ts) whole, and only the small summary comes back.
 */
import { createHash } from 'node:crypto';
import { type SketchColumns, sketchColumns } from '@benchmarks/sdk/changes-chart';
import { type ChangeOptions, changePoints, lowerBound, summarise } from './changes-stats.ts';

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
  sketch: SketchColumns;
  /** The change points as segmented (changes-stats.ts, `changePoints`): what a later summary of the same series can reuse. */
  cuts: number[];
}

/** Bytes per point: the value (a double), the execution time (int8, microseconds since 2000-01-01) and the result id (16 bytes), big-endian. */
export const POINT_BYTES = 32;
/** 2000-01-01T00:00:00Z, PostgreSQL's epoch, in epoch milliseconds. */
const PG_EPOCH_MS = 946_684_800_000;

/** A series' points in (execution time, id) order, and the digest of that content. */
export interface SortedPoints {
  values: Float64Array;
  /** Execution times, epoch milliseconds (rounded down). */
  times: Float64Array;
  /** The result ids, 4 words of 32 bits each (big-endian order). */
  ids: Uint32Array;
  /** sha256 of the points in order: what identifies the series' segmentation with its options. */
  digest: string;
}

/** Points as the statement returns them, in any order (one `POINT_BYTES` record each); for tests. */
export function encodePoints(points: readonly { value: number; ms: number; id: string }[]): Uint8Array {
  const out = Buffer.alloc(points.length * POINT_BYTES);
  points.forEach((p, i) => {
    const at = i * POINT_BYTES;
    out.writeDoubleBE(p.value, at);
    out.writeBigInt64BE((BigInt(p.ms) - BigInt(PG_EPOCH_MS)) * 1000n, at + 8);
    Buffer.from(p.id.replaceAll('-', ''), 'hex').copy(out, at + 16);
  });
  return out;
}

const TWO_32 = 4_294_967_296;

/**
 * The points of one series (one `POINT_BYTES` record each, in no particular order: sorting in
 * PostgreSQL cost most of the statement) sorted by execution time to the microsecond, then id (as
 * PostgreSQL orders uuids: bytewise). The times are sorted as numbers without a comparison
 * function (exact within 285 years of 2000; beyond, every point is compared in full), ties by id.
 */
export function sortPoints(buffer: Uint8Array): SortedPoints {
  const n = Math.floor(buffer.byteLength / POINT_BYTES);
  const view = new DataView(buffer.buffer, buffer.byteOffset, n * POINT_BYTES);
  const raw = new Float64Array(n);
  const high = new Int32Array(n);
  const low = new Uint32Array(n);
  const rawIds = new Uint32Array(4 * n);
  let exact = true;
  for (let i = 0; i < n; i++) {
    const at = i * POINT_BYTES;
    // + 0: a negative number that rounds to zero is 0, as elsewhere in the API.
    raw[i] = view.getFloat64(at) + 0;
    high[i] = view.getInt32(at + 8);
    low[i] = view.getUint32(at + 12);
    if (high[i]! >= 0x200000 || high[i]! < -0x200000) exact = false;
    for (let k = 0; k < 4; k++) rawIds[4 * i + k] = view.getUint32(at + 16 + 4 * k);
  }
  const idOrder = (a: number, b: number) => {
    for (let k = 0; k < 4; k++) {
      const d = rawIds[4 * a + k]! - rawIds[4 * b + k]!;
      if (d !== 0) return d;
    }
    return 0;
  };
  const order = new Uint32Array(n);
  if (exact) {
    // Microseconds as exact doubles, sorted natively; each point placed at its time's first
    // position (in arrival order among equal times), then the runs of equal times ordered by id.
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = high[i]! * TWO_32 + low[i]!;
    const sorted = keys.slice().sort();
    const taken = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const at = lowerBound(sorted, keys[i]!);
      order[at + taken[at]!++] = i;
    }
    for (let j = 0; j < n; ) {
      let k = j + 1;
      while (k < n && sorted[k] === sorted[j]) k++;
      if (k - j > 1) order.subarray(j, k).sort(idOrder);
      j = k;
    }
  } else {
    for (let i = 0; i < n; i++) order[i] = i;
    order.sort((a, b) => high[a]! - high[b]! || low[a]! - low[b]! || idOrder(a, b));
  }
  const values = new Float64Array(n);
  const times = new Float64Array(n);
  const ids = new Uint32Array(4 * n);
  const moments = new Uint32Array(2 * n);
  for (let j = 0; j < n; j++) {
    const i = order[j]!;
    values[j] = raw[i]!;
    times[j] = Math.floor((high[i]! * TWO_32 + low[i]!) / 1000) + PG_EPOCH_MS;
    moments[2 * j] = high[i]! >>> 0;
    moments[2 * j + 1] = low[i]!;
    ids.set(rawIds.subarray(4 * i, 4 * i + 4), 4 * j);
  }
  const bytes = (a: Float64Array | Uint32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const digest = createHash('sha256').update(bytes(values)).update(bytes(moments)).update(bytes(ids)).digest('base64');
  return { values, times, ids, digest };
}

/** The id of the `i`-th point, as uuids are written. */
function idAt(ids: Uint32Array, i: number): string {
  const hex = Array.from(ids.subarray(4 * i, 4 * i + 4), (w) => w.toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The series' segments, change points and sketch. `cuts`: its change points as an earlier summary of
 * the same points with the same options found them (changes-segmenter.ts remembers them), which
 * spares the segmentation, the one part that grows faster than the series.
 */
export function summariseSorted(points: SortedPoints, options: ChangeOptions, axis: TimeAxis, cuts?: readonly number[]): SeriesSummary {
  const { values, ids, times } = points;
  const found = cuts ? [...cuts] : changePoints(values, options);
  const { segments, changes } = summarise(values, found);
  const side = ({ n, mean, median }: Side) => ({ n, mean, median });
  return {
    n: values.length,
    first: times[0]!,
    last: times[values.length - 1]!,
    segments: segments.map((s) => ({ ...side(s), from: times[s.from]!, to: times[s.to - 1]!, stddev: s.stddev })),
    changes: changes.map((c) => ({
      index: c.index,
      at: times[c.index]!,
      result_id: idAt(ids, c.index),
      before: side(c.before),
      after: side(c.after),
      magnitude: c.magnitude,
      pvalue: c.pvalue,
    })),
    sketch: sketchColumns(times, values, axis.from, axis.to, axis.columns),
    cuts: found,
  };
}

/** The series' segments, change points and sketch, from the points as the statement returns them. */
export function summariseSeries(buffer: Uint8Array, options: ChangeOptions, axis: TimeAxis): SeriesSummary {
  return summariseSorted(sortPoints(buffer), options, axis);
}
