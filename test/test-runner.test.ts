/**
 * What the test run and CI stand on: the counts scripts/dev/uvu-report.js gives the runner for files
 * that pass, fail, skip, break in a `before` hook or end early, whatever they print; the order of the
 * files; test databases copied from the migrated template, and empty ones; the build's record of what
 * it built (scripts/build-stamp.ts), which the packaging test trusts to reuse a build.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createMigratedTestDatabase, createTestDatabase, releaseTestDatabase } from '../packages/server/test/support/database.ts';
import { migrationsList } from '../packages/server/src/migrations/index.ts';
import { digestOfInputs, staleBuild, writeStamp } from '../scripts/build-stamp.ts';
import { orderBySlowest, readDurations, type Report, writeDurations } from '../scripts/test-order.ts';
import { ROOT } from './support/run.ts';

let tmp: string;
test.before(() => {
  tmp = mkdtempSync(join(tmpdir(), 'benchmarks-test-runner-'));
});
test.after(() => {
  rmSync(tmp, { recursive: true, force: true });
});

const UVU = pathToFileURL(join(ROOT, 'node_modules', 'uvu', 'dist', 'index.mjs')).href;

/** Runs a uvu file (its body after the import of `test` and `suite`) as the runner does; what it reports. */
async function report(name: string, body: string): Promise<{ code: number | null; report: Report | undefined }> {
  const file = join(tmp, `${name}.mjs`);
  const reportFile = join(tmp, `${name}.json`);
  writeFileSync(file, `import { test, suite } from '${UVU}';\n${body}\n`);
  const child = spawn(process.execPath, ['--import', join(ROOT, 'scripts', 'dev', 'uvu-report.js'), file], {
    env: { PATH: process.env.PATH, NO_COLOR: '1', TEST_REPORT: reportFile },
    stdio: 'ignore',
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  let parsed: Report | undefined;
  try {
    parsed = JSON.parse(readFileSync(reportFile, 'utf8')) as Report;
  } catch {
    parsed = undefined;
  }
  return { code, report: parsed };
}

test('the report counts passed, failed and skipped tests of every suite, and nothing the file prints', async () => {
  const r = await report(
    'mixed',
    `test('passes', () => {});
test('fails', () => { throw new Error('no'); });
test.skip('skipped', () => {});
test.run();
const other = suite('other');
other('passes too', async () => {});
other.run();
console.log('  Total:     99\\n  Passed:    99\\n  Skipped:   0');`,
  );
  assert.is(r.code, 1);
  assert.equal(r.report, { suites: 2, finished: 2, passed: 2, failed: 1, skipped: 1 });
});

test('a suite whose before hook throws counts its tests as failed (uvu itself exits 0)', async () => {
  const r = await report(
    'broken-before',
    `const s = suite('broken');
s.before(() => { throw new Error('no database'); });
s('one', () => {});
s('two', () => {});
s.run();`,
  );
  assert.equal(r.report, { suites: 1, finished: 1, passed: 0, failed: 2, skipped: 0 });
});

test('a file that exits before its suites finish reports them unfinished', async () => {
  const r = await report(
    'early-exit',
    `test('exits', () => { process.exit(0); });
test('never runs', () => {});
test.run();`,
  );
  assert.equal(r.report, { suites: 1, finished: 0, passed: 0, failed: 0, skipped: 0 });
});

test('the processes a test file starts do not inherit the report', async () => {
  const r = await report(
    'child-env',
    `import assert from 'node:assert';
test('TEST_REPORT is gone', () => { assert.equal(process.env.TEST_REPORT, undefined); });
test.run();`,
  );
  assert.equal(r.report, { suites: 1, finished: 1, passed: 1, failed: 0, skipped: 0 });
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
    const all = migrationsList.map((m) => m.name);
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

  rmSync(join(root, 'packages/cli/dist/benchmarks.js'));
  assert.is(staleBuild(root), 'packages/cli/dist/benchmarks.js missing');
});

test.run();
