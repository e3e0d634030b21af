/**
 * `--log-format` (LOG_FORMAT, src/core/logger.ts): on a terminal (`auto`, the default) one readable
 * line per event (pino-pretty), JSON lines on a pipe; either chosen explicitly; the lines written
 * just before an exit are there; a first start logs no PostgreSQL ERROR; a stop with Ctrl-C on a terminal logs nothing above info; a start
 * refused (a port in use, an unusable data directory) shows one line on a terminal too. Real
 * processes on a real pseudo-terminal (util-linux `script`) and on pipes.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { freePort } from '../src/db/embedded.ts';
import { BIN, onTerminal, postgresGone, runServer, serving, watch, type ServerProcess } from './support/process.ts';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-logformat-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A start that logs a warning (the database is not reachable yet), then ends with one line: nothing is started. */
async function unreachable(): Promise<{ args: string[]; env: Record<string, string> }> {
  const url = `postgresql://u:secret@127.0.0.1:${await freePort()}/db`;
  return { args: ['start', '--port', '0', '--database-url', url], env: { DATABASE_CONNECT_TIMEOUT: '3s' } };
}

/** How a terminal is told to change colour. */
const ESCAPE = '\x1b[';
const PRETTY_WARN = /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: the database is not reachable yet: trying again every second \{"error":/;
const LAST_LINE = /^benchmarks-server: Cannot reach the database at postgresql:\/\/u:\*\*\*@127\.0\.0\.1:\d+\/db within 3s/;

/** The lines a terminal showed, colours taken out. */
function terminalLines(s: ServerProcess): string[] {
  return stripVTControlCharacters(s.stdout())
    .split(/\r?\n/)
    .filter((l) => l.trim());
}

test('auto on a terminal: one readable, coloured line per event, and the last line before the exit', async () => {
  const { args, env } = await unreachable();
  // The test runner sets NO_COLOR for its files: a terminal without it is what this test is about.
  const s = onTerminal(`${process.execPath} ${BIN} ${args.join(' ')}`, { env: { ...env, NO_COLOR: '', FORCE_COLOR: '' } });
  assert.is(await s.exited, 1, s.stdout());
  assert.ok(s.stdout().includes(ESCAPE), 'coloured');
  const lines = terminalLines(s);
  assert.not.ok(
    lines.some((l) => l.startsWith('{')),
    s.stdout(),
  );
  assert.match(lines.at(-2)!, PRETTY_WARN);
  assert.match(lines.at(-1)!, LAST_LINE);
});

test('auto on a pipe: JSON lines; --log-format pretty on a pipe: readable lines without colour; LOG_FORMAT=json on a terminal: JSON', async () => {
  const { args, env } = await unreachable();
  const piped = runServer(args, env);
  assert.is(await piped.exited, 1);
  assert.equal(
    piped.logLines().map((l) => [l.level, l.msg]),
    [['warn', 'the database is not reachable yet: trying again every second']],
  );
  assert.match(piped.plainErrorLines().join('\n'), LAST_LINE);

  const pretty = runServer([...args, '--log-format', 'pretty'], env);
  assert.is(await pretty.exited, 1);
  assert.not.ok(pretty.stderr().includes(ESCAPE), 'no colour on a pipe');
  const lines = pretty.stderr().trim().split('\n');
  assert.is(lines.length, 2, pretty.stderr());
  assert.match(lines[0]!, PRETTY_WARN);
  assert.match(lines[1]!, LAST_LINE);

  const json = onTerminal(`${process.execPath} ${BIN} ${args.join(' ')}`, { env: { ...env, LOG_FORMAT: 'json' } });
  assert.is(await json.exited, 1);
  const shown = terminalLines(json);
  assert.is(JSON.parse(shown.at(-2)!).msg, 'the database is not reachable yet: trying again every second');
  assert.match(shown.at(-1)!, LAST_LINE);
});

test('Ctrl-C on the terminal of `start --demo`: a first start without a PostgreSQL ERROR, a clean stop with nothing above info', async () => {
  const dataDir = join(dir, 'demo');
  const s = onTerminal(`${process.execPath} ${BIN} start --demo --port 0 --data-dir ${dataDir}`);
  await serving(s);
  s.type('\x03');
  assert.is(await s.exited, 0, s.stdout());
  await postgresGone(dataDir, 30_000, true); // a hang guard
  const lines = terminalLines(s);
  assert.equal(
    lines.filter((l) => l.includes('ERROR')),
    [],
    'a fresh data directory: no statement failed',
  );
  const stop = lines.slice(lines.findIndex((l) => l.includes('INFO: serving on')));
  assert.ok(
    stop.some((l) => / INFO: stopping: finishing requests in flight \{"signal":"SIGINT"\}$/.test(l)),
    stop.join('\n'),
  );
  assert.match(stop.at(-1)!, / INFO: stopped$/);
  assert.equal(
    stop.filter((l) => /\] (WARN|ERROR|FATAL):/.test(l)),
    [],
    'nothing above info',
  );
});

test('on a terminal, a port in use and an unusable data directory end with one line and start no PostgreSQL', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
  const busy = (blocker.address() as AddressInfo).port;
  const dataDir = join(dir, 'busy');
  try {
    const cases: [string, RegExp][] = [
      [
        `--port ${busy} --data-dir ${dataDir}`,
        new RegExp(`^benchmarks-server: Port ${busy} on 127\\.0\\.0\\.1 is already in use: choose another with --port\\.$`),
      ],
      [
        `--port 0 --database-port ${busy} --data-dir ${dataDir}`,
        /^benchmarks-server: Port \d+ on 127\.0\.0\.1 for the embedded PostgreSQL cannot be used/,
      ],
      [
        '--port 0 --data-dir /proc/nope',
        /^benchmarks-server: The data directory \/proc\/nope cannot be created or written: nothing can be created there/,
      ],
    ];
    for (const [args, line] of cases) {
      const s = onTerminal(`${process.execPath} ${BIN} start ${args}`, { env: { NO_COLOR: '1' } });
      assert.is(await s.exited, 1, s.stdout());
      const lines = terminalLines(s);
      assert.is(lines.length, 1, `one line, got:\n${s.stdout()}`);
      assert.match(lines[0]!, line);
      assert.not.ok(existsSync(join(dataDir, 'postgres')), 'no PostgreSQL was created, let alone started');
    }
  } finally {
    blocker.close();
  }
});

test('pretty: the lines logged just before process.exit are all written out, the last one included', async () => {
  const script = join(dir, 'log-and-exit.mts');
  await writeFile(
    script,
    `import { createLogger, useLogFormat } from ${JSON.stringify(new URL('../src/core/logger.ts', import.meta.url).href)};\n` +
      `await useLogFormat('pretty');\n` +
      `const logger = createLogger('info');\n` +
      `for (let i = 0; i < 20000; i++) logger.info('line', { i, padding: 'x'.repeat(100) });\n` +
      `logger.error('cannot start: the port is in use');\n` +
      `process.exit(1);\n`,
  );
  const register = new URL('../../../scripts/dev/register.js', import.meta.url).href;
  const s = watch(spawn(process.execPath, ['--import', register, script], { stdio: ['ignore', 'pipe', 'pipe'] }));
  assert.is(await s.exited, 1);
  await s.closed;
  const lines = s.stderr().trim().split('\n');
  assert.is(lines.length, 20001, 'every line written before the exit');
  assert.match(lines[19999]!, /\] INFO: line \{"i":19999,"padding":"x+"\}$/);
  assert.match(lines[20000]!, /\] ERROR: cannot start: the port is in use$/);
});

test.run();
