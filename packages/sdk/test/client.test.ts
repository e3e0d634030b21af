import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inspect, promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  ApiError,
  AuthenticationError,
  BenchmarksError,
  ConflictError,
  ConnectionError,
  createClient,
  NotFoundError,
  PermissionError,
  RateLimitError,
  SDK_VERSION,
  ServerError,
  TimeoutError,
  ValidationError,
  type Client,
} from '../src/index.ts';
import { errorFromResponse, parseRetryAfter } from '../src/errors.ts';
import { operations } from '../src/contract/index.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { closedPort, listen, proxy } from './support/http.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
const clients: Client[] = [];
/** A client of the test server; closed after the suite. */
function client(options: Partial<Parameters<typeof createClient>[0]> = {}): Client {
  const c = createClient({ baseUrl: t.url, ...options });
  clients.push(c);
  return c;
}

test.before(async () => {
  t = await startTestServer('sdk_client');
});
test.after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await t.close();
});

function assertNoSecret(err: unknown, secret: string) {
  const e = err as Error;
  for (const [what, text] of [
    ['String(err)', String(e)],
    ['err.message', e.message],
    ['err.stack', e.stack ?? ''],
    ['JSON.stringify(err)', JSON.stringify(e)],
    ['util.inspect(err)', inspect(e, { depth: 10, showHidden: true })],
  ] as const) {
    assert.not.ok(text.includes(secret), `${what} contains the token`);
    assert.not.match(text, /authorization/i, `${what} mentions the Authorization header`);
  }
}

test('createClient: the service root and its /api/v1 base URL reach the same API', async () => {
  for (const baseUrl of [t.url, `${t.url}/`, t.api, `${t.api}/`]) {
    const c = client({ baseUrl });
    assert.is(c.baseUrl, t.api, baseUrl);
    assert.equal(await c.health(), { status: 'ok', version: (await client().health()).version });
  }
  assert.is(createClient({ baseUrl: 'https://example.org/perf/' }).baseUrl, 'https://example.org/perf/api/v1');
  assert.throws(() => createClient({ baseUrl: 'localhost:8080' }), /absolute http\(s\) URL|http or https/);
  assert.throws(() => createClient({ baseUrl: 'http://h/?x=1' }), /query string/);
});

test('a CommonJS script require()s the compiled SDK (dist/, made current by the test runner) and calls the server', async () => {
  const script = fileURLToPath(new URL('fixtures/commonjs.cjs', import.meta.url));
  const { stdout } = await promisify(execFile)(process.execPath, [script, t.url], { timeout: 30_000 });
  const seen = JSON.parse(stdout);
  assert.equal(seen, {
    resolved: fileURLToPath(new URL('../dist/index.js', import.meta.url)),
    sdkVersion: SDK_VERSION,
    filter: 'score >= 2',
    health: await client().health(),
  });
});

test('GET /ready, /api-spec.json and /auth/config: typed bodies from the real server', async () => {
  assert.equal(await client().ready(), { status: 'ready', database: 'ok', migrations: 'applied' });
  const spec = await client().spec();
  assert.match(spec.openapi, /^3\.1/);
  const paths = (spec as Record<string, unknown>).paths as Record<string, unknown>;
  assert.ok('/users:register' in paths);
  const auth = await client().authConfig();
  assert.equal(auth.issuers, [t.issuer.issuer]);
  assert.type(auth.terms_version, 'string');
});

test('POST /users:register: 201 with the user, then ConflictError ALREADY_REGISTERED', async () => {
  const c = client({ token: await t.token('sdk-reg') });
  const user = await c.self.register();
  assert.is(user.sub, 'sdk-reg');
  assert.is(user.email, 'sdk-reg@test.example');
  const err = await rejects(() => c.self.register(), ConflictError);
  assert.is(err.status, 409);
  assert.is(err.code, 'ALREADY_REGISTERED');
  assert.is(err.title, 'Conflict');
  assert.match(err.type, /^urn:benchmarks:problem:already-registered$/);
  assert.match(err.message, /409 Conflict: .*ALREADY_REGISTERED.*POST .*\/api\/v1\/users:register/);
  assert.instance(err, ApiError);
  assert.instance(err, BenchmarksError);
});

