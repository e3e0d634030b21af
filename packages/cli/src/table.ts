/**
 * Tables on a terminal fit its width: long cells are cut at their column's `max`; when the table
 * is still wider than the terminal, optional columns are left out (`drop`, in order) until the
 * others fit at their narrowest, then the widest columns are narrowed one character at a time,
 * cells cut with `…`. Ids (`whole`) are never cut. In a pipe or a file, or with --wide, every cell
 * is whole and every column shown.
 */
import { paint } from './terminal.ts';

/** One column: its header and how to show an item's value in it. */
export interface Column<T> {
  header: string;
  value: (item: T) => unknown;
  /** Cells longer than this are cut in tables on a terminal (never with --wide, in a pipe, in CSV or JSON). */
  max?: number;
  /** Never cut in a table (ids: a cut one is of no use). */
  whole?: boolean;
  /**
   * Left out of a table on a terminal too narrow for every column even narrowed: the column with
   * the lowest number first. Columns without one always stay.
   */
  drop?: number;
}

export interface TableLayout {
  /** The terminal's width; undefined in a pipe or a file, where nothing is cut. */
  width?: number;
  /** --wide: nothing is cut, whatever the width. */
  wide?: boolean;
  /** Bold headers. */
  color?: boolean;
  /** Hears the headers of the columns left out to fit the width. */
  onDropped?: (headers: string[]) => void;
}

export interface ColumnFit {
  /** Its width with every cell whole. */
  natural: number;
  /** The narrowest it may become. */
  floor: number;
  drop?: number;
}

const GAP = 2;
/** A column that may be narrowed keeps at least this many characters, or its header's, or its natural width if smaller. */
const MIN_WIDTH = 10;

const oneLine = (value: string) => value.replace(/\s*[\r\n]+\s*/g, ' ');
/** Length in characters (code points), as a terminal counts most of them. */
const length = (value: string) => [...value].length;

/** Cut to `max` characters, the last one an ellipsis. */
export function cut(value: string, max: number): string {
  const chars = [...value];
  return chars.length > max ? `${chars.slice(0, Math.max(0, max - 1)).join('')}…` : value;
}

const total = (widths: readonly number[]) => widths.reduce((sum, w) => sum + w, 0) + GAP * Math.max(0, widths.length - 1);

/**
 * The columns kept (their indexes) and their widths for a terminal `width` columns wide. When even
 * their floors do not fit once every droppable column is gone, the table is wider than the
 * terminal, which wraps its lines.
 */
export function fitColumns(columns: readonly ColumnFit[], width: number): { kept: number[]; widths: number[] } {
  let kept = columns.map((_, i) => i);
  const droppable = kept.filter((i) => columns[i]!.drop !== undefined).sort((a, b) => columns[a]!.drop! - columns[b]!.drop!);
  for (const next of droppable) {
    if (total(kept.map((i) => columns[i]!.floor)) <= width) break;
    kept = kept.filter((i) => i !== next);
  }
  const widths = kept.map((i) => columns[i]!.natural);
  let excess = total(widths) - width;
  while (excess > 0) {
    let widest = -1;
    for (let k = 0; k < widths.length; k++) {
      if (widths[k]! > columns[kept[k]!]!.floor && (widest === -1 || widths[k]! >= widths[widest]!)) widest = k;
    }
    if (widest === -1) break;
    widths[widest]!--;
    excess--;
  }
  return { kept, widths };
}

/** An aligned table with a header line, laid out as `layout` says. */
export function renderTable<T>(items: readonly T[], columns: readonly Column<T>[], layout: TableLayout = {}): string {
  const fit = layout.width !== undefined && !layout.wide;
  const cells = items.map((item) =>
    columns.map((c) => {
      const cell = oneLine(text(c.value(item)));
      return fit && !c.whole ? cut(cell, c.max ?? 60) : cell;
    }),
  );
  const headers = columns.map((c) => c.header.toUpperCase());
  const natural = headers.map((h, i) => Math.max(length(h), ...cells.map((r) => length(r[i]!))));
  let kept = columns.map((_, i) => i);
  let widths = natural;
  if (fit) {
    const specs = columns.map((c, i) => ({
      natural: natural[i]!,
      floor: c.whole ? natural[i]! : Math.min(natural[i]!, Math.max(MIN_WIDTH, length(headers[i]!))),
      drop: c.drop,
    }));
    ({ kept, widths } = fitColumns(specs, layout.width!));
    if (kept.length < columns.length) layout.onDropped?.(headers.filter((_, i) => !kept.includes(i)));
  }
  const line = (row: string[]) =>
    kept
      .map((i, k) => {
        const shown = cut(row[i]!, widths[k]!);
        return k === kept.length - 1 ? shown : shown + ' '.repeat(widths[k]! - length(shown));
      })
      .join(' '.repeat(GAP))
      .trimEnd();
  return `${[paint(Boolean(layout.color), 'bold', line(headers)), ...cells.map(line)].join('\n')}\n`;
}

export function text(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
