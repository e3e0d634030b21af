/**
 * scripts/current-build.ts: the build made current before the tests that start the compiled server,
 * by one process at a time, on a repository of its own whose `scripts/build.ts` only records that it
 * ran and writes what a build leaves (the outputs and dist/build.json).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { staleBuild } from '../scripts/build-stamp.ts';
import { currentBuild } from '../scripts/current-build.ts';
import { ROOT } from './support/run.ts';

let root: string;

const put = (path: string, text: string) => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
};
/** The pids of the builds that ran, in order. */
const builds = () =>
  existsSync(join(root, 'builds.log')) ? readFileSync(join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean) : [];
const lockDir = () => join(root, 'dist', 'build.lock');

test.before(() => {
  root = mkdtempSync(join(tmpdir(), 'benchmarks-current-build-'));
  for (const name of ['sdk', 'server', 'demo', 'cli']) {
    put(`packages/${name}/package.json`, '{}');
    put(`packages/${name}/src/index.ts`, `export const name = '${name}';`);
  }
  put('package.json', '{ "type": "module" }');
  // The repository's TypeScript loader, for the fake build below.
  put('scripts/dev/register.js', `import ${JSON.stringify(join(ROOT, 'scripts', 'dev', 'register.js'))};\n`);
  put(
    'scripts/build.ts',
    `import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeStamp } from ${JSON.stringify(join(ROOT, 'scripts', 'build-stamp.ts'))};
const root = process.cwd();
appendFileSync(join(root, 'builds.log'), process.pid + '\\n');
if (existsSync(join(root, 'fail'))) {
  console.error('tsc: an error in the sources');
  process.exit(2);
}
// Long enough for the other callers to find the lock taken.
await new Promise((r) => setTimeout(r, 1000));
for (const name of ['sdk', 'server', 'demo']) {
  mkdirSync(join(root, 'packages', name, 'dist'), { recursive: true });
  writeFileSync(join(root, 'packages', name, 'dist', 'index.js'), '');
}
mkdirSync(join(root, 'packages', 'cli', 'dist'), { recursive: true });
writeFileSync(join(root, 'packages', 'cli', 'dist', 'benchmarks.js'), '');
mkdirSync(join(root, 'packages', 'server', 'assets', 'explorer'), { recursive: true });
writeFileSync(join(root, 'packages', 'server', 'assets', 'explorer', 'explorer.js'), '');
writeStamp(root);
`,
  );
});
test.after(() => {
  rmSync(root, { recursive: true, force: true });
});

test('callers at once: one builds, the others wait for it and reuse its build; a current build is reused', async () => {
  assert.is(staleBuild(root), 'no build recorded');
  const said = await Promise.all([currentBuild(root), currentBuild(root), currentBuild(root)]);
  assert.equal(said.sort(), [
    'built (no build recorded)',
    'the build in place is the build of these sources: reused',
    'the build in place is the build of these sources: reused',
  ]);
  assert.is(builds().length, 1, 'built once');
  assert.is(staleBuild(root), undefined);
  assert.not.ok(existsSync(lockDir()), 'the lock is released');

  assert.is(await currentBuild(root), 'the build in place is the build of these sources: reused');
  assert.is(builds().length, 1);
  put('packages/server/src/index.ts', `export const name = 'changed';`);
  assert.is(await currentBuild(root), 'built (the sources changed since the last build)');
  assert.is(builds().length, 2);
});

test('in a run of the test runner (TEST_BUILD_CURRENT naming this repository) nothing is checked or built', async () => {
  put('packages/server/src/index.ts', `export const name = 'changed in the run';`);
  const before = process.env.TEST_BUILD_CURRENT;
  process.env.TEST_BUILD_CURRENT = `${root}/`;
  try {
    assert.is(await currentBuild(root), 'made current by the test runner');
  } finally {
    if (before === undefined) delete process.env.TEST_BUILD_CURRENT;
    else process.env.TEST_BUILD_CURRENT = before;
  }
  assert.is(builds().length, 2);
  assert.is(staleBuild(root), 'the sources changed since the last build');
});

test('a lock left by a process that ended is taken over', async () => {
  put('packages/server/src/index.ts', `export const name = 'changed again';`);
  const ended = spawnSync(process.execPath, ['-e', '']).pid!;
  put('dist/build.lock/pid', String(ended));
  assert.is(await currentBuild(root), 'built (the sources changed since the last build)');
  assert.is(builds().length, 3);
  assert.not.ok(existsSync(lockDir()));

  // One that died before it wrote its pid: taken over once it is older than 10 s.
  put('packages/server/src/index.ts', `export const name = 'changed once more';`);
  mkdirSync(lockDir(), { recursive: true });
  const old = new Date(Date.now() - 60_000);
  utimesSync(lockDir(), old, old);
  assert.is(await currentBuild(root), 'built (the sources changed since the last build)');
  assert.is(builds().length, 4);
  assert.not.ok(existsSync(lockDir()));
});

test('a failed build: rejected with its output, the lock released, the build still stale', async () => {
  put('packages/server/src/index.ts', `export const name = 'broken';`);
  put('fail', '');
  try {
    await currentBuild(root).then(
      () => assert.unreachable('the build failed'),
      (err: Error) => {
        assert.match(err.message, /^npm run build failed \(exit 2\):/);
        assert.match(err.message, /tsc: an error in the sources/);
      },
    );
  } finally {
    rmSync(join(root, 'fail'));
  }
  assert.not.ok(existsSync(lockDir()));
  assert.is(staleBuild(root), 'the sources changed since the last build');
  assert.is(await currentBuild(root), 'built (the sources changed since the last build)');
});

test.run();
