// What a test file's uvu suites did, for the test runner (scripts/test.ts): loaded with `--import`
// before the file, it counts what each suite returns to uvu and, when the process exits, writes
// `{"suites":N,"finished":N,"passed":N,"failed":N,"skipped":N}` to the file named by TEST_REPORT.
// The counts are uvu's own numbers, not its printed text, so nothing a test prints can change them.
//
// uvu has no reporter API: it queues each suite's runner in `globalThis.UVU_QUEUE` (kept when already
// defined), and a runner resolves to `[errors, passed, skipped, total]`. `total - passed` counts the
// tests of a suite that failed or never ran (a `before` hook that throws ends the suite with none run,
// which uvu itself does not count as a failure). A suite queued but never finished (the process ended
// first) leaves `finished` below `suites`.
import { writeFileSync } from 'node:fs';

const reportFile = process.env.TEST_REPORT;
// Processes the test starts (servers, CLIs) inherit the environment, not this report.
delete process.env.TEST_REPORT;

if (reportFile) {
  const counts = { suites: 0, finished: 0, passed: 0, failed: 0, skipped: 0 };
  const push = Array.prototype.push;
  const wrap = (run) => {
    if (typeof run !== 'function') return run;
    counts.suites++;
    return async () => {
      const result = await run();
      const [, passed, skipped, total] = result;
      counts.finished++;
      counts.passed += passed;
      counts.failed += total - passed;
      counts.skipped += skipped;
      return result;
    };
  };
  /** A group of suites (uvu's `[name, ...runners]`) whose runners are counted as they are queued. */
  const adopt = (group) => {
    if (!Array.isArray(group)) return group;
    for (let i = 0; i < group.length; i++) group[i] = wrap(group[i]);
    group.push = (...runners) => push.apply(group, runners.map(wrap));
    return group;
  };
  globalThis.UVU_QUEUE ??= [];
  const queue = globalThis.UVU_QUEUE;
  for (let i = 0; i < queue.length; i++) queue[i] = adopt(queue[i]);
  queue.push = (...groups) => push.apply(queue, groups.map(adopt));
  process.on('exit', () => {
    writeFileSync(reportFile, JSON.stringify(counts));
  });
}