test('GET /users/self: NotFoundError NOT_REGISTERED before registration; POST /users/self upserts', async () => {
  const c = client({ token: await t.token('sdk-upsert') });
  const missing = await rejects(() => c.self.get(), NotFoundError);
  assert.is(missing.code, 'NOT_REGISTERED');
  const created = await c.self.upsert();
  const again = await c.self.upsert();
  assert.equal(again, created);
  assert.equal(await c.self.get(), created);
  assert.is(await c.self.update(), undefined, '204 resolves to undefined');
});

test('GET /users/self:try_admin: resolves for an admin, PermissionError NOT_ADMIN for a user; isAdmin()', async () => {
  const admin = client({ token: await t.admin('sdk-admin') });
  const user = client({ token: await t.user('sdk-user') });
  assert.is(await admin.self.tryAdmin(), undefined);
  assert.is(await admin.self.isAdmin(), true);
  const err = await rejects(() => user.self.tryAdmin(), PermissionError);
  assert.is(err.code, 'NOT_ADMIN');
  assert.is(await user.self.isAdmin(), false);
  await rejects(() => client().self.isAdmin(), AuthenticationError);
});

test('401 without a token: AuthenticationError MISSING_TOKEN with the WWW-Authenticate challenge', async () => {
  const err = await rejects(() => client().self.get(), AuthenticationError);
  assert.is(err.status, 401);
  assert.is(err.code, 'MISSING_TOKEN');
  assert.match(err.headers['www-authenticate'] ?? '', /^Bearer/);
});

test('403 for an unregistered caller of a registered-only operation: PermissionError NOT_REGISTERED', async () => {
  const err = await rejects(async () => client({ token: await t.token('sdk-stranger') }).self.update(), PermissionError);
  assert.is(err.status, 403);
  assert.is(err.code, 'NOT_REGISTERED');
});

test('404 on an unknown path: NotFoundError ROUTE_NOT_FOUND', async () => {
  const err = await rejects(() => client({ baseUrl: `${t.url}/nowhere` }).health(), NotFoundError);
  assert.is(err.status, 404);
  assert.is(err.code, 'ROUTE_NOT_FOUND');
});

test('422 on an unknown query parameter: ValidationError with each problem in errors', async () => {
  const c = client();
  // @ts-expect-error getHealth takes no query: the types refuse it, the server too.
  const err = await rejects(() => c.call('getHealth', { query: { filter: 'x' } }), ValidationError);
  assert.is(err.status, 422);
  assert.is(err.code, 'INVALID_QUERY');
  assert.ok(err.errors.length >= 1);
  assert.is(err.errors[0]!.in, 'query');
  assert.type(err.errors[0]!.message, 'string');
});

test('client.call: any operation by operationId, typed', async () => {
  const c = client({ token: await t.user('sdk-call') });
  const me = await c.call('getSelf');
  assert.is(me.sub, 'sdk-call');
  assert.is((await c.call('getHealth')).status, 'ok');
});

test('the token never appears in an error: String, message, stack, JSON, util.inspect', async () => {
  // A well-formed but unknown token: the server refuses it (401).
  const bogus = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.SECRET-signature-0123456789';
  const refused = await rejects(() => client({ token: bogus }).self.get(), AuthenticationError);
  assertNoSecret(refused, bogus);
  assertNoSecret(refused, 'SECRET-signature');

  const real = await t.token('sdk-secret');
  const forbidden = await rejects(() => client({ token: real }).self.update(), PermissionError);
  assertNoSecret(forbidden, real);

  // A transport whose own error quotes the header it was given.
  const leaky = createClient({
    baseUrl: t.url,
    token: real,
    retries: 0,
    fetch: async (_url, init) => {
      throw new Error(`socket hang up while sending ${init.headers.authorization}`);
    },
  });
  const lost = await rejects(() => leaky.self.get(), ConnectionError);
  assertNoSecret(lost, real);
  assert.match(lost.message, /socket hang up/);
});

