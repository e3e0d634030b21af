/**
 * What the test run and CI stand on: the counts the group host (scripts/dev/test-group.ts) gives the
 * runner for files that pass, fail, skip, break in a `before` hook, end early, crash, hang or leave
 * the process running, whatever they print; which files share a process and in which order; test
 * databases copied from the migrated template, and empty ones; the build's record of what it built
 * (scripts/build-stamp.ts), which the packaging test trusts to reuse a build; what the tests need
 * installed (scripts/test-deps.sh).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMigratedTestDatabase, createTestDatabase, releaseTestDatabase } from '../packages/server/test/support/database.ts';
import { migrationNames } from '../packages/server/src/migrations/index.ts';
import { digestOfInputs, staleBuild, writeStamp } from '../scripts/build-stamp.ts';
import {
  type FileOutcome,
  GROUP_FILES,
  runsAlone,
  groupFiles,
  ownProcessReason,
  runGroup,
  SOLO_SECONDS,
  UNKNOWN_SECONDS,
} from '../scripts/test-groups.ts';
import { orderBySlowest, readDurations, writeDurations } from '../scripts/test-order.ts';
import { ROOT, run } from './support/run.ts';

let tmp: string;
test.before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'benchmarks-test-runner-'));
});
test.after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

const UVU = pathToFileURL(join(ROOT, 'node_modules', 'uvu', 'dist', 'index.mjs')).href;

/**
 * Runs uvu files (each given by its body after the import of `test` and `suite`) in one group, as
 * the runner does; what became of each, by name.
 */
