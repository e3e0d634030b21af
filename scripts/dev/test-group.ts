/**
 * Runs several uvu test files in this one process, one after the other, each to its end (its suites
 * and their `before`/`after` hooks) before the next is imported: the test runner (scripts/test.ts)
 * starts it with the files of one group, so that the process loads tsx and the shared modules once.
 *
 *   node --import ./scripts/dev/register.js scripts/dev/test-group.ts a.test.ts b.test.ts
 *
 * uvu queues a suite instead of running it when `globalThis.UVU_DEFER` is set before uvu is first
 * imported: `test.run()` pushes the suite's runner to `globalThis.UVU_QUEUE[UVU_INDEX]`, and a runner
 * resolves to `[errors, passed, skipped, total]`. This host empties the queue before each file,
 * imports the file, then runs what it queued and counts from those numbers: `total - passed` counts
 * the tests that failed or never ran (a `before` hook that throws ends its suite with none run, which
 * uvu itself does not count as a failure). Nothing a test prints changes the counts.
 *
 * TEST_REPORT names a file to which the host appends one JSON line as each file starts
 * (`{"event":"start","index":i,"file":…,"at":ms}`) and ends (`{"event":"end",…,"at":ms,"suites":N,"finished":N,
 * "passed":N,"failed":N,"skipped":N,"ms":N,"cpuMs":N,"problems":[…]}`), written at once, so that
 * the runner knows which file was running when the process died or hung, and which never ran.
 * `failed` includes one failure for each problem: a file that did not import, a suite that did not
 * finish, `process.exitCode` set. A file that calls `process.exit` ends the process: the exit is
 * recorded (`{"event":"exit","code":N}`) and the file has no end. TEST_GROUP_MARK, when set, is
 * written on a line of its own to stdout as each file starts, with the file's index, so that the runner
 * can give a failing file's output alone. Neither variable reaches the processes the tests start.
 *
 * Between files the host puts back the environment variables a file changed. After the last file the
 * process ends at once when a file failed (a failed test may leave its server open), else when its
 * event loop is empty, as a lone test file's does. One still running TEST_EXIT_GRACE_MS (default
 * 10 s) later was kept running by something a file left (a server, a timer of a race it won, the
 * pipes of a process it did not wait for): it prints and records (`{"event":"lingering",…}`) what
 * is still open and exits with code 1, which fails its last file. A leftover like that holds one of
 * the runner's jobs while it runs (a 60 s timer, 60 s), and would keep a user's program running.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** TEST_EXIT_GRACE_MS: how long after its last file the process may take to end (default 10 s). */
const EXIT_GRACE_MS = Number(process.env.TEST_EXIT_GRACE_MS) || 10_000;

const reportFile = process.env.TEST_REPORT;
const mark = process.env.TEST_GROUP_MARK;
delete process.env.TEST_REPORT;
delete process.env.TEST_GROUP_MARK;

type Runner = () => Promise<[errors: string | true, passed: number, skipped: number, total: number]>;
declare global {
  var UVU_DEFER: number | undefined;
  var UVU_INDEX: number | undefined;
  var UVU_QUEUE: [name: string | null, ...runners: Runner[]][];
}
globalThis.UVU_DEFER = 1;
globalThis.UVU_INDEX = 0;
globalThis.UVU_QUEUE = [];

function record(event: Record<string, unknown>): void {
  if (reportFile) appendFileSync(reportFile, `${JSON.stringify(event)}\n`);
}

/** Processor time (ms) of the processes this one started that have ended and been waited for (Linux). */
function childrenCpuMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return 0;
  }
}
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000 + childrenCpuMs();
}

const write = (text: string) => process.stdout.write(text);
let current: string | undefined;
process.on('exit', (code) => {
  if (current !== undefined) record({ event: 'exit', code, file: current });
});

// pg queues a statement sent while its connection runs another, and pg 9 will refuse it: a test
// whose server does so fails (pg warns once per process, so only the first such file is named).
let queuedQuery: string | undefined;
process.on('warning', (warning) => {
  if (warning.name === 'DeprecationWarning' && warning.message.includes('already executing a query')) queuedQuery = warning.stack;
});