test('a closed port: ConnectionError naming the URL and the cause, after the retries of a GET', async () => {
  const base = await closedPort();
  // Counted, not timed: the first attempt and the 2 retries, then the error.
  let attempts = 0;
  const counting: typeof fetch = (input, init) => {
    attempts++;
    return fetch(input, init);
  };
  const err = await rejects(() => createClient({ baseUrl: base, retries: 2, fetch: counting }).health(), ConnectionError);
  assert.match(err.message, /Cannot reach http:\/\/127\.0\.0\.1:\d+\/api\/v1\/health: .*ECONNREFUSED/);
  assert.is(err.request.method, 'GET');
  assert.not.instance(err, ApiError);
  assert.is(attempts, 3, 'one attempt and two retries');
});

test('a server that never answers: TimeoutError after timeoutMs, not retried', async () => {
  const silent = await listen(() => {});
  try {
    const started = Date.now();
    const err = await rejects(() => createClient({ baseUrl: silent.url, timeoutMs: 300 }).health(), TimeoutError);
    const elapsed = Date.now() - started;
    // It waited for the timeout (a timer never fires early; 250: Date.now() counts whole ms), and
    // did not hang: the upper bound leaves a loaded machine 30 s, and only catches a timeout not kept.
    assert.ok(elapsed >= 250 && elapsed < 300 + 30_000, `took ${elapsed} ms`);
    assert.is(err.timeoutMs, 300);
    assert.match(err.message, /No response within 300 ms \(GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/health\)/);
    assert.is(silent.seen.length, 1);
  } finally {
    await silent.close();
  }
});

test("a caller abort: rejects with the caller's reason, not a TimeoutError", async () => {
  const silent = await listen(() => {});
  try {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user gave up')), 100);
    const c = createClient({ baseUrl: silent.url });
    await c.core.request('getHealth', { signal: controller.signal }).then(
      () => assert.unreachable('resolved'),
      (err: Error) => assert.is(err.message, 'user gave up'),
    );
    await c.close();
  } finally {
    await silent.close();
  }
});

test('GET retried on a real 503 with Retry-After, then answered by the real server', async () => {
  let failures = 2;
  const flaky = await listen((req, res) => {
    if (failures-- > 0) {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
      res.end(JSON.stringify({ type: 'urn:x', title: 'Service Unavailable', status: 503, detail: 'down', code: 'DATABASE_UNAVAILABLE' }));
    } else proxy(t.url, req, res);
  });
  try {
    const c = createClient({ baseUrl: flaky.url });
    const health = await c.health();
    assert.is(health.status, 'ok');
    assert.equal(
      flaky.seen.map((s) => s.url),
      ['/api/v1/health', '/api/v1/health', '/api/v1/health'],
    );
    await c.close();
  } finally {
    await flaky.close();
  }
});

test('POST is never retried: one request, ServerError with the problem fields', async () => {
  const down = await listen((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
    res.end(JSON.stringify({ type: 'urn:x', title: 'Service Unavailable', status: 503, detail: 'down', code: 'DATABASE_UNAVAILABLE' }));
  });
  try {
    const c = createClient({ baseUrl: down.url, token: 'tok', retries: 5 });
    const err = await rejects(() => c.self.register(), ServerError);
    assert.is(err.code, 'DATABASE_UNAVAILABLE');
    assert.is(down.seen.length, 1);
    // A GET to the same server gives up after 1 + retries attempts.
    await rejects(() => createClient({ baseUrl: down.url, retries: 2 }).health(), ServerError);
    assert.is(down.seen.length, 4);
  } finally {
    await down.close();
  }
});

test('429: retried, then RateLimitError with retryAfter in seconds', async () => {
  const limited = await listen((_req, res) => {
    res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '0' });
    res.end(JSON.stringify({ type: 'urn:x', title: 'Too Many Requests', status: 429, detail: 'slow down', code: 'RATE_LIMITED' }));
  });
  try {
    const err = await rejects(() => createClient({ baseUrl: limited.url, retries: 1 }).health(), RateLimitError);
    assert.is(err.retryAfter, 0);
    assert.is(err.code, 'RATE_LIMITED');
    assert.is(limited.seen.length, 2);
  } finally {
    await limited.close();
  }
});

