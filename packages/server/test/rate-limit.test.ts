import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig } from '../src/config.ts';
import { parseRateLimit, RateLimiter } from '../src/rate-limit/limiter.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { inputs, problemDefect } from './support/hardening.ts';

test('RATE_LIMIT: on by default (1200/60s), any <n>/<window>, 0 disables, nonsense refused', () => {
  assert.equal(buildConfig({}).rateLimit, { max: 1200, windowMs: 60_000 });
  assert.equal(parseRateLimit('600/10m'), { max: 600, windowMs: 600_000 });
  assert.equal(parseRateLimit('10/500ms'), { max: 10, windowMs: 500 });
  assert.equal(parseRateLimit('5/h'), { max: 5, windowMs: 3_600_000 });
  assert.is(parseRateLimit('0'), null);
  assert.is(buildConfig({ rateLimit: 'off' }).rateLimit, null);
  for (const bad of ['120', '/60s', '0/60s', '-1/60s', '120/0s', '120/60x', 'lots', '120/2d']) {
    assert.throws(() => buildConfig({ rateLimit: bad }), /RATE_LIMIT must be/, bad);
  }
});

test('the limiter: a burst of max, refilled over the window; memory bounded and idle clients forgotten', () => {
  let now = 0;
  const limiter = new RateLimiter({ max: 3, windowMs: 3000 }, { maxClients: 100, now: () => now });
  assert.equal(
    [1, 2, 3, 4].map(() => limiter.take('a').allowed),
    [true, true, true, false],
  );
  assert.is(limiter.take('a').retryAfterSec, 1);
  now += 1000; // one token back
  assert.equal([limiter.take('a').allowed, limiter.take('a').allowed], [true, false]);
  for (let i = 0; i < 1000; i++) limiter.take(`client-${i}`);
  assert.ok(limiter.size <= 100, `at most maxClients tracked (${limiter.size})`);
  now += 10_000; // everyone has refilled: nothing left to remember
  limiter.take('b');
  assert.is(limiter.size, 1);
});

// Windows of 10 minutes: no write comes back while a test runs, however slowly (at 5/60s one came
// back every 12 s). 'the budget refills over the window' chooses a short one to see it happen.
let t: TestServer;
test.before(async () => {
  t = await startTestServer({ rateLimit: '5/10m' }, 'ratelimit');
});
test.after(async () => {
  await t.close();
});

test('writes beyond the limit: 429 RATE_LIMITED with Retry-After and RateLimit headers; per client; nothing stored', async () => {
  const alice = await t.user('rl-alice'); // registration is a write of its own: 1 of 5
  const bob = await t.user('rl-bob');
  const remaining: string[] = [];
  for (let i = 0; i < 4; i++) {
    const res = await t.request('POST', '/sites', { token: alice, body: inputs.site() });
    assert.is(res.status, 201);
    remaining.push(res.headers.get('ratelimit-remaining')!);
    assert.is(res.headers.get('ratelimit-limit'), '5');
    assert.is(res.headers.get('ratelimit-policy'), '5;w=600');
  }
  assert.equal(remaining, ['3', '2', '1', '0']);
  const before = (await t.request('GET', '/sites', { query: { status: 'on_review' } })).body.total;
  const limited = await t.request('POST', '/sites', { token: alice, body: inputs.site() });
  assert.is(limited.status, 429);
  assert.is(limited.body.code, 'RATE_LIMITED');
  assert.is(problemDefect(429, limited.headers.get('content-type'), limited.text), null);
  const retryAfter = Number(limited.headers.get('retry-after'));
  assert.ok(retryAfter >= 1 && retryAfter <= 120, `Retry-After ${retryAfter}s: one write comes back every 120 s`);
  assert.is(limited.headers.get('ratelimit-remaining'), '0');
  assert.is((await t.request('GET', '/sites', { query: { status: 'on_review' } })).body.total, before, 'the refused write stored nothing');
  for (let i = 0; i < 20; i++)
    assert.is(
      (await t.request('GET', '/sites', { token: alice })).status,
      200,
      'reads have a budget of their own (READ_RATE_LIMIT, bounded-work.test.ts)',
    );
  assert.is((await t.request('POST', '/sites', { token: bob, body: inputs.site() })).status, 201, 'another client has its own budget');
});