const files = process.argv.slice(2);
// The first file's processor time includes the start of this process (tsx, the shared modules).
let cpuBefore = 0;
let failedFiles = 0;
for (const [index, arg] of files.entries()) {
  const path = resolve(arg);
  const file = relative(process.cwd(), path);
  const env = { ...process.env };
  const started = Date.now();
  current = file;
  record({ event: 'start', index, file, at: started });
  write(mark ? `\n${mark} ${index}\n` : `\n# ${file}\n`);

  const problems: string[] = [];
  const counts = { suites: 0, finished: 0, passed: 0, failed: 0, skipped: 0 };
  globalThis.UVU_INDEX = 0;
  globalThis.UVU_QUEUE = [[null]];
  process.exitCode = undefined;
  try {
    await import(pathToFileURL(path).href);
  } catch (err) {
    problems.push(`it did not load: ${(err as Error)?.stack ?? String(err)}`);
  }
  const [, ...runners] = globalThis.UVU_QUEUE[0] ?? [null];
  globalThis.UVU_QUEUE = [[null]];
  counts.suites = runners.length;
  for (const run of runners) {
    try {
      const [errors, passed, skipped, total] = await run();
      counts.finished++;
      counts.passed += passed;
      counts.failed += total - passed;
      counts.skipped += skipped;
      if (errors !== true) write(`\n${errors}\n`);
    } catch (err) {
      // uvu's runner rejects only when an `after` hook throws.
      write(`\n${(err as Error)?.stack ?? String(err)}\n`);
    }
  }
  write(`\n  Total:     ${counts.passed + counts.failed}\n  Passed:    ${counts.passed}\n  Skipped:   ${counts.skipped}\n`);
  if (counts.finished < counts.suites) problems.push(`${counts.suites - counts.finished} of ${counts.suites} suites did not finish`);
  if (queuedQuery) problems.push(`a statement was sent on a connection still running another: ${queuedQuery}`);
  queuedQuery = undefined;
  const exitCode = Number(process.exitCode ?? 0);
  if (exitCode !== 0) problems.push(`it set process.exitCode to ${process.exitCode}`);
  process.exitCode = undefined;

  // The environment as it was before the file.
  for (const name of Object.keys(process.env)) if (!(name in env)) delete process.env[name];
  for (const [name, value] of Object.entries(env)) if (process.env[name] !== value) process.env[name] = value;

  for (const problem of problems) write(`\n[test group] ${file}: ${problem}\n`);
  const cpuAfter = cpuMs();
  current = undefined;
  record({
    event: 'end',
    index,
    file,
    at: Date.now(),
    ...counts,
    failed: counts.failed + problems.length,
    ms: Date.now() - started,
    cpuMs: Math.round(cpuAfter - cpuBefore),
    problems,
  });
  cpuBefore = cpuAfter;
  if (counts.failed + problems.length > 0) failedFiles++;
}

// A failed test may leave open what it opened (a server whose close() it never reached): its
// failure is counted already, so the process ends now rather than hold its job until
// TEST_FILE_TIMEOUT. Only a group whose files all passed waits for its event loop to empty.
if (failedFiles > 0) {
  write(`\n[test group] ${failedFiles} file(s) failed: ending now; still open: ${process.getActiveResourcesInfo().join(', ')}\n`);
  process.exit(0);
}

// A process still running a while after its last file fails, saying what holds it (its own timer does not).
setTimeout(() => {
  // The sockets among them, by their ends: which server or client was left open.
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const sockets = handles.flatMap((h) =>
    h instanceof Socket && h.remotePort !== undefined ? [`${h.localPort} -> ${h.remoteAddress}:${h.remotePort}`] : [],
  );
  const open = [...process.getActiveResourcesInfo(), ...(sockets.length ? [`sockets ${sockets.join(', ')}`] : [])].join(', ');
  const message = `the process has not ended ${EXIT_GRACE_MS / 1000}s after its last file: still open: ${open}`;
  write(`\n[test group] ${message}\n`);
  record({ event: 'lingering', message });
  process.exit(1);
}, EXIT_GRACE_MS).unref();