test('429 on a POST: retried after Retry-After (nothing was done); a 503 on a POST is not retried', async () => {
  let answered = 0;
  const limiter = await listen((req, res) => {
    if (answered++ === 0) {
      res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '0' });
      res.end(JSON.stringify({ type: 'urn:x', title: 'Too Many Requests', status: 429, detail: 'slow down', code: 'RATE_LIMITED' }));
      return;
    }
    proxy(t.url, req, res);
  });
  try {
    const token = await t.token('sdk-429-post');
    const user = await createClient({ baseUrl: limiter.url, token, retries: 1 }).self.register();
    assert.is(user.sub, 'sdk-429-post');
    assert.equal(limiter.seen.filter((r) => r.method === 'POST').length, 2);
  } finally {
    await limiter.close();
  }
  const down = await listen((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
    res.end(JSON.stringify({ type: 'urn:x', title: 'Service Unavailable', status: 503, detail: 'down', code: 'DATABASE_UNAVAILABLE' }));
  });
  try {
    await rejects(() => createClient({ baseUrl: down.url, token: 'x', retries: 2 }).self.register(), ServerError);
    assert.is(down.seen.length, 1);
  } finally {
    await down.close();
  }
});

test('headers: accept JSON, User-Agent with the SDK version, Authorization only where the operation takes a token', async () => {
  const recorder = await listen((req, res) => proxy(t.url, req, res));
  try {
    const token = await t.user('sdk-headers');
    let calls = 0;
    const c = createClient({
      baseUrl: recorder.url,
      userAgent: 'my-script/2.0',
      getToken: async () => {
        calls++;
        return token;
      },
    });
    await c.health();
    await c.self.get();
    const [health, self] = recorder.seen;
    assert.match(String(health!.headers.accept), /application\/json/);
    assert.is(health!.headers['user-agent'], `my-script/2.0 benchmarks-sdk/${SDK_VERSION}`);
    assert.is(health!.headers.authorization, undefined, 'auth: none sends no token');
    assert.is(self!.headers.authorization, `Bearer ${token}`);
    assert.is(calls, 1, 'getToken is asked for each request that needs a token');
    await c.close();
  } finally {
    await recorder.close();
  }
});

