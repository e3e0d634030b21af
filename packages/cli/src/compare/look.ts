/**
 * How `compare` draws on the output it writes to: Unicode and colour on a terminal, plain ASCII in a
 * pipe or a file, at the terminal's width. Colour follows FORCE_COLOR and NO_COLOR (terminal.ts).
 */
import type { Reply } from '@benchmarks/sdk';
import type { Io } from '../io.ts';
import { colorEnabled, paint as paintIf, type Paint } from '../terminal.ts';

export type { Paint };

export type Comparison = Reply<'compareResults'>;
export type Group = Comparison['groups'][number];

export interface Look {
  unicode: boolean;
  color: boolean;
  /** Columns available, 40 to 240. */
  width: number;
}

/** The look of stdout (`toFile`: the output goes to a file instead). */
export function lookOf(io: Io, toFile: boolean): Look {
  const terminal = io.isTTY.stdout && !toFile;
  const width = (terminal ? io.columns : undefined) ?? (Number(io.env.COLUMNS) || 80);
  return {
    unicode: terminal,
    // FORCE_COLOR colours a pipe too, never a file written with --out.
    color: !toFile && colorEnabled(io, 'stdout'),
    width: Math.min(240, Math.max(40, width)),
  };
}

/** `text` in the colour or weight given, when the look has colour. */
export function paint(look: Look, how: Paint | undefined, text: string): string {
  return paintIf(look.color, how, text);
}

/** A value as people read it: integers as they are, else four significant digits (no exponent below 1e21). */
export function num(value: number): string {
  if (Number.isInteger(value)) return String(value);
  if (Math.abs(value) >= 1e4) return value.toFixed(0);
  return String(Number(value.toPrecision(4)));
}

/** A relative change as a signed percentage: `+12.5%`. */
export const percentChange = (m: number | null) => (m === null ? 'n/a' : `${m > 0 ? '+' : ''}${num(m * 100)}%`);

/** `[low, high]` */
export const interval = ([low, high]: readonly [number, number] | number[]) => `[${num(low!)}, ${num(high!)}]`;

/** Cut to `max` characters, marked with an ellipsis (`...` in ASCII). */
export function shorten(text: string, max: number, look: Look): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const mark = look.unicode ? '…' : '...';
  return chars.slice(0, Math.max(1, max - mark.length)).join('') + mark;
}

/** `site / flavor`, or `site` when grouped by site. */
export const groupName = (g: { site: { name: string }; flavor: { name: string } | null }) =>
  g.flavor ? `${g.site.name} / ${g.flavor.name}` : g.site.name;

/** `site / flavor (n)`, or `site (n)` when grouped by site; long names shortened. */
export function groupLabel(group: Group, look: Look, max = 40): string {
  const suffix = ` (${group.n})`;
  return shorten(groupName(group).replace(/\s+/g, ' '), max - suffix.length, look) + suffix;
}

/** The rank as shown: its number, or a dash for a group left unranked. */
export const rankText = (group: Group, look: Look) => (group.rank === null ? (look.unicode ? '–' : '-') : String(group.rank));
