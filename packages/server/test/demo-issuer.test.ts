/**
 * `benchmarks-demo issuer` (packages/demo/src/issuer-command.ts): the demo's OpenID provider alone,
 * as a process, trusted by a real server through the flags it prints.
 */
import { spawn } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer } from './support/harness.ts';
import { serverEnv, waitFor, watch } from './support/process.ts';

const DEMO_BIN = new URL('../../demo/dist/cli.js', import.meta.url).pathname;

test('benchmarks-demo issuer: prints its issuer, client and tokens; a server started with the printed flags trusts them', async () => {
  const s = watch(spawn(process.execPath, [DEMO_BIN, 'issuer', '--port', '0'], { env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
  try {
    await waitFor(
      () => s.stdout().includes('Press Ctrl-C'),
      () => `the issuer's lines (stderr: ${s.stderr()})`,
      60_000,
    );
    const out = s.stdout();
    const issuer = /^Issuer: (http:\/\/127\.0\.0\.1:\d+)$/m.exec(out)![1]!;
    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
    assert.is(discovery.issuer, issuer);
    assert.ok(discovery.device_authorization_endpoint, 'device login is offered');

    const flags = /benchmarks-server start (.+)$/m.exec(out)![1]!.split(' ');
    const flag = (name: string) => flags[flags.indexOf(name) + 1]!;
    assert.is(flag('--oidc-issuer'), issuer);
    const [, admin] = /Token of demo-admin[^\n]*\n(\S+)/.exec(out)!;
    const t = await startTestServer(
      { oidcIssuer: issuer, oidcDeviceClientId: flag('--oidc-device-client-id'), adminEntitlement: flag('--admin-entitlement') },
      'demo_issuer',
    );
    try {
      assert.is((await t.request('POST', '/users/self', { token: admin })).status, 201);
      assert.is(
        (await t.request('GET', '/users/self:try_admin', { token: admin })).status,
        204,
        'the printed admin token is an administrator',
      );
      assert.is((await t.request('GET', '/auth/config')).body.device_client_id, 'benchmarks-cli');
    } finally {
      await t.close();
    }
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.is(await s.exited, 0);
});

test.run();
