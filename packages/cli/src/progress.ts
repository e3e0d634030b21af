/**
 * A one-line progress display on stderr, for uploads, `list --all` and exports: how many items so
 * far, their rate, and the time left when the total is known (in items, or as the share of the
 * input read). Only on a terminal, without --quiet or --verbose: never in a pipe or a CI log.
 * Redrawn at most ten times a second, cut to the terminal's width (a wrapped line could not be
 * redrawn), and erased at the end so that what follows starts on a clean line.
 */
import type { Io } from './io.ts';

export interface ProgressState {
  /** Items handled so far. */
  done: number;
  failed?: number;
  /** Share of the input read, 0 to 1, when the total is known in bytes rather than items. */
  fraction?: number;
}

export interface ProgressOptions {
  /** What is counted, plural: `results`, `items`, `rows`. */
  unit: string;
  /** How many items there are, when known: the bar and the time left follow it. */
  total?: number;
  /** Milliseconds since some origin; injectable for tests. */
  now?: () => number;
}

/** Redraws are at least this far apart. */
const INTERVAL_MS = 100;
/** The rate is measured over about this much of the recent past, so that it follows changes. */
const WINDOW_MS = 10_000;
/** Before this much time has passed, a rate would be noise: none is shown. */
const MIN_SPAN_MS = 1_000;
const BAR = 20;

const count = (n: number) => Math.round(n).toLocaleString('en-US');

/** `45s`, `3m05s`, `1h02m`. */
export function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

interface Sample {
  at: number;
  done: number;
  fraction?: number;
}

/**
 * The line for `state`, given the samples of the recent past (oldest first), at most `columns`
 * characters: on a narrow terminal the bar goes first, then the rate, then the line is cut.
 */
export function progressLine(state: ProgressState, past: readonly Sample[], now: number, options: ProgressOptions, columns = 80): string {
  const { done, failed } = state;
  const fraction = options.total ? Math.min(1, done / options.total) : state.fraction;
  let bar: string | undefined;
  let percent: string | undefined;
  if (fraction !== undefined) {
    const filled = Math.min(BAR, Math.floor(fraction * BAR));
    bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR - filled)}]`;
    percent = `${Math.floor(fraction * 100)}%`;
  }
  const of = options.total !== undefined ? ` of ${count(options.total)}` : '';
  const counts = `${count(done)}${of} ${options.unit}${failed ? `, ${count(failed)} failed` : ''}`;
  let rate: string | undefined;
  let eta: string | undefined;
  const oldest = past[0];
  const span = oldest ? now - oldest.at : 0;
  if (oldest && span >= MIN_SPAN_MS) {
    const perSecond = ((done - oldest.done) * 1000) / span;
    rate = `${count(perSecond)} ${options.unit}/s`;
    let left: number | undefined;
    if (options.total !== undefined && perSecond > 0) left = Math.max(0, options.total - done) / perSecond;
    else if (fraction !== undefined && oldest.fraction !== undefined && fraction > oldest.fraction) {
      left = ((1 - fraction) * span) / (fraction - oldest.fraction) / 1000;
    }
    if (left !== undefined) eta = `ETA ${duration(left)}`;
  }
  const max = Math.max(10, columns - 1);
  const join = (parts: (string | undefined)[]) => parts.filter(Boolean).join('  ');
  for (const line of [
    join([bar && `${bar} ${percent}`, counts, rate, eta]),
    join([percent, counts, rate, eta]),
    join([percent, counts, eta]),
  ]) {
    if (line.length <= max) return line;
  }
  return join([percent, counts, eta]).slice(0, max);
}

export interface Progress {
  update(state: ProgressState): void;
  /** The total, once known (it may come later than the first items). */
  setTotal(total: number): void;
  /** Erases the line (when one was drawn). */
  clear(): void;
}

const NONE: Progress = { update() {}, setTotal() {}, clear() {} };

/** The lines on screen now, for {@link eraseProgress}. */
const onScreen = new Set<Progress>();

/**
 * Erases every progress line on screen: for an exit that does not go through the command's end
 * (stdout closed by `| head`), so that the shell's prompt does not start after a stale line.
 */
export function eraseProgress(): void {
  for (const progress of onScreen) progress.clear();
}

/** A progress line on `stderr`, `columns` wide at most. */
export function progressLineOn(stderr: { write(s: string): unknown }, given: ProgressOptions, columns = 80): Progress {
  const options = { ...given };
  const now = options.now ?? (() => performance.now());
  const samples: Sample[] = [];
  let lastDraw: number | undefined;
  let shown = 0;
  const progress: Progress = {
    update(state) {
      const at = now();
      if (lastDraw !== undefined && at - lastDraw < INTERVAL_MS) return;
      lastDraw = at;
      while (samples.length > 1 && at - samples[1]!.at >= WINDOW_MS) samples.shift();
      const line = progressLine(state, samples, at, options, columns);
      samples.push({ at, done: state.done, fraction: state.fraction });
      stderr.write(`\r${line}${' '.repeat(Math.max(0, shown - line.length))}`);
      shown = line.length;
      onScreen.add(progress);
    },
    setTotal(total) {
      options.total = total;
    },
    clear() {
      if (shown > 0) stderr.write(`\r${' '.repeat(shown)}\r`);
      shown = 0;
      onScreen.delete(progress);
    },
  };
  return progress;
}

/**
 * Whether progress is shown: on a terminal, without --quiet, and without --verbose (whose request
 * lines would break into the line being redrawn).
 */
export const showsProgress = (io: Io, settings: { quiet: boolean; verbose: boolean }) =>
  io.isTTY.stderr && !settings.quiet && !settings.verbose;

/** A progress line when {@link showsProgress}; one that shows nothing otherwise. */
export function progressFor(io: Io, settings: { quiet: boolean; verbose: boolean }, options: ProgressOptions): Progress {
  if (!showsProgress(io, settings)) return NONE;
  return progressLineOn(io.stderr, options, io.columns);
}