test('every operation of the contract is reachable through a namespace method', async () => {
  const sent: string[] = [];
  const emptyPage = {
    items: [],
    has_next: false,
    has_prev: false,
    next_num: null,
    prev_num: null,
    page: 1,
    pages: 0,
    per_page: 100,
    total: 0,
  };
  // A transport that records what would be sent: this checks the SDK's mapping, not the server.
  const c = createClient({
    baseUrl: 'http://sdk.invalid',
    token: 'tok',
    fetch: async (url, init) => {
      sent.push(`${init.method} ${new URL(url).pathname}`);
      return new Response(JSON.stringify(emptyPage), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  const id = 'ID';
  const meta = { benchmark_id: id, flavor_id: id, execution_datetime: '2025-01-01T00:00:00Z' };
  const calls: (() => PromiseLike<unknown>)[] = [
    c.health,
    c.ready,
    c.spec,
    c.authConfig,
    c.self.register,
    c.self.upsert,
    c.self.get,
    c.self.update,
    c.self.tryAdmin,
    () => c.self.results(),
    () => c.self.claims(),
    ...(['benchmarks', 'sites', 'tags'] as const).flatMap((ns) => [
      () => c[ns].list(),
      () => c[ns].search(),
      () => c[ns].get(id),
      () => c[ns].create({} as never),
      () => c[ns].update(id, {} as never),
      () => c[ns].delete(id),
      () => c[ns].approve(id),
      () => c[ns].reject(id),
    ]),
    () => c.flavors.list(id),
    () => c.flavors.search(id),
    () => c.flavors.create(id, { name: 'x' }),
    () => c.flavors.get(id),
    () => c.flavors.update(id, { name: 'x' }),
    () => c.flavors.delete(id),
    () => c.flavors.site(id),
    () => c.flavors.approve(id),
    () => c.flavors.reject(id),
    () => c.results.list(),
    () => c.results.search(),
    () => c.results.get(id),
    () => c.results.create(meta, {}),
    () => c.results.createMany([{ ...meta, json: {} }]),
    () => c.results.delete(id),
    () => c.results.setTags(id, []),
    () => c.results.claim(id, 'm'),
    () => c.results.claims(id),
    () => c.results.uploader(id),
    () => c.results.compare({ benchmark_id: id, metric: 'json.score' }),
    () => c.results.changes({ benchmark_id: id, metric: 'json.score' }),
    // The recorded answer is no NDJSON: the export is sent, then refused as cut short.
    () =>
      c.results
        .export()
        .next()
        .catch(() => undefined),
    () => c.claims.list(),
    () => c.claims.get(id),
    () => c.claims.approve(id),
    () => c.claims.reject(id),
    () => c.claims.delete(id),
    () => c.claims.rejectMany([id]),
    () => c.submissions.list(),
    () => c.users.list(),
    () => c.users.search(),
    () => c.users.remove({ sub: 'x' }),
    () => c.users.restore({ sub: 'x' }),
    () => c.watches.create({ benchmark_id: id, metric: 'json.score' }),
    () => c.watches.list(),
    () => c.watches.get(id),
    () => c.watches.delete(id),
    () => c.changes.list(),
    () => c.changes.acknowledge(id),
    () => c.changes.dismiss(id),
    () => c.changes.reopen(id),
    () => c.webhooks.create({ url: 'http://192.0.2.1/' }),
    () => c.webhooks.list(),
    () => c.webhooks.get(id),
    () => c.webhooks.update(id, { enabled: true }),
    () => c.webhooks.delete(id),
    () => c.webhooks.deliveries(id),
    () => c.webhooks.redeliver(id, id),
  ];
  for (const call of calls) await call();
  const reached = new Set<string | undefined>(
    sent.map(
      (line) =>
        Object.values(operations).find((def) => {
          const pattern = `/api/v1${def.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{\w+\}/g, '[^/:]+')}`;
          return new RegExp(`^${def.method} ${pattern}$`).test(line);
        })?.operationId,
    ),
  );
  assert.equal(
    Object.keys(operations).filter((k) => !reached.has(k)),
    [],
    'operations without a namespace method',
  );
});

test('errorFromResponse: one subclass per status family', () => {
  const request = { method: 'GET', url: 'http://x/api/v1/y' };
  const cases: [number, new (...a: never[]) => ApiError][] = [
    [400, ValidationError],
    [413, ValidationError],
    [415, ValidationError],
    [422, ValidationError],
    [401, AuthenticationError],
    [403, PermissionError],
    [404, NotFoundError],
    [405, NotFoundError],
    [409, ConflictError],
    [429, RateLimitError],
    [500, ServerError],
    [502, ServerError],
    [503, ServerError],
  ];
  for (const [status, type] of cases) {
    const err = errorFromResponse({ status, body: { code: 'X', detail: 'd', title: 't', type: 'urn:x' }, headers: {}, request });
    assert.instance(err, type, String(status));
    assert.is(err.status, status);
  }
  const other = errorFromResponse({ status: 418, body: 'I am a teapot', headers: {}, request });
  assert.is(other.constructor, ApiError);
  assert.is(other.code, 'HTTP_418');
  assert.is(other.detail, 'I am a teapot');
});

test('parseRetryAfter: seconds or an HTTP date', () => {
  const now = Date.parse('2025-01-01T00:00:00Z');
  assert.is(parseRetryAfter('7', now), 7);
  assert.is(parseRetryAfter('Wed, 01 Jan 2025 00:00:30 GMT', now), 30);
  assert.is(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now), 0);
  assert.is(parseRetryAfter('soon', now), undefined);
  assert.is(parseRetryAfter(null, now), undefined);
});

test('SDK_VERSION matches package.json', () => {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  assert.is(SDK_VERSION, pkg.version);
});

test.run();