async function group(
  files: Record<string, string>,
  options: { timeoutMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<Record<string, FileOutcome>> {
  const paths = Object.entries(files).map(([name, body]) => {
    const file = join(tmp, `${name}.test.mjs`);
    writeFileSync(file, `import { test, suite } from '${UVU}';\n${body}\n`);
    return relative(ROOT, file);
  });
  const outcome = await runGroup(paths, {
    root: ROOT,
    env: { PATH: process.env.PATH, ...options.env },
    fileTimeoutMs: options.timeoutMs ?? 120_000,
    fileTimeout: `${options.timeoutMs ?? 120_000}ms`,
    reportFile: join(tmp, 'report.jsonl'),
  });
  assert.equal(
    outcome.files.map((f) => f.file),
    paths,
    'one outcome a file, in order',
  );
  return Object.fromEntries(Object.keys(files).map((name, i) => [name, outcome.files[i]!]));
}

const counts = ({ suites, finished, passed, failed, skipped }: FileOutcome) => ({ suites, finished, passed, failed, skipped });

test('each file of a group is counted apart: passed, failed and skipped tests of every suite, and nothing the files print', async () => {
  const r = await group({
    mixed: `test('passes', () => {});
test('fails', () => { throw new Error('the mixed failure'); });
test.skip('skipped', () => {});
test.run();
const other = suite('other');
other('passes too', async () => {});
other.run();
console.log('  Total:     99\\n  Passed:    99\\n  Skipped:   0');`,
    clean: `test('passes', () => {});
test.run();`,
  });
  assert.equal(counts(r.mixed!), { suites: 2, finished: 2, passed: 2, failed: 1, skipped: 1 });
  assert.equal(counts(r.clean!), { suites: 1, finished: 1, passed: 1, failed: 0, skipped: 0 });
  assert.match(r.mixed!.output, 'the mixed failure');
  assert.not.match(r.clean!.output, 'the mixed failure', "a file's output is its own");
});

test('a suite whose before hook throws counts its tests as failed (uvu itself exits 0)', async () => {
  const r = await group({
    broken: `const s = suite('broken');
s.before(() => { throw new Error('no database'); });
s('one', () => {});
s('two', () => {});
s.run();`,
  });
  assert.equal(counts(r.broken!), { suites: 1, finished: 1, passed: 0, failed: 2, skipped: 0 });
});

test('a file that exits before its suites finish fails, and the files after it fail as not run, by name', async () => {
  const r = await group({
    first: `test('passes', () => {});
test.run();`,
    exits: `test('exits', () => { process.exit(0); });
test('never runs', () => {});
test.run();`,
    after: `test('never runs', () => {});
test.run();`,
  });
  assert.is(r.first!.failed, 0);
  assert.is(r.exits!.failed, 1);
  assert.match(r.exits!.output, 'did not finish: its process ended before its suites finished');
  assert.equal(counts(r.after!), { suites: 0, finished: 0, passed: 0, failed: 1, skipped: 0 });
  assert.match(r.after!.output, /not run: its group's process ended during .*exits\.test\.mjs/);
});

test('an uncaught error ends the file it happens in, and the group', async () => {
  const r = await group({
    crashes: `test('crashes later', () => new Promise(() => { setTimeout(() => { throw new Error('late crash'); }); }));
test.run();`,
    after: `test('never runs', () => {});
test.run();`,
  });
  assert.is(r.crashes!.failed, 1);
  assert.match(r.crashes!.output, 'late crash');
  assert.match(r.crashes!.output, 'exited with code 1 before its suites finished');
  assert.match(r.after!.output, 'not run');
});

test('a file running after TEST_FILE_TIMEOUT is killed with its group, the timeout counting from its own start', async () => {
  const r = await group(
    {
      quick: `test('waits less than the timeout', () => new Promise((r) => setTimeout(r, 4000)));
test.run();`,
      quick2: `test('waits less than the timeout too', () => new Promise((r) => setTimeout(r, 4000)));
test.run();`,
      hangs: `test('hangs', () => new Promise(() => setInterval(() => {}, 1000)));
test.run();`,
      after: `test('never runs', () => {});
test.run();`,
    },
    { timeoutMs: 6000 },
  );
  assert.is(r.quick!.failed + r.quick2!.failed, 0, 'two files taking more than the timeout together pass');
  assert.ok(r.hangs!.timedOut);
  assert.match(r.hangs!.output, 'timed out after TEST_FILE_TIMEOUT (6000ms)');
  assert.ok(!r.after!.timedOut);
  assert.match(r.after!.output, 'not run');
});

test("each file starts with the environment the group started with; the group's report reaches no process a test starts", async () => {
  const r = await group(
    {
      changes: `process.env.LEFT_BY_A_FILE = '1';
delete process.env.KEPT;
test('changes the environment', () => { process.env.CHANGED = 'yes'; });
test.run();`,
      reads: `import assert from 'node:assert';
test('sees it unchanged', () => {
  assert.equal(process.env.LEFT_BY_A_FILE, undefined);
  assert.equal(process.env.CHANGED, undefined);
  assert.equal(process.env.KEPT, 'kept');
  assert.equal(process.env.TEST_REPORT, undefined);
  assert.equal(process.env.TEST_GROUP_MARK, undefined);
});
test.run();`,
    },
    { env: { KEPT: 'kept' } },
  );
  assert.equal(counts(r.reads!), { suites: 1, finished: 1, passed: 1, failed: 0, skipped: 0 });
});

test('a file that sets process.exitCode fails, alone', async () => {
  const r = await group({
    code: `test('passes but sets the exit code', () => { process.exitCode = 3; });
test.run();`,
    next: `test('passes', () => {});
test.run();`,
  });
  assert.equal(counts(r.code!), { suites: 1, finished: 1, passed: 1, failed: 1, skipped: 0 });
  assert.match(r.code!.output, 'it set process.exitCode to 3');
  assert.is(r.next!.failed, 0);
});

test('a process kept running after its last file fails that file after TEST_EXIT_GRACE_MS, naming what is open', async () => {
  const started = Date.now();
  const r = await group(
    {
      first: `test('passes', () => {});
test.run();`,
      leaks: `import { createServer } from 'node:net';
test('leaves a server listening', async () => { await new Promise((r) => createServer().listen(0, '127.0.0.1', r)); });
test.run();`,
    },
    { env: { TEST_EXIT_GRACE_MS: '300' } },
  );
  assert.ok(Date.now() - started < 60_000, 'ended by the grace, not by TEST_FILE_TIMEOUT (120 s)');
  assert.is(r.first!.failed, 0);
  assert.is(r.leaks!.passed, 1);
  assert.is(r.leaks!.failed, 1);
  assert.match(r.leaks!.output, 'after its last file the process exited with code 1');
  assert.match(r.leaks!.output, /has not ended 0\.3s after its last file: still open: .*TCPServerWrap/);
  assert.match(r.leaks!.output, /a file of this group left it: .*first\.test\.mjs, .*leaks\.test\.mjs/);
});

test('a timer left running (the loser of a race) fails the file too; an unreferenced one does not', async () => {
  const r = await group(
    {
      races: `test('wins a race against a long timer', async () => {
  await Promise.race([Promise.resolve(), new Promise((r) => setTimeout(r, 60_000))]);
});
test.run();`,
    },
    { env: { TEST_EXIT_GRACE_MS: '300' } },
  );
  assert.is(r.races!.failed, 1);
  assert.match(r.races!.output, /still open: .*Timeout/);
  const ok = await group(
    {
      unrefs: `test('an unreferenced timer', () => { setTimeout(() => {}, 60_000).unref(); });
test.run();`,
    },
    { env: { TEST_EXIT_GRACE_MS: '300' } },
  );
  assert.equal(counts(ok.unrefs!), { suites: 1, finished: 1, passed: 1, failed: 0, skipped: 0 });
});

test('a group with a failed file ends after its last file, even with what the failed test left open', async () => {
  const started = Date.now();
  const r = await group(
    {
      fails: `import { createServer } from 'node:net';
test('leaves a server listening, then fails', async () => {
  await new Promise((r) => createServer().listen(0, '127.0.0.1', r));
  throw new Error('failed before its close');
});
test.run();`,
      next: `test('passes', () => {});
test.run();`,
    },
    { timeoutMs: 60_000 },
  );
  assert.equal(counts(r.fails!), { suites: 1, finished: 1, passed: 0, failed: 1, skipped: 0 });
  assert.equal(counts(r.next!), { suites: 1, finished: 1, passed: 1, failed: 0, skipped: 0 });
  assert.match(r.next!.output, /1 file\(s\) failed: ending now; still open: .*TCPServerWrap/);
  assert.ok(Date.now() - started < 50_000, 'ended long before TEST_FILE_TIMEOUT');
});

test('a file marked "own process" or slow by the checked-in durations runs alone; the others share processes, the slowest group first', () => {
  assert.is(
    ownProcessReason(`/** Doc. */\n// test: own process: installs a SIGTERM handler\nimport x from 'y';`),
    'installs a SIGTERM handler',
  );
  assert.is(ownProcessReason(`/** Doc. */\nimport x from 'y';\n// test: own process is not what this says`), undefined);
  assert.is(runsAlone('slow.test.ts', '', { 'slow.test.ts': SOLO_SECONDS }), `takes ${SOLO_SECONDS}s`);
  assert.is(runsAlone('light.test.ts', '', { 'light.test.ts': SOLO_SECONDS - 1 }), undefined);

  const durations = { 'slow.test.ts': 100, 'a.test.ts': 10, 'b.test.ts': 9, 'c.test.ts': 5 };
  const light = Array.from({ length: 2 * GROUP_FILES }, (_, i) => `light${i}.test.ts`);
  const files = ['a.test.ts', 'b.test.ts', 'c.test.ts', 'marked.test.ts', 'slow.test.ts', ...light];
  const groups = groupFiles(files, durations, new Set(['marked.test.ts', 'slow.test.ts']));
  assert.equal(groups[0], ['slow.test.ts'], 'the slowest first');
  assert.ok(groups.some((g) => g.length === 1 && g[0] === 'marked.test.ts'));
  assert.equal(groups.flat().sort(), files.sort(), 'every file once');
  const shared = groups.filter((g) => !g.includes('slow.test.ts') && !g.includes('marked.test.ts'));
  assert.is(shared.length, 3, 'as few groups as GROUP_FILES allows');
  for (const g of shared) assert.ok(g.length <= GROUP_FILES);
  const seconds = (g: string[]) => g.reduce((n, f) => n + (durations[f as keyof typeof durations] ?? UNKNOWN_SECONDS), 0);
  assert.equal(
    groups.map(seconds),
    groups.map(seconds).sort((x, y) => y - x),
    'the slowest group first',
  );
  assert.ok(Math.max(...shared.map(seconds)) - Math.min(...shared.map(seconds)) <= UNKNOWN_SECONDS, 'groups of about equal time');
});

test('files run slowest first, known before unknown, the unknown in path order; durations survive a round trip', () => {
  const file = join(tmp, 'durations.json');
  writeDurations(file, { 'b.test.ts': 2.04, 'a.test.ts': 30 });
  assert.equal(readDurations(file), { 'a.test.ts': 30, 'b.test.ts': 2 });
  assert.equal(orderBySlowest(['d.test.ts', 'b.test.ts', 'c.test.ts', 'a.test.ts'], readDurations(file)), [
    'a.test.ts',
    'b.test.ts',
    'c.test.ts',
    'd.test.ts',
  ]);
  writeFileSync(file, '["not", "durations"]');
  assert.equal(readDurations(file), {});
  assert.equal(readDurations(join(tmp, 'missing.json')), {});
});

async function tablesAndMigrations(url: string): Promise<{ tables: number; migrations: string[] }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ n: string }>(`select count(*) as n from pg_tables where schemaname = 'public'`);
    const applied = await client
      .query<{ name: string }>('select name from mikro_orm_migrations order by id')
      .then((r) => r.rows.map((row) => row.name))
      .catch(() => []);
    return { tables: Number(tables.rows[0]!.n), migrations: applied };
  } finally {
    await client.end();
  }
}

