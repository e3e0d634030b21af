/**
 * What the terminal the CLI writes to can show: colour (FORCE_COLOR, NO_COLOR, a terminal) and
 * width. Every command asks here, so that all of them follow the same rules.
 */
import type { Io } from './io.ts';

export type Stream = 'stdout' | 'stderr';

/**
 * Whether to colour what goes to `stream`. FORCE_COLOR decides when it is set, as in Node itself:
 * `0` (or `false`) never, `1` to `3` (or empty, or `true`) always, even in a pipe. Otherwise NO_COLOR
 * (any non-empty value) turns colour off, and colour is used on a terminal that is not `dumb`.
 */
export function colorEnabled(io: Io, stream: Stream): boolean {
  const force = io.env.FORCE_COLOR;
  if (force !== undefined) return !/^(0|false)$/i.test(force.trim());
  if (io.env.NO_COLOR) return false;
  return io.isTTY[stream] && io.env.TERM !== 'dumb';
}

const CODES = { bold: '1', dim: '2', red: '31', green: '32', yellow: '33', cyan: '36' } as const;
export type Paint = keyof typeof CODES;

/** `text` wrapped in the escape codes of `how` when `color` is on; unchanged otherwise. */
export function paint(color: boolean, how: Paint | undefined, text: string): string {
  return color && how && text ? `\u001b[${CODES[how]}m${text}\u001b[0m` : text;
}

/**
 * The width of the terminal stdout is shown on; undefined when stdout is no terminal (a pipe or a
 * file has no width: nothing is cut there). `COLUMNS` stands in when the terminal does not say.
 */
export function stdoutWidth(io: Io): number | undefined {
  if (!io.isTTY.stdout) return undefined;
  const width = io.columns ?? Number(io.env.COLUMNS);
  return Number.isFinite(width) && width > 0 ? width : 80;
}
