/** The summary as a table, and progress: a bar redrawn in place on a terminal, else a line per kind and every few seconds. */
import type { ProgressEvent } from './context.ts';
import { type ImportSummary, KINDS, type Kind, type NoteOutcome } from './summary.ts';

const HEADINGS: Record<NoteOutcome, string> = {
  refused: 'Refused (not imported):',
  flagged: 'Flagged (imported, worth a look):',
  skipped: 'Skipped (already here, left as they are):',
};

const number = (n: number) => n.toLocaleString('en-US');

/** The summary as text: counts per kind, then each reason with its examples. */
export function formatSummary(summary: ImportSummary): string {
  const state = summary.complete ? `complete in ${summary.seconds} s` : `stopped after ${summary.seconds} s: run it again to resume`;
  const lines = [`Import from ${summary.source} (timestamps read as ${summary.sourceTimezone}): ${state}`, ''];
  const columns = ['in source', 'imported', 'skipped', 'refused', 'flagged'] as const;
  lines.push(`${'kind'.padEnd(12)}${columns.map((c) => c.padStart(11)).join('')}`);
  for (const kind of KINDS) {
    const c = summary.kinds[kind];
    const cells = [c.source, c.imported, c.skipped, c.refused, c.flagged].map((n) => number(n).padStart(11));
    lines.push(`${kind.padEnd(12)}${cells.join('')}`);
  }
  let heading: NoteOutcome | undefined;
  for (const group of summary.reasons) {
    if (group.outcome !== heading) {
      heading = group.outcome;
      lines.push('', HEADINGS[heading]);
    }
    lines.push(`  ${group.kind} ${group.code}: ${number(group.count)}`);
    for (const example of group.examples) lines.push(`    ${example.id}: ${example.reason}`);
    const left = group.count - group.examples.length;
    if (group.examples.length && left > 0) lines.push(`    … and ${number(left)} more (--report FILE lists every one)`);
  }
  return `${lines.join('\n')}\n`;
}

/** Where progress goes: stderr, or a stand-in in tests. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

const BAR_WIDTH = 24;
const REDRAW_MS = 100;
const PLAIN_EVERY_MS = 5000;

/** One line of the terminal bar, at most `width` long: kinds done, then the current kind's bar, count and rate. */
export function progressLine(done: string[], event: ProgressEvent, perSecond: number | null, width: number): string {
  const share = event.total ? Math.min(1, event.done / event.total) : 1;
  const filled = Math.round(share * BAR_WIDTH);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`;
  const extras = [
    perSecond === null ? '' : ` ${number(Math.round(perSecond))}/s`,
    event.refused ? ` ${number(event.refused)} refused` : '',
    event.flagged ? ` ${number(event.flagged)} flagged` : '',
  ].join('');
  const current = `${event.kind} ${bar} ${Math.floor(share * 100)}% ${number(event.done)}/${number(event.total)}${extras}`;
  const line = done.length ? `${done.join(' · ')} | ${current}` : current;
  if (line.length <= width) return line;
  // Too narrow: the kinds done go first, then the end of the current one.
  return current.length <= width ? current : `${current.slice(0, width - 1)}…`;
}

/** Shows progress events on a stream, at most every 100 ms on a terminal. */
export class ProgressView {
  readonly #stream: ProgressStream;
  readonly #now: () => number;
  readonly #done: string[] = [];
  readonly #started = new Map<Kind, number>();
  #last = 0;
  #drawn = false;
  /** When the kind under way started: when the one before it finished. */
  #since: number;

  constructor(stream: ProgressStream, now: () => number = () => performance.now()) {
    this.#stream = stream;
    this.#now = now;
    this.#since = now();
  }

  readonly onProgress = (event: ProgressEvent): void => {
    const now = this.#now();
    if (!this.#started.has(event.kind)) this.#started.set(event.kind, this.#since);
    if (event.finished) this.#since = now;
    const elapsed = (now - this.#started.get(event.kind)!) / 1000;
    const perSecond = event.kind === 'results' && elapsed > 0 ? event.done / elapsed : null;
    if (this.#stream.isTTY) this.#drawTerminal(event, perSecond, now);
    else this.#writePlain(event, perSecond, now);
  };

  #drawTerminal(event: ProgressEvent, perSecond: number | null, now: number): void {
    const width = Math.max(40, (this.#stream.columns ?? 80) - 1);
    let line: string;
    if (event.finished) {
      this.#done.push(`${event.kind} ${number(event.done)}`);
      line = this.#done.join(' · ').slice(-width);
    } else {
      if (now - this.#last < REDRAW_MS) return;
      line = progressLine(this.#done, event, perSecond, width);
    }
    this.#last = now;
    this.#stream.write(`\r${line}\x1b[K`);
    this.#drawn = true;
  }

  #writePlain(event: ProgressEvent, perSecond: number | null, now: number): void {
    if (!event.finished && now - this.#last < PLAIN_EVERY_MS) return;
    this.#last = now;
    const rate = perSecond === null ? '' : `, ${number(Math.round(perSecond))}/s`;
    const counts = `${number(event.done)}/${number(event.total)}${rate}, ${number(event.refused)} refused, ${number(event.flagged)} flagged`;
    this.#stream.write(`import-origin: ${event.kind} ${event.finished ? 'done' : 'so far'}: ${counts}\n`);
  }

  /** Ends the terminal line, so that what follows starts on a line of its own. */
  end(): void {
    if (this.#drawn) this.#stream.write('\n');
    this.#drawn = false;
  }
}
