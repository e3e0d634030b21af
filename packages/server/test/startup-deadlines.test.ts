/**
 * Start-up with deadlines (the real `benchmarks-server` in a child process): the embedded
 * PostgreSQL's start (DATABASE_START_TIMEOUT), the first connection (DATABASE_CONNECT_TIMEOUT,
 * retried meanwhile) and the migrations (MIGRATION_TIMEOUT). A start-up that cannot complete ends
 * within its deadline with one clear line (naming the data directory and the cluster's last log
 * lines, or the database's URL) and exit code 1, and leaves no process behind.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFile, chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { freePort } from '../src/db/embedded.ts';
import { createTestDatabase, releaseTestDatabase } from './support/database.ts';
import { alive, postgresProcessesFor, recordedPostmasterPid, runServer, waitFor, type ServerProcess, within } from './support/process.ts';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-startup-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * How much longer than its deadline a start-up that must end at the deadline may take, counted from
 * the spawn: the start of the process itself (tsx compiling the sources: 1-2 s on an idle machine,
 * over 10 s on a loaded 2-core one) and closing what it opened. Only a start-up that ignores its
 * deadline (hangs) takes longer. That the deadline is D, not less, is the lower bound each test
 * asserts: waited at least D since the spawn, which no slowness of the machine can break.
 */
const STARTUP_SLACK_MS = 60_000;

/**
 * The process ends with exit code 1 and one plain line on stderr, matching every pattern, within
 * `deadlineMs` plus STARTUP_SLACK_MS of `started`; returns the line and how long it took.
 */
async function failsWithin(
  s: ServerProcess,
  started: number,
  deadlineMs: number,
  patterns: RegExp[],
): Promise<{ line: string; ms: number }> {
  const maxMs = deadlineMs + STARTUP_SLACK_MS;
  const code = await within(s.exited, maxMs + 30_000, 'late' as const);
  const ms = Date.now() - started;
  if (code === 'late') s.child.kill('SIGKILL');
  assert.is(code, 1, `exit code 1 (stderr: ${s.stderr()})`);
  assert.ok(ms <= maxMs, `ended within ${maxMs} ms, took ${ms} ms`);
  const lines = s.plainErrorLines();
  assert.is(lines.length, 1, `one clear line, got:\n${s.stderr()}`);
  const line = lines[0]!;
  assert.match(line, /^benchmarks-server: /);
  for (const pattern of patterns) assert.match(line, pattern);
  assert.not.match(s.stderr(), /\n\s+at /, 'no stack trace');
  return { line, ms };
}

/** A cluster under `dataDir`, created by `benchmarks-server migrate` (which stops it again). */
async function createCluster(dataDir: string): Promise<void> {
  const s = runServer(['migrate', '--data-dir', dataDir]);
  assert.is(await s.exited, 0, s.stderr());
}

/** Lines appended to the cluster's postgresql.conf (as root, the file belongs to the postgres user: appending keeps that). */
async function configure(dataDir: string, lines: string[]): Promise<void> {
  await appendFile(join(dataDir, 'postgres', 'postgresql.conf'), `\n${lines.join('\n')}\n`);
}

test('a cluster that logs to files (logging_collector = on) starts and serves: readiness does not depend on its log', async () => {
  const dataDir = join(dir, 'collector');
  await createCluster(dataDir);
  await configure(dataDir, ['logging_collector = on']);
  const port = await freePort();
  const s = runServer(['start', '--port', String(port), '--data-dir', dataDir, '--database-start-timeout', '30s']);
  await waitFor(
    () => /serving on/.test(s.stderr()) || s.child.exitCode !== null,
    () => `serving (stderr: ${s.stderr()})`,
  );
  assert.match(s.stderr(), /serving on/);
  assert.is((await fetch(`http://127.0.0.1:${port}/api/v1/ready`)).status, 200);
  s.child.kill('SIGTERM');
  assert.is(await s.exited, 0, s.stderr());
  assert.equal(postgresProcessesFor(dataDir), []);
});

test('an embedded start that never completes (a standby with nothing to follow) ends at DATABASE_START_TIMEOUT with the data directory and its last log lines, and no process left', async () => {
  const dataDir = join(dir, 'standby');
  await createCluster(dataDir);
  // A standby that accepts no connections (hot_standby off) and waits forever for WAL; its log goes
  // to files, so its last lines are read from there.
  await configure(dataDir, ['hot_standby = off', 'logging_collector = on']);
  await writeFile(join(dataDir, 'postgres', 'standby.signal'), '');
  if (userInfo().uid === 0) execFileSync('chown', ['postgres:postgres', join(dataDir, 'postgres', 'standby.signal')]);

  const started = Date.now();
  const s = runServer(['start', '--port', '0', '--data-dir', dataDir], { DATABASE_START_TIMEOUT: '4s' });
  let postmaster: number | undefined;
  // The postmaster is there while the server waits for it.
  await waitFor(() => {
    postmaster = recordedPostmasterPid(dataDir);
    return postmaster !== undefined || s.child.exitCode !== null;
  }, 'the postmaster');
  const { line, ms } = await failsWithin(s, started, 4_000, [
    new RegExp(`embedded PostgreSQL in ${join(dataDir, 'postgres').replace(/[/.]/g, '\\$&')} did not start within 4s`),
    /DATABASE_START_TIMEOUT/,
    /its last log lines: .*standby mode/,
  ]);
  assert.ok(ms >= 4_000, `waited for the deadline (${ms} ms)`);
  assert.ok(postmaster !== undefined, 'a postmaster was started');
  assert.not.ok(alive(postmaster!), `the postmaster ${postmaster} is gone (${line})`);
  assert.equal(postgresProcessesFor(dataDir), [], 'no PostgreSQL process of the data directory is left');
});

