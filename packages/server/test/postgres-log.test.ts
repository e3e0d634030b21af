/**
 * The embedded PostgreSQL's own log lines (db/postgres-log.ts): each at the level of its severity,
 * behind their own threshold, `--database-log-level` (DATABASE_LOG_LEVEL, default warn): its
 * warnings, errors and fatal messages show at the default levels, its routine LOG lines do not,
 * and neither depends on `--log-level`.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PostgresLogReader, parsePostgresLogLine, type PostgresLogLine } from '../src/db/postgres-log.ts';
import { freePort } from '../src/db/embedded.ts';
import { recordedPostmasterPid, runServer, waitFor, type ServerProcess } from './support/process.ts';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-pglog-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function read(chunks: string[]): PostgresLogLine[] {
  const lines: PostgresLogLine[] = [];
  const reader = new PostgresLogReader((line) => lines.push(line));
  for (const chunk of chunks) reader.write(chunk);
  reader.flush();
  return lines;
}

test('severities map to levels: DEBUGn debug; LOG, INFO, NOTICE info; WARNING and ERROR warn; FATAL and PANIC error', () => {
  const prefix = '2026-11-24 06:00:00.123 UTC [4242] ';
  const lines = read([
    'DEBUG1 DEBUG3 LOG INFO NOTICE WARNING ERROR FATAL PANIC'
      .split(' ')
      .map((s) => `${prefix}${s}:  message ${s}\n`)
      .join(''),
  ]);
  assert.equal(
    lines.map((l) => [l.severity, l.level]),
    [
      ['DEBUG1', 'debug'],
      ['DEBUG3', 'debug'],
      ['LOG', 'info'],
      ['INFO', 'info'],
      ['NOTICE', 'info'],
      ['WARNING', 'warn'],
      ['ERROR', 'warn'],
      ['FATAL', 'error'],
      ['PANIC', 'error'],
    ],
  );
  assert.equal(lines[5], { severity: 'WARNING', level: 'warn', message: 'message WARNING', pid: 4242, text: 'WARNING:  message WARNING' });
});

test('DETAIL, HINT, STATEMENT and tab-continued lines take the level of the message they belong to; chunks split lines anywhere', () => {
  const text = [
    '2026-11-24 06:00:00.123 UTC [7] ERROR:  duplicate key value violates unique constraint "tag_name_key"',
    '2026-11-24 06:00:00.123 UTC [7] DETAIL:  Key (name)=(x) already exists.',
    '2026-11-24 06:00:00.123 UTC [7] STATEMENT:  insert into tag (name)',
    '\tvalues ($1)',
    '2026-11-24 06:00:01.000 UTC [8] LOG:  checkpoint starting: time',
    '2026-11-24 06:00:01.000 UTC [8] DETAIL:  nothing to write',
    '2026-11-24 06:00:02.000 UTC [9] FATAL:  password authentication failed for user "postgres"',
    '',
  ].join('\n');
  // In pieces of 7 characters: lines are put together again before they are read.
  const chunks = text.match(/[\s\S]{1,7}/g)!;
  const lines = read(chunks);
  assert.equal(
    lines.map((l) => [l.severity, l.level, l.message]),
    [
      ['ERROR', 'warn', 'duplicate key value violates unique constraint "tag_name_key"'],
      ['DETAIL', 'warn', 'Key (name)=(x) already exists.'],
      ['STATEMENT', 'warn', 'insert into tag (name)'],
      ['CONTINUED', 'warn', 'values ($1)'],
      ['LOG', 'info', 'checkpoint starting: time'],
      ['DETAIL', 'info', 'nothing to write'],
      ['FATAL', 'error', 'password authentication failed for user "postgres"'],
    ],
  );
});

test('a session whose client vanished (an export cut short) is info, FATAL as PostgreSQL writes it; other FATAL lines stay error', () => {
  const lines = read([
    [
      '2026-11-26 01:13:45.755 UTC [9752] LOG:  could not send data to client: Connection reset by peer',
      '2026-11-26 01:13:45.755 UTC [9752] STATEMENT:  fetch 500 from export_rows',
      '2026-11-26 01:13:45.755 UTC [9752] FATAL:  connection to client lost',
      '2026-11-26 01:13:45.756 UTC [9752] STATEMENT:  fetch 500 from export_rows',
      '2026-11-26 01:13:46.000 UTC [9753] FATAL:  unexpected EOF on client connection with an open transaction',
      '2026-11-26 01:13:47.000 UTC [9754] FATAL:  terminating connection due to idle-in-transaction timeout',
      '',
    ].join('\n'),
  ]);
  assert.equal(
    lines.map((l) => [l.severity, l.level]),
    [
      ['LOG', 'info'],
      ['STATEMENT', 'info'],
      ['FATAL', 'info'],
      ['STATEMENT', 'info'],
      ['FATAL', 'info'],
      ['FATAL', 'error'],
    ],
  );
});

test('a line without a severity (initdb, a message before logging starts) is LOG; any log_line_prefix works', () => {
  assert.equal(
    read(['The files belonging to this database system will be owned by user "postgres".\n']).map((l) => [l.severity, l.level]),
    [['LOG', 'info']],
  );
  assert.equal(parsePostgresLogLine('WARNING:  no prefix at all')?.severity, 'WARNING');
  assert.equal(parsePostgresLogLine('app=psql,user=x,db=y WARNING:  custom prefix')?.message, 'custom prefix');
  assert.is(parsePostgresLogLine('a LOG: one space is not a severity'), undefined);
});

/** A client of the server's embedded cluster, found through its data directory. */
async function clusterClient(dataDir: string, password?: string): Promise<pg.Client> {
  const pid = recordedPostmasterPid(dataDir);
  assert.ok(pid, 'the cluster runs');
  const port = Number((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3]);
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: 'postgres',
    database: 'benchmarks',
    password: password ?? (await readFile(join(dataDir, 'postgres.password'), 'utf8')).trim(),
  });
  await client.connect();
  return client;
}

