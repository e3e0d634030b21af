import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, chmod, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../src/db/embedded.ts';
import { BIN, demoTokens as tokensOf, postgresProcessesFor, runServer as run, serverEnv, watch } from './support/process.ts';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-proc-'));
  await chmod(dir, 0o755);
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('benchmarks-server start --demo: serves, prints tokens, stops cleanly on SIGTERM and finds its data again, the user registered', async () => {
  const dataDir = join(dir, 'demo');
  const port = await freePort();
  const first = run(['start', '--demo', '--port', String(port), '--data-dir', dataDir]);
  const tokens = await tokensOf(first);
  assert.match(first.stdout(), 'Demo user token (demo-user, not registered yet; valid 7 days):');
  const api = `http://127.0.0.1:${port}/api/v1`;
  assert.match(first.stderr(), new RegExp(`serving on http://127\\.0\\.0\\.1:${port}`));

  const register = await fetch(`${api}/users:register`, { method: 'POST', headers: { authorization: `Bearer ${tokens.user}` } });
  assert.is(register.status, 201);
  const again = await fetch(`${api}/users:register`, { method: 'POST', headers: { authorization: `Bearer ${tokens.user}` } });
  assert.is(again.status, 409);
  assert.is((await fetch(`${api}/users/self:try_admin`, { headers: { authorization: `Bearer ${tokens.admin}` } })).status, 204);
  assert.is((await fetch(`${api}/users/self:try_admin`, { headers: { authorization: `Bearer ${tokens.user}` } })).status, 403);
  assert.ok(postgresProcessesFor(dataDir).length > 0, 'the embedded PostgreSQL runs');

  first.child.kill('SIGTERM');
  assert.is(await first.exited, 0);
  assert.equal(postgresProcessesFor(dataDir), [], 'no PostgreSQL process is left behind');

  // Next start: same data, and the token printed by the first run is still valid.
  const second = run(['start', '--demo', '--port', String(port), '--data-dir', dataDir]);
  await tokensOf(second);
  assert.match(second.stdout(), 'Demo user token (demo-user, registered; valid 7 days):', 'the banner checks the registration');
  const self = await fetch(`${api}/users/self`, { headers: { authorization: `Bearer ${tokens.user}` } });
  assert.is(self.status, 200);
  assert.is(((await self.json()) as { sub: string }).sub, 'demo-user');
  second.child.kill('SIGINT');
  assert.is(await second.exited, 0);
  assert.equal(postgresProcessesFor(dataDir), []);
});

/** Fails with exit code 1 and one clear line matching `pattern`; returns how long the process took, in ms. */
async function failsWith(
  args: string[],
  pattern: RegExp,
  env: Record<string, string> = {},
  options: { uid?: number; gid?: number } = {},
): Promise<number> {
  const started = Date.now();
  // Any free port unless the test names one: 8080 may be taken by a server running on this machine.
  const withPort = { PORT: '0', ...env };
  const s =
    options.uid === undefined
      ? run(args, withPort)
      : watch(spawn(process.execPath, [BIN, ...args], { env: serverEnv(withPort), ...options }));
  const code = await s.exited;
  const ms = Date.now() - started;
  assert.is(code, 1, s.stderr());
  const lines = s
    .stderr()
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('{'));
  assert.is(lines.length, 1, `one clear line, got:\n${s.stderr()}`);
  assert.match(lines[0]!, /^benchmarks-server: /);
  assert.match(lines[0]!, pattern, lines[0]);
  assert.not.match(s.stderr(), /\n\s+at /, 'no stack trace');
  return ms;
}

/** How long a start refused for a wrong flag takes: loading the program, nothing else. */
async function refusalMs(): Promise<number> {
  return failsWith(['start', '--log-format', 'loud'], /LOG_FORMAT must be one of auto, pretty, json, not 'loud'/);
}

/**
 * `ms` is about what a refused flag takes: the start checked before it started anything. A hang
 * takes minutes (recursive mkdir spun on /proc for ten); the 30 s of slack are for a loaded machine,
 * whose load may change between the two starts. That nothing was started is asserted apart.
 */
function promptly(ms: number, baseline: number, what: string): void {
  assert.ok(ms < baseline + 30_000, `${what}: ${ms} ms, a refused flag ${baseline} ms`);
  console.log(`    ${what}: failed after ${ms} ms (a refused flag: ${baseline} ms)`);
}

