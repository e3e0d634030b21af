/**
 * A stop asked for during the start-up (exit.ts `StopRequests`): SIGTERM or SIGINT while the data
 * directory is checked, the embedded PostgreSQL is created or started, the database is not
 * reachable yet, or the migrations wait, and the npm parent ending meanwhile. Each ends what is in
 * progress, releases what was acquired (the embedded cluster stopped), logs one info line and exits
 * 0; no process naming the data directory is left, and the next start serves. Real processes, real
 * signals, each sent at a point the process's own log lines show.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { MIGRATION_LOCK } from '../src/db/advisory-lock.ts';
import { freePort } from '../src/db/embedded.ts';
import { createTestDatabase, releaseTestDatabase } from './support/database.ts';
import {
  BIN,
  SOURCE_BIN,
  onTerminal,
  postgresGone,
  processesNaming,
  runServer,
  serverEnv,
  serving,
  waitFor,
  watch,
  type ServerProcess,
} from './support/process.ts';

/** Generous: only a process left behind fails it. */
const GONE_MS = 15_000;
const INTERRUPTED = 'stopping: the start-up is interrupted, releasing what it acquired';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-interrupt-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Waits for a line of stderr matching `pattern`; fails when the process ends first. */
async function untilLine(s: ServerProcess, pattern: RegExp, text: () => string = s.stderr): Promise<void> {
  await waitFor(
    () => pattern.test(text()) || s.child.exitCode !== null,
    () => `${pattern} (stderr: ${text().slice(-3000)})`,
  );
  assert.is(s.child.exitCode, null, `still starting when ${pattern} came: ${text().slice(-3000)}`);
}

/** The process ended with 0 after one info line saying so, nothing above info, no plain error line. */
async function interruptedCleanly(s: ServerProcess, signal: string): Promise<void> {
  const code = await s.exited;
  await s.closed;
  assert.is(code, 0, s.stderr());
  const lines = s.logLines();
  const stopping = lines.filter((l) => l.msg === INTERRUPTED);
  assert.equal(
    stopping.map((l) => [l.level, l.signal]),
    [['info', signal]],
    s.stderr(),
  );
  assert.not.ok(/serving on/.test(s.stderr()), 'it never served');
  assert.equal(
    lines
      .filter((l) => l.level === 'warn' || l.level === 'error')
      .filter((l) => l.msg !== 'the database is not reachable yet: trying again every second'),
    [],
  );
  assert.equal(s.plainErrorLines(), []);
}