/** A TCP server that accepts connections and never says a word. */
async function silentServer(): Promise<{ port: number; server: Server; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as { port: number }).port, server, sockets };
}

test('a database URL to a port that accepts TCP but never answers: one clear line at DATABASE_CONNECT_TIMEOUT, password hidden', async () => {
  const silent = await silentServer();
  try {
    const started = Date.now();
    const s = runServer([
      'start',
      '--port',
      '0',
      '--database-url',
      `postgresql://bench:s3cret@127.0.0.1:${silent.port}/db`,
      '--database-connect-timeout',
      '3s',
    ]);
    const { ms } = await failsWithin(s, started, 3_000, [
      new RegExp(`Cannot reach the database at postgresql://bench:\\*\\*\\*@127\\.0\\.0\\.1:${silent.port}/db within 3s`),
      /DATABASE_CONNECT_TIMEOUT/,
    ]);
    assert.ok(ms >= 3_000, `waited for the deadline (${ms} ms)`);
    assert.ok(silent.sockets.length > 0, 'it did connect');
    assert.not.match(s.stderr(), /s3cret/);
  } finally {
    for (const socket of silent.sockets) socket.destroy();
    silent.server.close();
  }
});

test('the first connection is tried again until the deadline: a database that comes up meanwhile is used', async () => {
  const url = new URL(await createTestDatabase('late'));
  const port = await freePort();
  const late = new URL(url);
  late.port = String(port);
  const proxy = createServer((socket) => {
    const upstream = tcpConnect(Number(url.port), url.hostname);
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  let serverPort = await freePort();
  while (serverPort === port) serverPort = await freePort();
  const s = runServer(['start', '--port', String(serverPort), '--database-url', late.toString(), '--database-connect-timeout', '60s']);
  try {
    await waitFor(
      () => /not reachable yet/.test(s.stderr()) || s.child.exitCode !== null,
      () => `a first failed attempt (stderr: ${s.stderr()})`,
    );
    assert.is(s.child.exitCode, null, s.stderr());
    await new Promise<void>((r) => proxy.listen(port, '127.0.0.1', () => r())); // the database "comes up"
    await waitFor(
      () => /serving on/.test(s.stderr()) || s.child.exitCode !== null,
      () => `serving (stderr: ${s.stderr()})`,
    );
    assert.is(s.child.exitCode, null, s.stderr());
    const ready = await fetch(`http://127.0.0.1:${serverPort}/api/v1/ready`).catch((err: Error) => err);
    assert.ok(
      !(ready instanceof Error) && ready.status === 200,
      `ready: ${ready instanceof Error ? (ready.cause ?? ready.message) : ready.status}; stderr: ${s.stderr()}`,
    );
  } finally {
    s.child.kill('SIGTERM');
    await s.exited;
    proxy.close();
    await releaseTestDatabase();
  }
});

test('migrations that cannot finish (a lock held by another session) end at MIGRATION_TIMEOUT, and their session ends too', async () => {
  const url = await createTestDatabase('migration_lock');
  const client = new pg.Client({ connectionString: url, application_name: 'test-lock-holder' });
  // Outside any transaction: within one, pg_stat_activity shows the snapshot taken at its first read.
  const observer = new pg.Client({ connectionString: url, application_name: 'test-observer' });
  try {
    const first = runServer(['migrate', '--database-url', url]);
    assert.is(await first.exited, 0, first.stderr());
    await client.connect();
    await observer.connect();
    await client.query('begin');
    await client.query('lock table mikro_orm_migrations in access exclusive mode');

    const started = Date.now();
    const s = runServer(['start', '--port', '0', '--database-url', url], { MIGRATION_TIMEOUT: '2s' });
    const redacted = url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
    const { line, ms } = await failsWithin(s, started, 2_000, [
      /migrations did not finish within 2s/,
      /MIGRATION_TIMEOUT/,
      /none was applied/,
    ]);
    assert.ok(line.includes(`on the database at ${redacted}`), line);
    assert.ok(ms >= 2_000, `waited for the deadline (${ms} ms)`);
    // PostgreSQL cancels the migration's statement by itself shortly after the deadline (its
    // statement_timeout), even while the lock is still held: no session of the server is left.
    const sessions = async () =>
      (
        await observer.query(
          `select pid, state, wait_event, left(query, 100) as query, round(extract(epoch from clock_timestamp() - query_start)) as seconds
           from pg_stat_activity where application_name = 'benchmarks-server' and datname = current_database()`,
        )
      ).rows;
    const until = Date.now() + 60_000;
    while ((await sessions()).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
    const left = await sessions();
    assert.equal(left, [], `the session of the migration ended while the lock is held: ${JSON.stringify(left)}`);
  } finally {
    await client.query('rollback').catch(() => {});
    await client.end().catch(() => {});
    await observer.end().catch(() => {});
    await releaseTestDatabase();
  }
});

test('deadlines that are not durations end with one clear line and exit 1', async () => {
  for (const [option, env] of [
    ['--database-start-timeout', 'DATABASE_START_TIMEOUT'],
    ['--database-connect-timeout', 'DATABASE_CONNECT_TIMEOUT'],
    ['--migration-timeout', 'MIGRATION_TIMEOUT'],
  ] as const) {
    const s = runServer(['start', '--port', '0', '--data-dir', join(dir, 'unused'), option, 'soon']);
    assert.is(await s.exited, 1, s.stderr());
    assert.equal(s.plainErrorLines().length, 1, s.stderr());
    assert.match(s.plainErrorLines()[0]!, new RegExp(`^benchmarks-server: ${env} must be a duration`));
  }
});

test.run();
