/**
 * Runs every package's uvu test files, several to a Node process, a few processes at a time (the
 * slowest first), against one embedded PostgreSQL cluster started for the run, in which one database
 * is migrated first as the template of every test database with the service's schema.
 * First makes the packages' build current (scripts/current-build.ts: the tests that start the server
 * as a process start the compiled one). Prints a line per file and the closing line
 * `N passed, N failed`.
 *
 *   npm test                       # everything
 *   npm test -- packages/server    # only files whose path contains one of the arguments
 *   npm test -- packaging          # test/packaging.test.ts: pack, install and use the tarballs
 *
 * Groups (scripts/test-groups.ts): a process (scripts/dev/test-group.ts) runs the files of its group
 * one after the other, each with its own test server and database, so that loading tsx and the
 * shared modules is paid once per group. A file with a line `// test: own process: <reason>` near
 * its top, or given 30 s or more in scripts/test-durations.json, runs alone; the others are dealt
 * into groups of at most 8 files, of about equal time. TEST_GROUPS=0 runs every file alone. Each
 * file still gets its own line and counts; a failing file's output is printed alone; a file running
 * when its process dies fails, and the files of its group that never ran fail as not run, by name.
 *
 * TEST_JOBS: how many processes run at once (default: two more than the processors, at most 4).
 * A file still running after TEST_FILE_TIMEOUT (default 30m; `90s`, `45m`, or milliseconds; for
 * each file, not its group) is killed with its group and counted as failed, its name and the
 * timeout printed; the files of the group after it are not run. The limit only ends a hung file: on
 * a loaded machine a healthy file can take several times what it takes alone.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createTemplateDatabase, startTemporaryCluster } from '../packages/server/test/support/database.ts';
import { currentBuild } from './current-build.ts';
import { type FileOutcome, groupFiles, runGroup, runsAlone } from './test-groups.ts';
import { type Durations, readDurations, writeDurations } from './test-order.ts';

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
  if (!text) return Math.min(4, cpus().length + 2);
  const jobs = Number(text);
  if (!Number.isInteger(jobs) || jobs < 1 || jobs > 64) throw new Error(`TEST_JOBS must be an integer from 1 to 64, not '${text}'.`);
  return jobs;
}
const fileTimeout = process.env.TEST_FILE_TIMEOUT || '30m';
let fileTimeoutMs: number;
let jobs: number;
let grouped: boolean;
try {
  fileTimeoutMs = parseTimeout(fileTimeout);
  jobs = parseJobs(process.env.TEST_JOBS);
  if (!['', '0', '1'].includes(process.env.TEST_GROUPS ?? ''))
    throw new Error(`TEST_GROUPS must be 0 (every file alone) or 1, not '${process.env.TEST_GROUPS}'.`);
  grouped = process.env.TEST_GROUPS !== '0';
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

const reports = mkdtempSync(join(tmpdir(), 'benchmarks-test-reports-'));

const seconds = (ms: number) => (ms / 1000).toFixed(1);

async function main(): Promise<number> {
  if (files.length === 0) {
    console.log('no test files found');
    console.log('0 passed, 1 failed');
    return 1;
  }
  const checkedIn = readDurations(DEFAULTS);
  const known: Durations = { ...checkedIn, ...readDurations(LAST_RUN) };
  const alone = new Set(grouped ? files.filter((f) => runsAlone(f, readFileSync(join(root, f), 'utf8'), checkedIn)) : files);
  const queue = groupFiles(files, known, alone);
  let cluster: { url: string; stop(): Promise<void> } | undefined;
  const env = { ...process.env };
  const outcomes: FileOutcome[] = [];
  let processes = 0;
  let processCpuMs: number | undefined = 0;
  try {
    // The tests that start the server as a process start its build: made current here, once.
    console.log(`build: ${await currentBuild(root)}`);
    env.TEST_BUILD_CURRENT = root;
    if (!env.TEST_DATABASE_URL) {
      cluster = await startTemporaryCluster();
      env.TEST_DATABASE_URL = cluster.url;
    }
    env.TEST_TEMPLATE_DATABASE = await createTemplateDatabase(env.TEST_DATABASE_URL);
    let next = 0;
    const workers = Array.from({ length: Math.min(jobs, queue.length) }, async () => {
      while (next < queue.length) {
        const index = next++;
        const reportFile = join(reports, `${index}.jsonl`);
        const group = await runGroup(queue[index]!, { root, env, fileTimeoutMs, fileTimeout, reportFile });
        processes++;
        processCpuMs = group.cpuMs === undefined || processCpuMs === undefined ? undefined : processCpuMs + group.cpuMs;
        for (const outcome of group.files) {
          outcomes.push(outcome);
          const mark = outcome.failed ? 'FAIL' : 'ok  ';
          const timedOut = outcome.timedOut ? `; timed out after TEST_FILE_TIMEOUT (${fileTimeout})` : '';
          const cpu = outcome.cpuMs === undefined ? '' : `, cpu ${seconds(outcome.cpuMs)}s`;
          const file = outcome.file;
          console.log(`${mark} ${file}  ${outcome.passed} passed, ${outcome.failed} failed (${seconds(outcome.ms)}s${cpu}${timedOut})`);
          if (outcome.failed || process.env.TEST_VERBOSE) console.log(outcome.output.replace(/^/gm, '     | '));
        }
      }
    });
    await Promise.all(workers);
  } finally {
    await cluster?.stop();
    rmSync(reports, { recursive: true, force: true });
  }
  // A file that never ran has no duration to remember.
  const ran = outcomes.filter((o) => o.ms > 0);
  writeDurations(LAST_RUN, { ...readDurations(LAST_RUN), ...Object.fromEntries(ran.map((o) => [o.file, o.ms / 1000])) });
  const passed = outcomes.reduce((n, o) => n + o.passed, 0);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
  if (skipped) console.log(`${skipped} tests were skipped: a skipped test proves nothing`);
  for (const o of outcomes) if (o.timedOut) console.log(`timed out (TEST_FILE_TIMEOUT ${fileTimeout}): ${o.file}`);
  const cpu = processCpuMs === undefined ? '' : `, cpu ${seconds(processCpuMs)}s`;
  console.log(`${outcomes.length} files in ${processes} processes${cpu}`);
  console.log(`${passed} passed, ${failed + skipped} failed`);
  return failed + skipped > 0 ? 1 : 0;
}

process.exit(await main());
