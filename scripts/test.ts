/**
 * Runs every package's uvu test files, each in its own Node process, a few at a time (the slowest
 * first), against one embedded PostgreSQL cluster started for the run, in which one database is
 * migrated first as the template of every test database with the service's schema.
 * Prints a line per file and the closing line `N passed, N failed`.
 *
 *   npm test                       # everything
 *   npm test -- packages/server    # only files whose path contains one of the arguments
 *   npm test -- packaging          # test/packaging.test.ts: pack, install and use the tarballs
 *
 * TEST_JOBS: how many files run at once (default: one more than the processors, at most 3).
 * A file still running after TEST_FILE_TIMEOUT (default 30m; `90s`, `45m`, or milliseconds) is
 * killed and counted as failed, its name and the timeout printed. The limit only ends a hung file: on
 * a loaded machine a healthy file can take several times what it takes alone.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createTemplateDatabase, startTemporaryCluster } from '../packages/server/test/support/database.ts';
import { currentBuild } from './current-build.ts';
import { type Durations, endedChildrenCpuMs, orderBySlowest, readDurations, type Report, writeDurations } from './test-order.ts';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);
/** Each file's duration in the last run here (ignored by git), over the checked-in defaults. */
const LAST_RUN = join(root, '.test-durations.json');
const DEFAULTS = join(root, 'scripts', 'test-durations.json');

/** `30m`, `90s`, `500ms` or a number of milliseconds. */
function parseTimeout(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/i.exec(text);
  const ms = match ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? 'ms').toLowerCase() as 'ms'] : NaN;
  if (!(ms > 0)) throw new Error(`TEST_FILE_TIMEOUT must be a duration such as 30m, 90s or 600000, not '${text}'.`);
  return ms;
}
function parseJobs(text: string | undefined): number {
  if (!text) return Math.min(3, cpus().length + 1);
  const jobs = Number(text);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64) throw new Error(`TEST_JOBS must be an integer from 1 to 64, not '${text}'.`);
  return jobs;
}
const fileTimeout = process.env.TEST_FILE_TIMEOUT || '30m';
let fileTimeoutMs: number;
let jobs: number;
try {
  fileTimeoutMs = parseTimeout(fileTimeout);
  jobs = parseJobs(process.env.TEST_JOBS);
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'support' || entry === 'fixtures') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) out.push(...findTests(path));
    else if (entry.endsWith('.test.ts')) out.push(path);
  }
  return out;
}

// Each package's tests and the repository's own (test/: the packages as users install them).
const files = [...['sdk', 'server', 'cli'].map((p) => join(root, 'packages', p, 'test')), join(root, 'test')]
  .flatMap((dir) => {
    try {
      return findTests(dir);
    } catch {
      return [];
    }
  })
  .map((f) => relative(root, f))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

interface Outcome extends Report {
  file: string;
  code: number | null;
  output: string;
  ms: number;
  /** Processor time of the file's process and the processes it waited for (not PostgreSQL's), when known. */
  cpuMs: number | undefined;
  timedOut: boolean;
}

/** Ended children's processor time when last read: a file's is the growth when it ends. */
let childrenCpuMs = endedChildrenCpuMs();

const reports = mkdtempSync(join(tmpdir(), 'benchmarks-test-reports-'));

/**
 * Runs one file with scripts/dev/uvu-report.js loaded first, which writes what uvu counted to a file
 * of its own when the process exits: the counts never come from the output. A file that exits
 * non-zero with every test passed (a crash before or after its tests), or whose suites did not all
 * finish (or that wrote no report), counts one failure more.
 */
function run(file: string, index: number, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const started = Date.now();
  const reportFile = join(reports, `${index}.json`);
  return new Promise((resolve) => {
    const args = ['--import', join(root, 'scripts/dev/register.js'), '--import', join(root, 'scripts/dev/uvu-report.js'), join(root, file)];
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0', TEST_REPORT: reportFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      output += `\n[test runner] ${file} killed: still running after TEST_FILE_TIMEOUT (${fileTimeout})\n`;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const cpuNow = endedChildrenCpuMs();
      const cpuMs = cpuNow === undefined || childrenCpuMs === undefined ? undefined : cpuNow - childrenCpuMs;
      childrenCpuMs = cpuNow;
      let report: Report | undefined;
      try {
        report = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
      } catch {}
      const counts = report ?? { suites: 0, finished: 0, passed: 0, failed: 0, skipped: 0 };
      const unfinished = !report
        ? 'wrote no report: it ended before its exit handlers ran'
        : report.finished < report.suites
          ? `${report.suites - report.finished} of ${report.suites} suites did not finish`
          : undefined;
      if (unfinished) output += `\n[test runner] ${file} ${unfinished}\n`;
      const failed = counts.failed || (unfinished || code !== 0 ? 1 : 0);
      resolve({ ...counts, failed, file, code, output, ms: Date.now() - started, cpuMs, timedOut });
    });
  });
}

async function main(): Promise<number> {
  if (files.length === 0) {
    console.log('no test files found');
    console.log('0 passed, 1 failed');
    return 1;
  }
  const known: Durations = { ...readDurations(DEFAULTS), ...readDurations(LAST_RUN) };
  const queue = orderBySlowest(files, known);
  let cluster: { url: string; stop(): Promise<void> } | undefined;
  const env = { ...process.env };
  const outcomes: Outcome[] = [];
  try {
    // The tests that start the server as a process start its build: made current here, once.
    console.log(`build: ${await currentBuild(root)}`);
    env.TEST_BUILD_CURRENT = root;
    childrenCpuMs = endedChildrenCpuMs(); // the build's is no file's
    if (!env.TEST_DATABASE_URL) {
      cluster = await startTemporaryCluster();
      env.TEST_DATABASE_URL = cluster.url;
    }
    env.TEST_TEMPLATE_DATABASE = await createTemplateDatabase(env.TEST_DATABASE_URL);
    let next = 0;
    const workers = Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      while (next < queue.length) {
        const index = next++;
        const file = queue[index]!;
        const outcome = await run(file, index, env);
        outcomes.push(outcome);
        const mark = outcome.failed ? 'FAIL' : 'ok  ';
        const timedOut = outcome.timedOut ? `; timed out after TEST_FILE_TIMEOUT (${fileTimeout})` : '';
        const seconds = (ms: number) => (ms / 1000).toFixed(1);
        const cpu = outcome.cpuMs === undefined ? '' : `, cpu ${seconds(outcome.cpuMs)}s`;
        console.log(`${mark} ${file}  ${outcome.passed} passed, ${outcome.failed} failed (${seconds(outcome.ms)}s${cpu}${timedOut})`);
        if (outcome.failed || process.env.TEST_VERBOSE) console.log(outcome.output.replace(/^/gm, '     | '));
      }
    });
    await Promise.all(workers);
  } finally {
    await cluster?.stop();
    rmSync(reports, { recursive: true, force: true });
  }
  writeDurations(LAST_RUN, { ...readDurations(LAST_RUN), ...Object.fromEntries(outcomes.map((o) => [o.file, o.ms / 1000])) });
  const passed = outcomes.reduce((n, o) => n + o.passed, 0);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
  if (skipped) console.log(`${skipped} tests were skipped: a skipped test proves nothing`);
  for (const o of outcomes) if (o.timedOut) console.log(`timed out (TEST_FILE_TIMEOUT ${fileTimeout}): ${o.file}`);
  console.log(`${passed} passed, ${failed + skipped} failed`);
  return failed + skipped > 0 ? 1 : 0;
}

process.exit(await main());