test('a migrated test database has every migration applied and is a copy of its own; an empty one has no table', async () => {
  const [a, b, empty] = await Promise.all([
    createMigratedTestDatabase('copy_a'),
    createMigratedTestDatabase('copy_b'),
    createTestDatabase('empty'),
  ]);
  try {
    const all = [...migrationNames];
    assert.equal((await tablesAndMigrations(a)).migrations, all);
    assert.equal(await tablesAndMigrations(empty), { tables: 0, migrations: [] });
    const client = new pg.Client({ connectionString: a });
    await client.connect();
    await client.query('create table only_in_a (id int)');
    await client.end();
    const [inA, inB] = [await tablesAndMigrations(a), await tablesAndMigrations(b)];
    assert.is(inA.tables, inB.tables + 1, 'a table made in one copy is not in the other');
    assert.equal(inB.migrations, all);
  } finally {
    for (let i = 0; i < 3; i++) await releaseTestDatabase();
  }
});

test('the build is reused only while the sources it read are unchanged and its outputs are there', () => {
  const root = join(tmp, 'repo');
  const put = (path: string, text: string) => {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  for (const name of ['sdk', 'server', 'demo', 'cli']) {
    put(`packages/${name}/package.json`, '{}');
    put(`packages/${name}/src/index.ts`, `export const name = '${name}';`);
  }
  for (const name of ['sdk', 'server', 'demo']) put(`packages/${name}/dist/index.js`, '');
  put('packages/cli/dist/benchmarks.js', '');
  put('packages/server/assets/explorer/explorer.js', '');
  assert.is(staleBuild(root), 'no build recorded');
  writeStamp(root);
  assert.is(staleBuild(root), undefined);

  const before = digestOfInputs(root);
  put('packages/server/src/index.ts', `export const name = 'changed';`);
  assert.is(staleBuild(root), 'the sources changed since the last build');
  put('packages/server/src/index.ts', `export const name = 'server';`);
  assert.is(digestOfInputs(root), before, 'the same sources, the same digest');

  put('packages/sdk/src/added.ts', '');
  assert.is(staleBuild(root), 'the sources changed since the last build', 'a file added');
  rmSync(join(root, 'packages/sdk/src/added.ts'));
  assert.is(staleBuild(root), undefined);
  put('package-lock.json', '{}');
  assert.is(staleBuild(root), 'the sources changed since the last build', 'the dependencies changed');
  writeStamp(root);

  put('packages/server/explorer/main.tsx', '');
  assert.is(staleBuild(root), 'the sources changed since the last build', "the explorer's sources");
  writeStamp(root);

  rmSync(join(root, 'packages/server/assets/explorer/explorer.js'));
  assert.is(staleBuild(root), 'packages/server/assets/explorer/explorer.js missing');
  put('packages/server/assets/explorer/explorer.js', '');
  rmSync(join(root, 'packages/cli/dist/benchmarks.js'));
  assert.is(staleBuild(root), 'packages/cli/dist/benchmarks.js missing');
});

const TEST_DEPS = join(ROOT, 'scripts', 'test-deps.sh');

test('scripts/test-deps.sh says nothing and exits 0 when everything the tests need is installed', async () => {
  assert.equal(await run('/bin/bash', [TEST_DEPS], { cwd: ROOT, timeoutMs: 10_000 }), { code: 0, signal: null, stdout: '', stderr: '' });
});

test('scripts/test-deps.sh, commands missing and no apt-get on PATH, exits 1 with one line naming the packages', async () => {
  // PostgreSQL 15 and PgBouncer are found by their paths, which `npm test` has made present.
  const s = await run('/bin/bash', [TEST_DEPS], { cwd: ROOT, env: { PATH: tmp }, timeoutMs: 10_000 });
  assert.equal(s, {
    code: 1,
    signal: null,
    stdout: '',
    stderr: 'npm test needs Debian packages: chromium curl jq fish; install them (apt-get install chromium curl jq fish) or run as root\n',
  });
});

test.run();
