/**
 * `login`, `whoami`, `register`, token refresh, `logout`: the real executable against a real server
 * and the real OpenID provider of the test harness (device flow approved through its pages).
 */
import { stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';

let t: TestServer;
let box: Sandbox;

test.before(async () => {
  t = await startTestServer({ oidcDeviceClientId: 'benchmarks-cli' }, 'cli_identity');
  box = await sandbox();
});
test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

test('benchmarks login: device flow, tokens stored in a 0600 file in a 0700 directory, never printed', async () => {
  const login = box.start(['login', '--server', t.url]);
  const [url] = await login.waitForStderr(/http:\/\/\S+user_code=\S+/);
  assert.match(login.stderr(), /check that it shows the code [A-Z]{4}-[A-Z]{4}/);
  await t.issuer.approveDevice(url, 'runner');
  const done = await login.exited;
  assert.is(done.code, 0, done.stderr);
  assert.match(done.stderr, /Logged in to http:\/\/127\.0\.0\.1:\d+ as runner/);
  assert.match(done.stderr, /not registered yet: run `benchmarks register`/);

  const config = await box.readConfig();
  const auth = config.profiles.default.auth;
  assert.is(config.profiles.default.server, t.url, 'the server is remembered in the profile');
  assert.is(auth.issuer, t.issuer.issuer);
  assert.is(auth.client_id, 'benchmarks-cli');
  assert.ok(auth.access_token && auth.refresh_token, 'access and refresh tokens are stored');
  assert.ok(auth.expires_at > Date.now() / 1000);
  assert.not.ok(done.stdout.includes(auth.access_token) || done.stderr.includes(auth.access_token), 'the token is not printed');
  assert.is((await stat(box.configPath)).mode & 0o777, 0o600);
  assert.is((await stat(dirname(box.configPath))).mode & 0o777, 0o700);
});

test('benchmarks whoami: the logged-in identity, not registered yet, not an admin', async () => {
  const res = await box.run(['whoami', '--output', 'json']);
  assert.is(res.code, 0, res.stderr);
  const me = JSON.parse(res.stdout);
  assert.is(me.sub, 'runner');
  assert.is(me.iss, t.issuer.issuer);
  assert.is(me.registered, false);
  assert.is(me.admin, false);
  assert.is(me.token, 'login');
});

test('benchmarks register: without --accept-terms and without a terminal, exit 2 naming the terms and the flag', async () => {
  const res = await box.run(['register']);
  assert.is(res.code, 2);
  assert.match(res.stderr, /terms of use .*version 2024-01.*\/terms-of-use/);
  assert.match(res.stderr, /--accept-terms/);
  assert.is(res.stdout, '');
  const users = await t.request('GET', '/users', { token: await t.admin() });
  assert.not.ok(
    users.body.items.some((u: { sub: string }) => u.sub === 'runner'),
    'nothing was registered',
  );
});

test('benchmarks register --accept-terms: registers once, a second time says so; whoami shows it; --quiet prints nothing', async () => {
  const first = await box.run(['register', '--accept-terms']);
  assert.is(first.code, 0, first.stderr);
  const user = JSON.parse(first.stdout);
  assert.is(user.sub, 'runner');
  assert.is(user.terms_version, '2024-01');
  assert.match(first.stderr, /Registered as runner/);

  const [again, me] = await Promise.all([box.run(['register', '--accept-terms']), box.run(['whoami', '-o', 'json'])]);
  assert.is(again.code, 0, again.stderr);
  assert.match(again.stderr, /Already registered/);
  assert.is(JSON.parse(me.stdout).registered, true);
  const users = await t.request('GET', '/users', { token: await t.admin(), query: { sub: 'runner' } });
  assert.is(users.body.total, 1);
  assert.ok('email' in user, 'without --quiet the user is shown, e-mail included');

  const quiet = await box.run(['register', '--accept-terms', '--quiet']);
  assert.is(quiet.code, 0, quiet.stderr);
  assert.equal([quiet.stdout, quiet.stderr], ['', ''], 'nothing in a CI log, no e-mail');
});

test('benchmarks register --quiet, a first registration: nothing printed, the user registered', async () => {
  const token = await t.token('quiet-runner');
  const res = await box.run(['register', '--accept-terms', '--quiet', '--token', token]);
  assert.is(res.code, 0, res.stderr);
  assert.equal([res.stdout, res.stderr], ['', '']);
  const users = await t.request('GET', '/users', { token: await t.admin(), query: { sub: 'quiet-runner' } });
  assert.is(users.body.total, 1);
});

test('an expired access token is refreshed with the refresh token before calling the API, and saved', async () => {
  const config = await box.readConfig();
  const before = config.profiles.default.auth;
  config.profiles.default.auth = { ...before, access_token: 'expired-and-unusable', expires_at: 1_000 };
  await writeFile(box.configPath, JSON.stringify(config));

  const res = await box.run(['whoami', '-o', 'json']);
  assert.is(res.code, 0, res.stderr);
  assert.is(JSON.parse(res.stdout).sub, 'runner');
  const after = (await box.readConfig()).profiles.default.auth;
  assert.is.not(after.access_token, 'expired-and-unusable');
  assert.ok(after.expires_at > Date.now() / 1000);
  assert.is((await stat(box.configPath)).mode & 0o777, 0o600, 'still 0600 after the rewrite');
});

test('a token the server refuses: exit 4 with one line saying what to do; an admin token: admin yes', async () => {
  const [bad, admin] = await Promise.all([
    box.run(['whoami', '--token', 'not-a-token']),
    box.run(['whoami', '-o', 'json'], { env: { BENCHMARKS_TOKEN: await t.admin('chief') } }),
  ]);
  assert.is(bad.code, 4);
  assert.equal(lines(bad.stderr).length, 1, bad.stderr);
  assert.match(
    bad.stderr,
    /^Error: Not authenticated: the server does not accept this access token; run `benchmarks login` or pass --token\.\n$/,
  );
  assert.is(admin.code, 0, admin.stderr);
  assert.equal([JSON.parse(admin.stdout).sub, JSON.parse(admin.stdout).admin, JSON.parse(admin.stdout).token], ['chief', true, 'given']);
});

test('benchmarks logout: forgets the login; whoami then exits 4 "Not logged in"', async () => {
  const out = await box.run(['logout']);
  assert.is(out.code, 0, out.stderr);
  assert.match(out.stderr, /Logged out/);
  assert.is((await box.readConfig()).profiles.default.auth, undefined);
  const me = await box.run(['whoami']);
  assert.is(me.code, 4);
  assert.match(me.stderr, /Not logged in: run `benchmarks login` or pass --token/);
});

test.run();
