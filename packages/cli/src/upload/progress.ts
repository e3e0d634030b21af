/** A one-line progress bar on a terminal's stderr, redrawn at most ten times a second. */
import type { UploadProgress } from '@benchmarks/sdk';

export function progressBar(stderr: { write(s: string): unknown }, width = 30) {
  let last = 0;
  let shown = false;
  const draw = ({ done, total, failed }: UploadProgress) => {
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const bar = '#'.repeat(filled) + '-'.repeat(width - filled);
    stderr.write(`\r[${bar}] ${done}/${total}${failed ? `, ${failed} failed` : ''} `);
    shown = true;
  };
  return {
    update(progress: UploadProgress) {
      const now = Date.now();
      if (progress.done < progress.total && now - last < 100) return;
      last = now;
      draw(progress);
    },
    /** Erases the bar so the summary starts on a clean line. */
    clear() {
      if (shown) stderr.write(`\r${' '.repeat(width + 40)}\r`);
    },
  };
}
