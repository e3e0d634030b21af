/**
 * Webhook endpoints and the delivery of alert events to real HTTP receivers on loopback
 * (WEBHOOK_ALLOW_PRIVATE=true): every request is checked with the reference implementation of
 * Standard Webhooks. Events are inserted into the outbox with SQL, as the alerts' writers do.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Webhook } from 'standardwebhooks';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { type Receiver, type Received, startReceiver, status, until } from './support/receiver.ts';
import { urlRefusal } from '../src/services/webhooks/addresses.ts';
import { retryAfterMs, send } from '../src/services/webhooks/send.ts';

let t: TestServer;
const receivers: Receiver[] = [];

test.before(async () => {
  t = await startTestServer(
    {
      webhookAllowPrivate: 'true',
      webhookPollInterval: '50ms',
      webhookRetryDelay: '100ms',
      webhookTimeout: '1s',
      webhookAttempts: '3',
      webhookRetryPeriod: '0',
      maxWebhooksPerUser: '3',
    },
    'webhooks',
  );
});
test.after(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await t.close();
});

async function receiver(answer?: Parameters<typeof startReceiver>[0]): Promise<Receiver> {
  const r = await startReceiver(answer);
  receivers.push(r);
  return r;
}

/** A new registered user, and an endpoint of theirs at `url`. */
async function endpoint(url: string, body: Record<string, unknown> = {}) {
  const sub = `u-${randomUUID()}`;
  const token = await t.user(sub);
  const res = await t.request('POST', '/users/self/webhooks', { token, body: { url, ...body } });
  assert.is(res.status, 201, res.text);
  return { sub, token, hook: res.body as { id: string; secret: string; [k: string]: unknown } };
}

/** An alert event for `sub`, written to the outbox as its writers do. */
async function emit(sub: string, type = 'change.detected', data: Record<string, unknown> = { id: randomUUID(), metric: 'score' }) {
  const id = randomUUID();
  await t.server.context.orm.em
    .fork()
    .execute('insert into alert_event (id, user_iss, user_sub, type, data) values (?, ?, ?, ?, ?::jsonb)', [
      id,
      t.issuer.issuer,
      sub,
      type,
      JSON.stringify(data),
    ]);
  return id;
}

/** Verified by the reference implementation; returns the parsed body. */
function verified(secret: string, got: Received): any {
  return new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
}

const attempts = async (token: string, id: string) =>
  (await t.request('GET', `/users/self/webhooks/${id}/deliveries`, { token })).body.items;

test('POST /users/self/webhooks: the secret once (whsec_ and 24 bytes), all five events by default; never in GET', async () => {
  const { token, hook } = await endpoint('http://127.0.0.1:9/hook');
  assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]+=*$/);
  assert.is(Buffer.from(hook.secret.slice(6), 'base64').length, 24);
  assert.equal(hook.events, ['change.detected', 'change.acknowledged', 'change.dismissed', 'series.stale', 'series.resumed']);
  assert.equal([hook.format, hook.enabled, hook.disabled_reason], ['standard', true, null]);
  const got = await t.request('GET', `/users/self/webhooks/${hook.id}`, { token });
  const { secret: _, ...shown } = hook;
  assert.equal(got.body, shown);
  const list = await t.request('GET', '/users/self/webhooks', { token });
  assert.equal(list.body.items, [shown]);
  const other = await t.user('webhooks-other');
  assertProblem(await t.request('GET', `/users/self/webhooks/${hook.id}`, { token: other }), 404, 'NOT_FOUND');
  assertProblem(await t.request('DELETE', `/users/self/webhooks/${hook.id}`, { token: other }), 404, 'NOT_FOUND');
  assert.is((await t.request('DELETE', `/users/self/webhooks/${hook.id}`, { token })).status, 204);
  assertProblem(await t.request('GET', `/users/self/webhooks/${hook.id}`, { token }), 404, 'NOT_FOUND');
});