/** Starts again on `dataDir`, checks it serves, stops it cleanly, and nothing is left. */
async function nextStartServes(dataDir: string): Promise<void> {
  const s = runServer(['start', '--port', '0', '--data-dir', dataDir]);
  try {
    const url = await serving(s);
    assert.is((await fetch(`${url}/api/v1/ready`)).status, 200);
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.is(await s.exited, 0, s.stderr());
  await postgresGone(dataDir, GONE_MS, true);
}

for (const [phase, pattern, signal] of [
  // A fresh data directory: the signal comes while the cluster is about to be created.
  ['right after the "starting the embedded PostgreSQL" line', /starting the embedded PostgreSQL/, 'SIGTERM'],
  // initdb's first line: the cluster is being created (it is let finish, then nothing more is started).
  ['while initdb creates the cluster', /The files belonging to this database system/, 'SIGINT'],
  // The postmaster runs and is ready; the server has not connected or migrated yet.
  ['once the postmaster is ready, before the connection and the migrations', /database system is ready to accept connections/, 'SIGTERM'],
] as const) {
  test(`${signal} ${phase}: the cluster is stopped, exit 0, nothing left, the next start serves`, async () => {
    const dataDir = join(dir, phase.replace(/\W+/g, '-'));
    const s = runServer(['start', '--port', '0', '--data-dir', dataDir, '--database-log-level', 'info']);
    await untilLine(s, pattern);
    s.child.kill(signal);
    await interruptedCleanly(s, signal);
    assert.equal(processesNaming(dataDir), [], 'no process of the data directory once it exited');
    await nextStartServes(dataDir);
  });
}

test('SIGTERM while the cluster starts, with --workers 2: exit 0, nothing left, the next start serves', async () => {
  const dataDir = join(dir, 'workers');
  const s = runServer(['start', '--port', '0', '--data-dir', dataDir, '--workers', '2', '--database-log-level', 'info']);
  await untilLine(s, /database system is ready to accept connections/);
  s.child.kill('SIGTERM');
  await interruptedCleanly(s, 'SIGTERM');
  assert.equal(processesNaming(dataDir), []);
  await nextStartServes(dataDir);
});

test('Ctrl-C while the server waits for an unreachable database (no deadline): it stops at once, exit 0', async () => {
  const port = await freePort(); // nothing listens there: every attempt is refused
  const url = `postgresql://benchmarks:secret@127.0.0.1:${port}/benchmarks`;
  const s = onTerminal(`${process.execPath} ${BIN} start --port 0 --database-url ${url} --database-connect-timeout 0`, {
    env: { LOG_FORMAT: 'json' },
  });
  await untilLine(s, /the database is not reachable yet/, s.stdout);
  s.type('\x03');
  // Without the stop it would try for ever (--database-connect-timeout 0): ending at all is the proof.
  assert.is(await s.exited, 0, s.stdout());
  await s.closed;
  const output = s.stdout();
  assert.match(output, new RegExp(`"signal":"SIGINT","msg":"${INTERRUPTED}"`));
  assert.not.match(output, /benchmarks-server: /, 'no failure line');
});

test('`import-origin` interrupted while its database is not reachable yet: it stops at once, as an import stopped early (exit 1)', async () => {
  const port = await freePort(); // nothing listens there
  const s = runServer(['import-origin', '--from', 'postgresql://origin@127.0.0.1:1/origin', '--database-connect-timeout', '0'], {
    DATABASE_URL: `postgresql://benchmarks:secret@127.0.0.1:${port}/benchmarks`,
  });
  await untilLine(s, /the database is not reachable yet/);
  s.child.kill('SIGTERM');
  // Without the stop it would try for ever: ending at all is the proof.
  assert.is(await s.exited, 1, s.stderr());
  assert.equal(
    s
      .logLines()
      .filter((l) => l.msg === INTERRUPTED)
      .map((l) => l.signal),
    ['SIGTERM'],
  );
  assert.equal(s.plainErrorLines(), ['benchmarks-server: the import stopped before the end: run the same command again to resume.']);
});

test('SIGTERM while another process holds the migration lock: exit 0 at once, no session of the server left', async () => {
  const url = await createTestDatabase('interrupt_migrations');
  const holder = new pg.Client({ connectionString: url, application_name: 'test-lock-holder' });
  try {
    await holder.connect();
    await holder.query('select pg_advisory_lock($1::int, $2::int)', [...MIGRATION_LOCK]);
    const s = runServer(['start', '--port', '0', '--database-url', url, '--migration-timeout', '0']);
    await untilLine(s, /another process is applying the migrations: waiting/);
    s.child.kill('SIGTERM');
    await interruptedCleanly(s, 'SIGTERM');
    // Its sessions end with it (PostgreSQL notices a closed connection within moments).
    const sessions = async () =>
      (
        await holder.query(
          `select pid, application_name from pg_stat_activity where datname = current_database() and application_name like 'benchmarks-server%'`,
        )
      ).rows;
    let left = await sessions();
    for (const until = Date.now() + GONE_MS; left.length && Date.now() < until; left = await sessions()) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(left, [], 'its sessions ended with it');
    // Nothing was applied: the next process that may migrates from the start.
    const tables = await holder.query(`select 1 from pg_tables where tablename = 'benchmark'`);
    assert.is(tables.rowCount, 0);
  } finally {
    await holder.end().catch(() => {});
    await releaseTestDatabase();
  }
});

test('`benchmarks-server migrate` interrupted while its cluster starts: exit 0, nothing left, the next start serves', async () => {
  const dataDir = join(dir, 'migrate');
  const s = runServer(['migrate', '--data-dir', dataDir, '--database-log-level', 'info']);
  await untilLine(s, /database system is ready to accept connections/);
  s.child.kill('SIGINT');
  await interruptedCleanly(s, 'SIGINT');
  assert.equal(processesNaming(dataDir), []);
  await nextStartServes(dataDir);
});

test('SIGTERM to the `npm start` parent during the start-up: the server notices, stops the cluster, nothing left', async () => {
  const dataDir = join(dir, 'npm');
  const project = join(dir, 'project-npm');
  await mkdir(project, { recursive: true });
  // From the sources through tsx, as `npm start` in a clone runs it (the other tests start the build).
  const script = `${process.execPath} ${SOURCE_BIN} start --port 0 --data-dir ${dataDir} --database-log-level info`;
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'npm-parent', private: true, scripts: { start: script } }));
  const s = watch(spawn('npm', ['start'], { cwd: project, env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
  await untilLine(s, /starting the embedded PostgreSQL/);
  s.child.kill('SIGTERM');
  await s.exited;
  await postgresGone(dataDir, GONE_MS, true);
  await s.closed; // the server's last lines read
  // npm passes SIGTERM to the shell it runs the script under: the server hears that its parent ended
  // (it looks once a second: on an idle machine the start can be done by then, and it stops as a server).
  const served = /serving on/.test(s.stderr());
  const stopLine = served ? 'stopping: finishing requests in flight' : INTERRUPTED;
  assert.ok(
    s.logLines().some((l) => l.msg === stopLine && l.parent === 'ended'),
    s.stderr(),
  );
  assert.not.match(s.stderr(), /"level":"(warn|error)"/, s.stderr());
  await nextStartServes(dataDir);
});

test.run();