test('wrong configuration ends with one clear line and exit 1', async () => {
  await failsWith(['start', '--database-url', 'not a url'], /DATABASE_URL is not a valid URL/);
  await failsWith(['start', '--database-url', 'mysql://localhost/x'], /DATABASE_URL must use postgres/);
  await failsWith(['start', '--port', 'eighty'], /PORT must be an integer/);
  await failsWith(['start', '--log-level', 'loud'], /LOG_LEVEL must be one of/);
  await failsWith(['start', '--database-port', '70000'], /DATABASE_PORT must be an integer from 0 to 65535, not '70000'/);
  await failsWith(
    ['start', '--database-port', '5432', '--database-url', 'postgresql://localhost/x'],
    /DATABASE_PORT is the port of the embedded PostgreSQL: leave it out with DATABASE_URL/,
  );
  await failsWith(['start', '--port', '8080', '--database-port', '8080'], /PORT and DATABASE_PORT must differ, not both 8080/);
  await failsWith(
    ['start', '--demo', '--demo-issuer-port', 'x'],
    /BENCHMARKS_DEMO_ISSUER_PORT must be an integer from 1 to 65535, not 'x'/,
  );
  await failsWith(['start', '--oidc-issuer', 'ftp://idp.example.org'], /OIDC_ISSUERS must use/);
  const closed = await freePort();
  // Connection refused is tried again until DATABASE_CONNECT_TIMEOUT (startup-deadlines.test.ts).
  await failsWith(
    ['start', '--database-url', `postgresql://u:secret@127.0.0.1:${closed}/db`],
    /Cannot reach the database at postgresql:\/\/u:\*\*\*@127\.0\.0\.1/,
    { DATABASE_CONNECT_TIMEOUT: '2s' },
  );
  await failsWith(['start', '--demo', '--host', '0.0.0.0'], /only runs on a loopback host/);
});

test('an unusable data directory ends at once with one clear line, and starts no PostgreSQL', async () => {
  const baseline = await refusalMs();
  const file = join(dir, 'a-file');
  await writeFile(file, 'x');
  const unusable: [string, RegExp][] = [
    // Node's recursive mkdir spins on it for minutes: /proc exists and refuses.
    [
      '/proc/nope',
      /The data directory \/proc\/nope cannot be created or written: nothing can be created there \(ENOENT\) creating \/proc\/nope/,
    ],
    [file, /a-file cannot be created or written: .*a-file is a file, not a directory \(--data-dir, BENCHMARKS_DATA_DIR\)/],
    [join(file, 'sub'), /a-file\/sub cannot be created or written: .*a-file is a file, not a directory/],
  ];
  for (const [dataDir, pattern] of unusable) {
    promptly(await failsWith(['start', '--port', '0', '--data-dir', dataDir], pattern), baseline, dataDir);
  }
  // No permission: as another user than root, which may write anywhere.
  const locked = join(dir, 'locked');
  await mkdir(locked, { mode: 0o755 });
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) await chmod(locked, 0o555);
  const ms = await failsWith(
    ['start', '--port', '0', '--data-dir', join(locked, 'data')],
    /locked\/data cannot be created or written: permission denied \(EACCES\) creating .*locked\/data/,
    {},
    asRoot ? { uid: 65534, gid: 65534 } : {},
  );
  promptly(ms, baseline, 'a directory without permission');
  assert.equal(postgresProcessesFor(join(locked, 'data')), []);
});

test('a port already in use (HTTP, the database, the demo provider) ends at once with one clear line, starting no PostgreSQL', async () => {
  const baseline = await refusalMs();
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as { port: number }).port;
  const dataDir = join(dir, 'busy');
  try {
    const cases: [string[], RegExp][] = [
      [
        ['--port', String(port)],
        new RegExp(`^benchmarks-server: Port ${port} on 127\\.0\\.0\\.1 is already in use: choose another with --port\\.$`),
      ],
      [
        ['--port', '0', '--database-port', String(port)],
        new RegExp(
          `^benchmarks-server: Port ${port} on 127\\.0\\.0\\.1 for the embedded PostgreSQL cannot be used \\(already in use\\): choose another with --database-port \\(DATABASE_PORT\\)`,
        ),
      ],
      [
        ['--port', '0', '--demo', '--demo-issuer-port', String(port)],
        new RegExp(
          `^benchmarks-server: Port ${port} on 127\\.0\\.0\\.1 for the demo OpenID provider is already in use: .*--demo-issuer-port`,
        ),
      ],
    ];
    for (const [args, pattern] of cases) {
      const ms = await failsWith(['start', '--data-dir', dataDir, ...args], pattern);
      promptly(ms, baseline, args.join(' '));
      assert.not.ok(existsSync(join(dataDir, 'postgres')), 'no PostgreSQL was created, let alone started');
      assert.equal(postgresProcessesFor(dataDir), []);
    }
  } finally {
    blocker.close();
  }
});

test('--database-port and --demo-issuer-port: the embedded PostgreSQL and the demo provider listen there', async () => {
  const dataDir = join(dir, 'ports');
  const [port, databasePort, issuerPort] = [await freePort(), await freePort(), await freePort()];
  const s = run([
    'start',
    '--demo',
    '--port',
    String(port),
    '--database-port',
    String(databasePort),
    '--demo-issuer-port',
    String(issuerPort),
    '--data-dir',
    dataDir,
  ]);
  try {
    await tokensOf(s);
    assert.match(s.stdout(), new RegExp(`Built-in OpenID provider: http://127\\.0\\.0\\.1:${issuerPort} `));
    assert.is((await readFile(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[3], String(databasePort));
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.is(await s.exited, 0, s.stderr());
});

test('benchmarks-server migrate applies migrations and exits', async () => {
  const s = run(['migrate', '--data-dir', join(dir, 'migrate')]);
  assert.is(await s.exited, 0, s.stderr());
  assert.match(s.stdout(), /Applied: Migration20261122000000_initial/);
  const again = run(['migrate', '--data-dir', join(dir, 'migrate')]);
  assert.is(await again.exited, 0);
  assert.match(again.stdout(), /up to date/);
});

test.run();
