/**
 * `client.webhooks` against a real server delivering to a real receiver, and `verifyWebhook` checked
 * both ways against the reference implementation of Standard Webhooks (`standardwebhooks`).
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Webhook } from 'standardwebhooks';
import { type Client, createClient, ValidationError } from '../src/index.ts';
import { verifyWebhook, WebhookVerificationError } from '../src/webhooks.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { type Receiver, startReceiver, until } from '../../server/test/support/receiver.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let client: Client;
let receiver: Receiver;

test.before(async () => {
  t = await startTestServer('sdk_webhooks', { webhookAllowPrivate: 'true', webhookPollInterval: '50ms' });
  client = createClient({ baseUrl: t.url, token: await t.user('hooked') });
  receiver = await startReceiver();
});
test.after(async () => {
  await client.close();
  await receiver.close();
  await t.close();
});

test('webhooks.create/get/list/update/deliveries/redeliver/delete; the delivery verifies with verifyWebhook and the reference', async () => {
  const hook = await client.webhooks.create({ url: receiver.url });
  assert.match(hook.secret!, /^whsec_/);
  assert.is((await client.webhooks.get(hook.id)).secret, undefined);
  assert.equal(
    (await client.webhooks.list().toArray({ max: 10 })).map((h) => h.id),
    [hook.id],
  );
  const id = randomUUID();
  await t.server.context.orm.em
    .fork()
    .execute(`insert into alert_event (id, user_iss, user_sub, type, data) values (?, ?, 'hooked', 'series.stale', '{"metric":"m"}')`, [
      id,
      t.issuer.issuer,
    ]);
  await until(() => receiver.received.length === 1, 'a delivery');
  const got = receiver.received[0]!;
  const event = verifyWebhook(hook.secret!, got.headers as Record<string, string>, got.body);
  assert.equal([event.type, event.data], ['series.stale', { metric: 'm' }]);
  assert.equal(new Webhook(hook.secret!).verify(got.body, got.headers as Record<string, string>), event);
  await until(async () => (await client.webhooks.deliveries(hook.id)).items.length === 1, 'logged');
  const [attempt] = (await client.webhooks.deliveries(hook.id)).items;
  assert.equal([attempt!.event_id, attempt!.status], [id, 204]);
  await client.webhooks.redeliver(hook.id, attempt!.delivery_id);
  await until(() => receiver.received.length === 2, 'redelivered');
  assert.is(receiver.received[1]!.headers['webhook-id'], id);
  const updated = await client.webhooks.update(hook.id, { enabled: false });
  assert.is(updated.enabled, false);
  const refused = await rejects(() => client.webhooks.create({ url: 'http://169.254.169.254/' }), ValidationError);
  assert.match(refused.message, /metadata address/);
  await client.webhooks.delete(hook.id);
  assert.equal((await client.webhooks.list()).items, []);
});

const secret = `whsec_${Buffer.from('0123456789abcdef01234567').toString('base64')}`;
const body = '{"type":"change.detected","timestamp":"2026-12-02T00:00:00.000Z","data":{}}';

function signed(at = new Date(), key = secret) {
  const id = `msg_${randomUUID()}`;
  const timestamp = String(Math.floor(at.getTime() / 1000));
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': new Webhook(key).sign(id, at, body) };
}

test('verifyWebhook: accepts what the reference signs (any of several signatures, a Headers object); refuses the rest, saying why', () => {
  const headers = signed();
  assert.equal(verifyWebhook(secret, headers, body).type, 'change.detected');
  assert.equal(verifyWebhook(secret, new Headers(headers), new TextEncoder().encode(body)).type, 'change.detected');
  const other = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
  const rotating = { ...headers, 'webhook-signature': `${signed(new Date(), other)['webhook-signature']} ${headers['webhook-signature']}` };
  assert.ok(verifyWebhook(secret, rotating, body));
  const refused: [Record<string, string>, string, RegExp][] = [
    [headers, body.replace('{}', '{"x":1}'), /No webhook-signature matches/],
    [signed(new Date(), other), body, /No webhook-signature matches/],
    [signed(new Date(Date.now() - 301_000)), body, /more than 300 s from now/],
    [signed(new Date(Date.now() + 301_000)), body, /more than 300 s from now/],
    [{ ...headers, 'webhook-id': 'msg_other' }, body, /No webhook-signature matches/],
    [{ 'webhook-id': 'x', 'webhook-timestamp': headers['webhook-timestamp'] }, body, /The webhook-signature header is missing/],
  ];
  for (const [h, b, message] of refused) {
    assert.throws(
      () => verifyWebhook(secret, h, b),
      (err: Error) => err instanceof WebhookVerificationError && message.test(err.message),
      String(message),
    );
  }
});

test.run();