function postgresLines(s: ServerProcess): Record<string, unknown>[] {
  return s.logLines().filter((l) => l.msg === 'postgres');
}

async function startServing(dataDir: string, args: string[]): Promise<ServerProcess> {
  const port = await freePort();
  const s = runServer(['start', '--port', String(port), '--data-dir', dataDir, ...args]);
  // --log-level warn hides "serving on": the server serves once it answers, and takes SIGTERM as
  // its own from then on (before, a signal would end the start-up instead of stopping the server).
  let answered = false;
  const ask = () =>
    fetch(`http://127.0.0.1:${port}/api/v1/benchmarks`).then(
      () => (answered = true),
      () => {},
    );
  await waitFor(
    () => {
      if (!answered && s.child.exitCode === null) void ask();
      return answered && recordedPostmasterPid(dataDir) !== undefined;
    },
    () => `the server (stderr: ${s.stderr()})`,
  );
  return s;
}

test('by default PostgreSQL warnings, errors and fatal messages are logged at warn and error, its LOG lines are not', async () => {
  const dataDir = join(dir, 'default');
  const s = await startServing(dataDir, []);
  try {
    const client = await clusterClient(dataDir);
    await client.query(`do $$ begin raise warning 'marker-warning'; raise log 'marker-log'; end $$`);
    await client.query('select 1/0').catch(() => {});
    await client.end();
    await clusterClient(dataDir, 'wrong password').then(
      (c) => c.end(),
      () => {},
    );
    await waitFor(
      () => postgresLines(s).some((l) => String(l.message).includes('password authentication failed')),
      () => `the FATAL line (stderr: ${s.stderr()})`,
      15_000,
    );
    const lines = postgresLines(s);
    const find = (text: string) => lines.find((l) => String(l.message).includes(text));
    assert.equal(pick(find('marker-warning')), { level: 'warn', severity: 'WARNING', message: 'marker-warning' });
    assert.equal(pick(find('division by zero')), { level: 'warn', severity: 'ERROR', message: 'division by zero' });
    assert.equal(pick(find('select 1/0')), { level: 'warn', severity: 'STATEMENT', message: 'select 1/0' });
    assert.equal(pick(find('password authentication failed')), {
      level: 'error',
      severity: 'FATAL',
      message: 'password authentication failed for user "postgres"',
    });
    assert.is(find('marker-log'), undefined, 'LOG lines are below the default DATABASE_LOG_LEVEL');
    assert.ok(
      lines.every((l) => l.level !== 'info' && l.level !== 'debug'),
      JSON.stringify(lines),
    );
  } finally {
    s.child.kill('SIGTERM');
    assert.is(await s.exited, 0, s.stderr());
  }
});

function pick(line: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return line && { level: line.level, severity: line.severity, message: line.message };
}

test('--database-log-level info shows the LOG lines, whatever --log-level says', async () => {
  const dataDir = join(dir, 'info');
  const s = await startServing(dataDir, ['--database-log-level', 'info', '--log-level', 'warn']);
  try {
    const client = await clusterClient(dataDir);
    await client.query(`do $$ begin raise log 'marker-log'; end $$`);
    await client.end();
    await waitFor(
      () => postgresLines(s).some((l) => l.message === 'marker-log'),
      () => `the LOG line (stderr: ${s.stderr()})`,
      15_000,
    );
    assert.equal(pick(postgresLines(s).find((l) => l.message === 'marker-log')), { level: 'info', severity: 'LOG', message: 'marker-log' });
    assert.ok(
      postgresLines(s).some((l) => /ready to accept connections/.test(String(l.message))),
      'its start-up lines too',
    );
    assert.not.match(s.stderr(), /serving on/, 'the server itself logs at warn');
  } finally {
    s.child.kill('SIGTERM');
    assert.is(await s.exited, 0, s.stderr());
  }
});

test('a DATABASE_LOG_LEVEL that is not a level ends with one clear line and exit 1', async () => {
  const s = runServer(['start', '--port', '0', '--data-dir', join(dir, 'unused')], { DATABASE_LOG_LEVEL: 'chatty' });
  assert.is(await s.exited, 1);
  assert.equal(s.plainErrorLines(), [
    `benchmarks-server: DATABASE_LOG_LEVEL must be one of debug, info, warn, error, silent, not 'chatty'.`,
  ]);
});

test.run();
