/**
 * A one-line progress bar on a terminal's stderr, redrawn at most ten times a second. The bar fills
 * with the share of the input read (the inputs are streamed: how many results they hold is known
 * only at the end); from stdin it shows the counts alone.
 */
export interface Progress {
  /** Items handed on so far. */
  done: number;
  failed: number;
  /** Share of the input's bytes read, 0 to 1; undefined when the size is unknown (stdin). */
  fraction?: number;
}

const count = (n: number) => n.toLocaleString('en-US');

export function progressBar(stderr: { write(s: string): unknown }, width = 30) {
  let last = 0;
  let shown = false;
  let length = 0;
  const draw = ({ done, failed, fraction }: Progress) => {
    const counts = `${count(done)} results${failed ? `, ${count(failed)} failed` : ''}`;
    let line = counts;
    if (fraction !== undefined) {
      const filled = Math.min(width, Math.round(fraction * width));
      line = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.floor(fraction * 100)}% ${counts}`;
    }
    stderr.write(`\r${line.padEnd(length)}`);
    length = line.length;
    shown = true;
  };
  return {
    update(progress: Progress) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      draw(progress);
    },
    /** Erases the bar so the summary starts on a clean line. */
    clear() {
      if (shown) stderr.write(`\r${' '.repeat(length)}\r`);
    },
  };
}
