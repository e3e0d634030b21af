/**
 * The packages' build made current: `npm run build` (scripts/build.ts) unless the build in place is
 * the build of the sources in place (scripts/build-stamp.ts). The test runner calls it once before
 * the first test file and says so to the files (TEST_BUILD_CURRENT), so that in a run nothing builds
 * twice, nor while another file's server runs from the build; the packaging test, and the tests that
 * start the compiled server (packages/server/test/support/process.ts), call it too, which builds only
 * when a file is run alone after a source changed.
 *
 * Several processes may ask at once (`npm test` runs a few files at a time): the first takes a lock
 * directory (`dist/build.lock`, holding its pid), builds, and removes it; the others wait for it, then
 * find the build current. A lock whose process no longer runs is taken over.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { staleBuild } from './build-stamp.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Longer than any build takes on a loaded machine: only a hung build ends the wait. */
const BUILD_TIMEOUT_MS = 10 * 60_000;

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** When `path` was last modified (ms since the epoch), or now when it is gone. */
function modified(path: string): number {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return Date.now();
  }
}

/** Takes the lock directory, waiting while a running process holds it; returns its release. */
async function lock(dir: string): Promise<() => void> {
  const until = Date.now() + BUILD_TIMEOUT_MS;
  for (;;) {
    try {
      mkdirSync(dir, { recursive: false });
      writeFileSync(join(dir, 'pid'), String(process.pid));
      return () => rmSync(dir, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder: number | undefined;
    try {
      holder = Number(readFileSync(join(dir, 'pid'), 'utf8')) || undefined;
    } catch {}
    // No pid yet: its holder is between mkdir and writing it, unless that was long ago (it died
    // there); a pid of a process gone: a crashed build.
    const abandoned = holder === undefined ? Date.now() - modified(dir) > 10_000 : !running(holder);
    if (abandoned) rmSync(dir, { recursive: true, force: true });
    else if (Date.now() > until)
      throw new Error(`the build lock ${dir} is still held (by process ${holder ?? '?'}) after ${BUILD_TIMEOUT_MS / 60_000} min`);
    else await new Promise((r) => setTimeout(r, 250));
  }
}

function runBuild(root: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', join(root, 'scripts/dev/register.js'), join(root, 'scripts/build.ts')], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), BUILD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`npm run build failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}`));
    });
  });
}

/** Builds unless the build in place is current; says which it did. */
export async function currentBuild(root: string = ROOT): Promise<string> {
  const madeCurrent = process.env.TEST_BUILD_CURRENT;
  if (madeCurrent && resolve(madeCurrent) === resolve(root)) return 'made current by the test runner';
  if (!staleBuild(root)) return 'the build in place is the build of these sources: reused';
  mkdirSync(join(root, 'dist'), { recursive: true });
  const release = await lock(join(root, 'dist', 'build.lock'));
  try {
    // Another process may have built while this one waited.
    const stale = staleBuild(root);
    if (!stale) return 'the build in place is the build of these sources: reused';
    await runBuild(root);
    return `built (${stale})`;
  } finally {
    release();
  }
}