test('POST /users/self/webhooks: refused addresses are 422 INVALID_WEBHOOK_URL saying why; metadata even with allow-private', async () => {
  const token = await t.user('webhooks-addresses');
  for (const [url, why] of [
    ['ftp://127.0.0.1/x', /must use http or https, not ftp/],
    ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254 is a link-local, unspecified or metadata address/],
    ['http://[fe80::1]/x', /fe80::1 is a link-local/],
    ['http://[::ffff:169.254.169.254]/x', /metadata address/],
    ['http://0.0.0.0:8080/x', /unspecified/],
    ['http://no-such-host.invalid/x', /could not be resolved/],
  ] as const) {
    const res = await t.request('POST', '/users/self/webhooks', { token, body: { url } });
    assertProblem(res, 422, 'INVALID_WEBHOOK_URL');
    assert.match(res.body.detail, why, url);
    assert.equal(res.body.errors[0].path, '/url');
  }
  // Without WEBHOOK_ALLOW_PRIVATE (the default) loopback and private addresses are refused too.
  for (const url of ['http://127.0.0.1/x', 'http://localhost/x', 'http://10.1.2.3/x', 'http://[::1]/x', 'http://100.64.0.1/x']) {
    assert.match(String(await urlRefusal(url, false)), /loopback or private address \(allowed only with WEBHOOK_ALLOW_PRIVATE=true\)/, url);
  }
  assert.is(await urlRefusal('http://8.8.8.8/x', false), null);
});

test('POST /users/self/webhooks: at most MAX_WEBHOOKS_PER_USER endpoints (422 TOO_MANY_WEBHOOKS)', async () => {
  const token = await t.user('webhooks-many');
  for (let i = 0; i < 3; i++) {
    assert.is((await t.request('POST', '/users/self/webhooks', { token, body: { url: `http://127.0.0.1:9/${i}` } })).status, 201);
  }
  const res = await t.request('POST', '/users/self/webhooks', { token, body: { url: 'http://127.0.0.1:9/3' } });
  assertProblem(res, 422, 'TOO_MANY_WEBHOOKS');
  assert.is(res.body.limit, 3);
});