test('refused writes (no or a bad token) are limited per IP address', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++)
    statuses.push((await t.request('POST', '/sites', { token: i % 2 ? 'not-a-token' : undefined, body: {} })).status);
  assert.equal(statuses, [401, 401, 401, 401, 401, 429, 429]);
});

test('40 writes with random opaque tokens under 5/10m: the address is limited before authentication, at most 5 reach the identity provider', async () => {
  const own = await startTestServer({ rateLimit: '5/10m' }, 'ratelimit_tokens');
  try {
    const alice = await own.user('flood-alice'); // verified before the flood: its writes count for its identity
    const before = own.issuer.userinfoRequests;
    const random = () => randomBytes(24).toString('base64url');
    const statuses = await Promise.all(
      Array.from({ length: 40 }, () => own.request('POST', '/sites', { token: random(), body: inputs.site() }).then((r) => r.status)),
    );
    const calls = own.issuer.userinfoRequests - before;
    console.log(
      `40 random opaque tokens at once: ${statuses.filter((s) => s === 401).length} × 401, ${statuses.filter((s) => s === 429).length} × 429, ${calls} userinfo calls`,
    );
    assert.equal(statuses.filter((s) => s !== 429).sort(), [401, 401, 401, 401, 401]);
    assert.is(calls, 5);
    // One after another, also refused before the provider is asked.
    for (let i = 0; i < 10; i++) assert.is((await own.request('POST', '/sites', { token: random(), body: inputs.site() })).status, 429);
    assert.is(own.issuer.userinfoRequests - before, 5);
    // A token verified recently is not charged to the flooded address.
    assert.is((await own.request('POST', '/sites', { token: alice, body: inputs.site() })).status, 201);
  } finally {
    await own.close();
  }
});

test('X-Forwarded-For names the client only behind a trusted proxy, and only its last entry counts', async () => {
  const anonymous = (server: TestServer, forwardedFor: string) =>
    fetch(`${server.api}/sites`, { method: 'POST', headers: { 'x-forwarded-for': forwardedFor } }).then((r) => r.status);
  const proxied = await startTestServer({ rateLimit: '2/10m', trustProxy: 'true' }, 'ratelimit_proxy');
  const direct = await startTestServer({ rateLimit: '2/10m' }, 'ratelimit_direct');
  try {
    assert.equal(
      [await anonymous(proxied, '10.0.0.1'), await anonymous(proxied, '10.0.0.1'), await anonymous(proxied, '10.0.0.1')],
      [401, 401, 429],
    );
    assert.is(await anonymous(proxied, '10.0.0.2'), 401, 'another address behind the proxy has its own budget');
    assert.is(await anonymous(proxied, '10.0.0.77, 10.0.0.1'), 429, 'an entry the client wrote itself changes nothing');
    assert.equal(
      [await anonymous(direct, '10.0.0.1'), await anonymous(direct, '10.0.0.2'), await anonymous(direct, '10.0.0.3')],
      [401, 401, 429],
      'without trust the header is ignored',
    );
  } finally {
    await proxied.close();
    await direct.close();
  }
});

test('the budget refills over the window', async () => {
  // One write back every 3 s: the three writes below take far less, even on a loaded machine.
  const fast = await startTestServer({ rateLimit: '2/6s' }, 'ratelimit_refill');
  try {
    const post = () => fetch(`${fast.api}/sites`, { method: 'POST' }).then((r) => r.status);
    assert.equal([await post(), await post(), await post()], [401, 401, 429]);
    await new Promise((r) => setTimeout(r, 3_100));
    assert.is(await post(), 401, 'one write is back after half the window');
  } finally {
    await fast.close();
  }
});

test.run();
