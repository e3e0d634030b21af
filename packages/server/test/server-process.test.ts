import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, chmod, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../src/db/embedded.ts';
import { demoTokens as tokensOf, postgresProcessesFor, runServer as run } from './support/process.ts';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-proc-'));
  await chmod(dir, 0o755);
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('benchmarks-server start --demo: serves, prints tokens, stops cleanly on SIGTERM and finds its data again', async () => {
  const dataDir = join(dir, 'demo');
  const port = await freePort();
  const first = run(['start', '--demo', '--port', String(port), '--data-dir', dataDir]);
  const tokens = await tokensOf(first);
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
  const self = await fetch(`${api}/users/self`, { headers: { authorization: `Bearer ${tokens.user}` } });
  assert.is(self.status, 200);
  assert.is(((await self.json()) as { sub: string }).sub, 'demo-user');
  second.child.kill('SIGINT');
  assert.is(await second.exited, 0);
  assert.equal(postgresProcessesFor(dataDir), []);
});

async function failsWith(args: string[], pattern: RegExp, env: Record<string, string> = {}): Promise<void> {
  const s = run(args, env);
  const code = await s.exited;
  assert.is(code, 1, s.stderr());
  const lines = s
    .stderr()
    .trim()
    .split('\n')
    .filter((l) => !l.startsWith('{'));
  assert.is(lines.length, 1, `one clear line, got:\n${s.stderr()}`);
  assert.match(lines[0]!, /^benchmarks-server: /);
  assert.match(lines[0]!, pattern);
  assert.not.match(s.stderr(), /\n\s+at /, 'no stack trace');
}

test('wrong configuration ends with one clear line and exit 1', async () => {
  await failsWith(['start', '--database-url', 'not a url'], /DATABASE_URL is not a valid URL/);
  await failsWith(['start', '--database-url', 'mysql://localhost/x'], /DATABASE_URL must use postgres/);
  await failsWith(['start', '--port', 'eighty'], /PORT must be an integer/);
  await failsWith(['start', '--log-level', 'loud'], /LOG_LEVEL must be one of/);
  await failsWith(['start', '--oidc-issuer', 'ftp://idp.example.org'], /OIDC_ISSUERS must use/);
  const closed = await freePort();
  // Connection refused is tried again until DATABASE_CONNECT_TIMEOUT (startup-deadlines.test.ts).
  await failsWith(
    ['start', '--database-url', `postgresql://u:secret@127.0.0.1:${closed}/db`],
    /Cannot reach the database at postgresql:\/\/u:\*\*\*@127\.0\.0\.1/,
    { DATABASE_CONNECT_TIMEOUT: '2s' },
  );
  await failsWith(['start', '--demo', '--host', '0.0.0.0'], /only runs on a loopback host/);
  const file = join(dir, 'a-file');
  await writeFile(file, 'x');
  await failsWith(['start', '--data-dir', join(file, 'sub')], /data directory .* cannot be created/);
});

test('a port already in use ends with one clear line', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as { port: number }).port;
  try {
    await failsWith(['start', '--port', String(port), '--data-dir', join(dir, 'busy')], new RegExp(`Port ${port} .* already in use`));
    assert.equal(postgresProcessesFor(join(dir, 'busy')), [], 'the embedded database it started is stopped again');
  } finally {
    blocker.close();
  }
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