test('delivery: every event of a subscribed type, signed (Standard Webhooks), body {type, timestamp, data}; logged', async () => {
  const r = await receiver();
  const { sub, token, hook } = await endpoint(r.url, { events: ['change.detected', 'series.stale'] });
  const ids = [await emit(sub, 'change.detected', { id: 'c1' }), await emit(sub, 'change.dismissed'), await emit(sub, 'series.stale')];
  await until(() => r.received.length === 2, 'two deliveries');
  const bodies = r.received.map((got) => verified(hook.secret, got));
  assert.equal(r.received.map((got) => got.headers['webhook-id']).sort(), [ids[0], ids[2]].sort());
  const detected = bodies.find((b) => b.type === 'change.detected');
  assert.equal(detected.data, { id: 'c1' });
  assert.match(detected.timestamp, /^\d{4}-\d\d-\d\dT.*Z$/);
  assert.is(r.received[0]!.headers['content-type'], 'application/json');
  assert.ok(Math.abs(Number(r.received[0]!.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
  await until(async () => (await attempts(token, hook.id)).length === 2, 'two attempts logged');
  const logged = await attempts(token, hook.id);
  assert.equal(
    logged.map((a: any) => [a.status, a.delivery_state, a.error]),
    [
      [204, 'succeeded', null],
      [204, 'succeeded', null],
    ],
  );
  assert.equal(logged.map((a: any) => a.event_id).sort(), [ids[0], ids[2]].sort());
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is(r.received.length, 2, 'each delivered once; change.dismissed not subscribed');
});

test('delivery: a 500 is retried with the same webhook-id; the log lists both attempts, newest first, with the answer', async () => {
  const r = await receiver((n, _got, res) => (n === 0 ? res.writeHead(500).end('x'.repeat(5000)) : res.writeHead(200).end('ok')));
  const { sub, token, hook } = await endpoint(r.url);
  const id = await emit(sub);
  await until(() => r.received.length === 2, 'a retry');
  assert.equal(
    r.received.map((got) => got.headers['webhook-id']),
    [id, id],
  );
  for (const got of r.received) verified(hook.secret, got);
  await until(async () => (await attempts(token, hook.id)).length === 2, 'two attempts logged');
  const [second, first] = await attempts(token, hook.id);
  assert.equal([second.status, second.response, second.delivery_state], [200, 'ok', 'succeeded']);
  assert.equal([first.status, first.response.length], [500, 1024]);
  assert.is(first.delivery_id, second.delivery_id);
  const page = await t.request('GET', `/users/self/webhooks/${hook.id}/deliveries`, { token, query: { per_page: 1 } });
  assert.equal([page.body.items[0].id, page.body.total], [second.id, 2]);
  const next = await t.request('GET', `/users/self/webhooks/${hook.id}/deliveries`, {
    token,
    query: { per_page: 1, cursor: page.body.next_cursor },
  });
  assert.equal([next.body.items[0].id, next.body.next_cursor], [first.id, null]);
});

test('delivery: 410 Gone disables the endpoint at once and says so', async () => {
  const r = await receiver(status(410));
  const { sub, token, hook } = await endpoint(r.url);
  await emit(sub);
  await until(async () => !(await t.request('GET', `/users/self/webhooks/${hook.id}`, { token })).body.enabled, 'disabled');
  const got = await t.request('GET', `/users/self/webhooks/${hook.id}`, { token });
  assert.match(got.body.disabled_reason, /answered 410 Gone/);
  await emit(sub);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is(r.received.length, 1, 'nothing more to a disabled endpoint');
  const enabled = await t.request('PATCH', `/users/self/webhooks/${hook.id}`, { token, body: { enabled: true } });
  assert.equal([enabled.body.enabled, enabled.body.disabled_reason], [true, null]);
});

test('delivery: Retry-After (seconds) is honoured', async () => {
  const r = await receiver((n, _got, res) => (n === 0 ? res.writeHead(503, { 'retry-after': '1' }).end() : res.writeHead(204).end()));
  const { sub } = await endpoint(r.url);
  await emit(sub);
  await until(() => r.received.length === 2, 'a retry');
  const waited = r.received[1]!.at - r.received[0]!.at;
  assert.ok(waited >= 1000 && waited < 3000, `waited ${waited} ms`);
});

test('delivery: a redirect is not followed (a 3xx is a failure); failing every attempt fails the delivery and disables the endpoint', async () => {
  const target = await receiver();
  const r = await receiver(status(302, { location: target.url }));
  const { sub, token, hook } = await endpoint(r.url);
  await emit(sub);
  await until(async () => !(await t.request('GET', `/users/self/webhooks/${hook.id}`, { token })).body.enabled, 'disabled');
  assert.is(target.received.length, 0, 'the redirect was not followed');
  assert.is(r.received.length, 3, 'WEBHOOK_ATTEMPTS attempts');
  const logged = await attempts(token, hook.id);
  assert.equal(
    logged.map((a: any) => [a.status, a.delivery_state]),
    [
      [302, 'failed'],
      [302, 'failed'],
      [302, 'failed'],
    ],
  );
  const got = await t.request('GET', `/users/self/webhooks/${hook.id}`, { token });
  assert.match(got.body.disabled_reason, /3 attempts to deliver event .* failed; the last: status 302\./);
});

test('delivery: a hanging receiver times out and holds only its own delivery', async () => {
  const hanging = await receiver(() => undefined);
  const healthy = await receiver();
  const slow = await endpoint(hanging.url);
  const fast = await endpoint(healthy.url);
  await emit(slow.sub);
  await until(() => hanging.received.length === 1, 'the hanging attempt');
  await emit(fast.sub);
  await until(() => healthy.received.length === 1, 'the other delivered meanwhile', 900);
  await until(async () => (await attempts(slow.token, slow.hook.id)).length >= 1, 'the timeout logged');
  const [first] = await attempts(slow.token, slow.hook.id);
  assert.equal([first.status, first.error], [null, 'no answer within 1000 ms']);
  assert.ok(first.duration_ms >= 1000, String(first.duration_ms));
});

test('PATCH rotate_secret: the new secret answered once; both secrets sign meanwhile', async () => {
  const r = await receiver();
  const { sub, token, hook } = await endpoint(r.url);
  const rotated = await t.request('PATCH', `/users/self/webhooks/${hook.id}`, { token, body: { rotate_secret: true } });
  assert.is(rotated.status, 200, rotated.text);
  assert.match(rotated.body.secret, /^whsec_/);
  assert.is.not(rotated.body.secret, hook.secret);
  await emit(sub);
  await until(() => r.received.length === 1, 'a delivery');
  const got = r.received[0]!;
  assert.is(String(got.headers['webhook-signature']).split(' ').length, 2);
  verified(rotated.body.secret, got);
  verified(hook.secret, got);
  assert.throws(() => verified(`whsec_${Buffer.alloc(24).toString('base64')}`, got));
  const patched = await t.request('PATCH', `/users/self/webhooks/${hook.id}`, { token, body: { events: ['series.stale'] } });
  assert.equal([patched.body.events, patched.body.secret], [['series.stale'], undefined]);
  const bad = await t.request('PATCH', `/users/self/webhooks/${hook.id}`, { token, body: { url: 'http://169.254.169.254/' } });
  assertProblem(bad, 422, 'INVALID_WEBHOOK_URL');
});

test('POST …/deliveries/{id}:redeliver: a new attempt with the same webhook-id; 409 while pending', async () => {
  const r = await receiver();
  const { sub, token, hook } = await endpoint(r.url);
  const id = await emit(sub);
  await until(async () => (await attempts(token, hook.id)).length === 1, 'delivered');
  const [first] = await attempts(token, hook.id);
  const path = `/users/self/webhooks/${hook.id}/deliveries/${first.delivery_id}:redeliver`;
  assert.is((await t.request('POST', path, { token })).status, 204);
  await until(() => r.received.length === 2, 'redelivered');
  assert.equal(
    r.received.map((got) => got.headers['webhook-id']),
    [id, id],
  );
  verified(hook.secret, r.received[1]!);
  assertProblem(
    await t.request('POST', `/users/self/webhooks/${hook.id}/deliveries/${randomUUID()}:redeliver`, { token }),
    404,
    'NOT_FOUND',
  );
  r.answer = () => undefined; // hangs: the redelivery stays pending
  assert.is((await t.request('POST', path, { token })).status, 204);
  await until(() => r.received.length === 3, 'in flight');
  assertProblem(await t.request('POST', path, { token }), 409, 'DELIVERY_PENDING');
});

test("format slack: Slack's incoming-webhook body (text and blocks)", async () => {
  const r = await receiver(status(200, {}, 'ok'));
  const { sub } = await endpoint(r.url, { format: 'slack' });
  await emit(sub, 'series.stale', {
    benchmark: { name: 'c-ray' },
    metric: 'time',
    links: { explorer: 'https://x.example/explore/series?a=1' },
  });
  await until(() => r.received.length === 1, 'a delivery');
  const body = JSON.parse(r.received[0]!.body);
  assert.is(body.text, 'Series stale: c-ray · time');
  assert.equal(body.blocks, [
    {
      type: 'section',
      text: { type: 'mrkdwn', text: '*Series stale: c-ray · time*\n<https://x.example/explore/series?a=1|Open in the explorer>' },
    },
  ]);
});

test('delivery: a name is resolved once and connected to as checked; an address refused at delivery is logged, never reached', async () => {
  const r = await receiver();
  const { sub, token, hook } = await endpoint(r.url.replace('127.0.0.1', 'localhost'));
  await emit(sub);
  await until(() => r.received.length === 1, 'delivered through the checked lookup');
  verified(hook.secret, r.received[0]!);
  const signal = new AbortController().signal;
  const refused = await send(r.url.replace('127.0.0.1', 'localhost'), {}, '{}', { timeoutMs: 1000, allowPrivate: false, signal });
  assert.is(refused.status, null);
  assert.match(String(refused.error), /^localhost resolves to (127\.0\.0\.1|::1), which is a loopback or private address/);
  assert.is(r.received.length, 1, 'no connection made');
  // Stored before the rules (or by SQL): refused at each attempt.
  await t.server.context.orm.em.fork().execute("update webhook_endpoint set url = 'http://169.254.169.254/latest' where id = ?", [hook.id]);
  await emit(sub);
  await until(async () => (await attempts(token, hook.id)).length >= 2, 'the refusal logged');
  const [latest] = await attempts(token, hook.id);
  assert.match(latest.error, /^refused: 169\.254\.169\.254 is a link-local, unspecified or metadata address/);
});

test('Retry-After: seconds or an HTTP date, in milliseconds from now; anything else is ignored', () => {
  const now = Date.parse('2026-12-02T10:00:00Z');
  assert.is(retryAfterMs('120', now), 120_000);
  assert.is(retryAfterMs('Wed, 02 Dec 2026 10:00:30 GMT', now), 30_000);
  assert.is(retryAfterMs('Wed, 02 Dec 2026 09:00:00 GMT', now), 0);
  assert.is(retryAfterMs('soon', now), null);
  assert.is(retryAfterMs(undefined, now), null);
});

test.run();
