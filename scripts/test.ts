/**
 * Runs every package's uvu test files, each in its own Node process, two at a time, against one
 * embedded PostgreSQL cluster started for the run (each file creates its own databases in it).
 * Prints a summary per file and the closing line `N passed, N failed`.
 *
 *   npm test                       # everything
 *   npm test -- packages/server    # only files whose path contains one of the arguments
 *   npm test -- packaging          # test/packaging.test.ts: build, pack, install and use the tarballs
 *
 * A file still running after TEST_FILE_TIMEOUT (default 30m; `90s`, `45m`, or milliseconds) is
 * killed and counted as failed, its name and the timeout printed. The limit only ends a hung file: on
 * a loaded machine a healthy file can take several times what it takes alone.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cpus } from 'node:os';
import { startTemporaryCluster } from '../packages/server/test/support/database.ts';

const root = new URL('..', import.meta.url).pathname;
const filters = process.argv.slice(2);

/** `30m`, `90s`, `500ms` or a number of milliseconds. */
function parseTimeout(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/i.exec(text);
  const ms = match ? Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? 'ms').toLowerCase() as 'ms'] : NaN;
  if (!(ms > 0)) throw new Error(`TEST_FILE_TIMEOUT must be a duration such as 30m, 90s or 600000, not '${text}'.`);
  return ms;
}
const fileTimeout = process.env.TEST_FILE_TIMEOUT || '30m';
let fileTimeoutMs: number;
try {
  fileTimeoutMs = parseTimeout(fileTimeout);
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

// Each package's tests, then the repository's own (test/: the packages as users install them).
const files = [...['sdk', 'server', 'cli'].map((p) => join(root, 'packages', p, 'test')), join(root, 'test')]
  .flatMap((dir) => {
    try {
      return findTests(dir);
    } catch {
      return [];
    }
  })
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();

interface Outcome {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  code: number | null;
  output: string;
  ms: number;
  timedOut: boolean;
}

function run(file: string, env: NodeJS.ProcessEnv): Promise<Outcome> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', join(root, 'scripts/dev/register.js'), file], {
      cwd: root,
      env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      output += `\n[test runner] ${relative(root, file)} killed: still running after TEST_FILE_TIMEOUT (${fileTimeout})\n`;
      child.kill('SIGKILL');
    }, fileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      // uvu's summary: "Total: N", "Passed: N", "Skipped: N" (summed over the file's suites).
      const sum = (label: string) => [...output.matchAll(new RegExp(`${label}:\\s+(\\d+)`, 'g'))].reduce((n, m) => n + Number(m[1]), 0);
      const total = sum('Total');
      const passed = sum('Passed');
      const skipped = sum('Skipped');
      let failed = total - passed - skipped;
      if (code !== 0 && failed === 0) failed = 1; // crashed before or after its tests
      resolve({ file, passed, failed, skipped, code, output, ms: Date.now() - started, timedOut });
    });
  });
}

async function main(): Promise<number> {
  if (files.length === 0) {
    console.log('no test files found');
    console.log('0 passed, 1 failed');
    return 1;
  }
  let cluster: { url: string; stop(): Promise<void> } | undefined;
  const env = { ...process.env };
  if (!env.TEST_DATABASE_URL) {
    cluster = await startTemporaryCluster();
    env.TEST_DATABASE_URL = cluster.url;
  }
  const outcomes: Outcome[] = [];
  const queue = [...files];
  const workers = Array.from({ length: Math.max(1, Math.min(2, cpus().length)) }, async () => {
    while (queue.length) {
      const file = queue.shift()!;
      const outcome = await run(file, env);
      outcomes.push(outcome);
      const mark = outcome.failed ? 'FAIL' : 'ok  ';
      const timedOut = outcome.timedOut ? `; timed out after TEST_FILE_TIMEOUT (${fileTimeout})` : '';
      console.log(
        `${mark} ${relative(root, file)}  ${outcome.passed} passed, ${outcome.failed} failed (${(outcome.ms / 1000).toFixed(1)}s${timedOut})`,
      );
      if (outcome.failed || process.env.TEST_VERBOSE) console.log(outcome.output.replace(/^/gm, '     | '));
    }
  });
  try {
    await Promise.all(workers);
  } finally {
    await cluster?.stop();
  }
  const passed = outcomes.reduce((n, o) => n + o.passed, 0);
  const failed = outcomes.reduce((n, o) => n + o.failed, 0);
  const skipped = outcomes.reduce((n, o) => n + o.skipped, 0);
  if (skipped) console.log(`${skipped} tests were skipped: a skipped test proves nothing`);
  for (const o of outcomes) if (o.timedOut) console.log(`timed out (TEST_FILE_TIMEOUT ${fileTimeout}): ${relative(root, o.file)}`);
  console.log(`${passed} passed, ${failed + skipped} failed`);
  return failed + skipped > 0 ? 1 : 0;
}

process.exit(await main());
