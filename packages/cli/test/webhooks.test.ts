/** `benchmarks webhooks create|list|deliveries|redeliver` against a real server delivering to a real receiver. */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { type Receiver, startReceiver, until } from '../../server/test/support/receiver.ts';
import { sandbox, type Sandbox } from './support/cli.ts';

let t: TestServer;
let box: Sandbox;
let receiver: Receiver;

test.before(async () => {
  t = await startTestServer({ webhookAllowPrivate: 'true', webhookPollInterval: '50ms' }, 'cli_webhooks');
  box = await sandbox();
  receiver = await startReceiver();
  box.env.BENCHMARKS_SERVER = t.url;
  box.env.BENCHMARKS_TOKEN = await t.user('cli-hooked');
});
test.after(async () => {
  await receiver?.close();
  await box?.cleanup();
  await t?.close();
});

const json = (res: { code: number | null; stdout: string; stderr: string }) => {
  assert.is(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
};

test('webhooks create prints the secret once; list, deliveries and redeliver follow the delivery', async () => {
  const created = await box.run(['webhooks', 'create', receiver.url, '--events', 'series.stale,series.resumed', '-o', 'json']);
  const hook = json(created);
  assert.match(created.stderr, new RegExp(`signing secret, shown this once: ${hook.secret.replace(/[+/]/g, '\\$&')}`));
  assert.equal(hook.events, ['series.stale', 'series.resumed']);
  const listed = json(await box.run(['webhooks', 'list', '-o', 'json']));
  assert.equal(
    listed.map((w: { id: string; secret?: string }) => [w.id, w.secret]),
    [[hook.id, undefined]],
  );
  const id = randomUUID();
  await t.server.context.orm.em
    .fork()
    .execute(`insert into alert_event (id, user_iss, user_sub, type, data) values (?, ?, 'cli-hooked', 'series.stale', '{}')`, [
      id,
      t.issuer.issuer,
    ]);
  await until(() => receiver.received.length === 1, 'a delivery');
  const deliveries = async (): Promise<{ event_id: string; status: number; delivery_id: string }[]> =>
    json(await box.run(['webhooks', 'deliveries', hook.id, '-o', 'json']));
  await until(async () => (await deliveries()).length === 1, 'logged');
  const attempts = await deliveries();
  assert.equal([attempts[0]!.event_id, attempts[0]!.status], [id, 204]);
  const again = await box.run(['webhooks', 'redeliver', hook.id, attempts[0]!.delivery_id]);
  assert.is(again.code, 0, again.stderr);
  await until(() => receiver.received.length === 2, 'redelivered');
  assert.is(receiver.received[1]!.headers['webhook-id'], id);
  const refused = await box.run(['webhooks', 'create', 'http://169.254.169.254/']);
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /metadata address/);
});

test.run();
