/**
 * Per-call options (`signal`, `timeoutMs`, `headers`, `idempotencyKey`) on every method, and the
 * request id on every error: against a real server, through small real HTTP servers where the
 * server cannot be made slow on demand.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConnectionError, createClient, NotFoundError, TimeoutError, ValidationError, type Client } from '../src/index.ts';
import { errorFromResponse } from '../src/errors.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { closedPort, listen, proxy, type LocalServer } from './support/http.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let admin: Client;
let alice: Client;
let benchmark_id: string;
let flavor_id: string;
const clients: Client[] = [];
const servers: LocalServer[] = [];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MISSING = '00000000-0000-4000-8000-000000000000';

/** A client of `baseUrl`, closed after the suite. */
function client(baseUrl: string, options: Partial<Parameters<typeof createClient>[0]> = {}): Client {
  const c = createClient({ baseUrl, ...options });
  clients.push(c);
  return c;
}

/** A proxy to the test server that holds each request until `release()` (or forever). */
async function holding(): Promise<{ server: LocalServer; release: () => void; arrived: () => Promise<void> }> {
  const held: (() => void)[] = [];
  let arrival: (() => void) | undefined;
  const server = await listen((req: IncomingMessage, res: ServerResponse) => {
    held.push(() => proxy(t.url, req, res));
    arrival?.();
  });
  servers.push(server);
  return {
    server,
    release: () => {
      for (const go of held.splice(0)) go();
    },
    arrived: () => (held.length ? Promise.resolve() : new Promise<void>((resolve) => (arrival = resolve))),
  };
}

test.before(async () => {
  t = await startTestServer('sdk_options');
  admin = client(t.url, { token: await t.admin('opt-admin') });
  alice = client(t.url, { token: await t.user('opt-alice') });
  benchmark_id = (
    await admin.benchmarks.create({
      container_image: 'ghcr.io/sdk-test/options',
      container_tag: '1',
      json_schema: { type: 'object', required: ['score'], properties: { score: { type: 'number' } } },
    })
  ).id;
  const site = await admin.sites.create({ name: 'Options site', address: 'x' });
  flavor_id = (await admin.flavors.create(site.id, { name: 'o-flavor' })).id;
});
test.after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(servers.map((s) => s.close()));
  await t.close();
});

test('signal: aborting a get in flight rejects it with the signal’s reason, and nothing is retried', async () => {
  const { server, arrived } = await holding();
  const c = client(server.url);
  const controller = new AbortController();
  const reason = new Error('the user left the page');
  const pending = c.benchmarks.get(benchmark_id, { signal: controller.signal });
  await arrived();
  controller.abort(reason);
  try {
    await pending;
    assert.unreachable('the get resolved');
  } catch (err) {
    assert.is(err, reason);
  }
  assert.is(server.seen.length, 1);
  // Already aborted: nothing is sent.
  await rejects(() => c.benchmarks.get(benchmark_id, { signal: AbortSignal.abort(new TypeError('stop')) }), TypeError);
  assert.is(server.seen.length, 1);
});

test('timeoutMs: a call’s own timeout fires instead of the client’s, and can lift a short one', async () => {
  const slow = await holding();
  const c = client(slow.server.url, { retries: 0 });
  const started = performance.now();
  const err = await rejects(
    () => c.benchmarks.get(benchmark_id, { timeoutMs: 150, headers: { 'x-request-id': 'slow-get-1' } }),
    TimeoutError,
  );
  assert.is(err.timeoutMs, 150);
  assert.is(err.requestId, 'slow-get-1', 'the id the call sent');
  assert.ok(performance.now() - started < 20_000, 'not the client’s 30 s');

  // A client whose timeout is too short for this answer; the call's own timeout (0: none) lets it through.
  const later = await holding();
  const hurried = client(later.server.url, { timeoutMs: 100, retries: 0 });
  const answer = hurried.benchmarks.get(benchmark_id, { timeoutMs: 0 });
  await later.arrived();
  await new Promise((resolve) => setTimeout(resolve, 300));
  later.release();
  assert.is((await answer).id, benchmark_id);
  await rejects(() => hurried.health({ timeoutMs: -1 }), TypeError);
  await rejects(() => hurried.health({ timeoutMs: Number.POSITIVE_INFINITY }), TypeError);
});

test('headers: reach the server on every kind of call (get, list pages, update, approve, delete, health)', async () => {
  const recorder = await listen((req, res) => proxy(t.url, req, res));
  servers.push(recorder);
  const c = client(recorder.url, { token: await t.admin('opt-admin') });
  const headers = { 'X-Trace-Note': 'nightly run 42' };
  for (const name of ['opt-a', 'opt-b']) await admin.tags.create({ name });
  const tag = await c.tags.create({ name: 'opt-tag' }, { headers, idempotencyKey: 'opt-tag-1' });
  await c.tags.get(tag.id, { headers });
  await c.tags.update(tag.id, { name: 'opt-tag-2' }, { headers });
  assert.is((await c.tags.list({ per_page: 1 }, { headers }).toArray({ max: 10 })).length, 3, 'three pages');
  // Uploaded by a user, on review until an administrator approves it.
  const pending = await alice.benchmarks.create({ container_image: 'ghcr.io/sdk-test/options', container_tag: '2', json_schema: {} });
  await c.benchmarks.approve(pending.id, { headers: { 'x-trace-note': 'nightly run 42' } });
  await c.tags.delete(tag.id, undefined, { headers });
  await c.health({ headers });
  assert.is(recorder.seen.length, 9, 'create, get, update, 3 pages, approve, delete, health');
  for (const seen of recorder.seen) assert.is(seen.headers['x-trace-note'], 'nightly run 42', `${seen.method} ${seen.url}`);
  assert.is(recorder.seen[0]!.headers['idempotency-key'], 'opt-tag-1');

  // The server keeps a caller's own request id and answers with it.
  const err = await rejects(() => alice.benchmarks.get(MISSING, { headers: { 'x-request-id': 'trace-404-a' } }), NotFoundError);
  assert.is(err.requestId, 'trace-404-a');
  assert.is(err.headers['x-request-id'], 'trace-404-a');
});

test('headers and keys are checked before anything is sent', async () => {
  const recorder = await listen((req, res) => proxy(t.url, req, res));
  servers.push(recorder);
  const c = client(recorder.url, { token: 'x' });
  for (const name of ['Authorization', 'idempotency-key', 'Content-Type', 'accept', 'user-agent']) {
    const err = await rejects(() => c.benchmarks.get(benchmark_id, { headers: { [name]: 'v' } }), TypeError);
    assert.match(err.message, `'${name.toLowerCase()}' is set by the client`);
  }
  await rejects(() => c.benchmarks.get(benchmark_id, { headers: { 'bad name': 'v' } }), TypeError);
  await rejects(() => c.benchmarks.get(benchmark_id, { headers: { 'x-note': 'a\r\nx-injected: 1' } }), TypeError);
  const keyed = await rejects(
    () => c.benchmarks.get(benchmark_id, { idempotencyKey: 'k' } as unknown as { signal?: AbortSignal }),
    TypeError,
  );
  assert.match(keyed.message, 'getBenchmark takes no Idempotency-Key');
  assert.is(recorder.seen.length, 0);
});

test('requestId: on a 404 and a 422, the server’s id, also named by the problem’s instance', async () => {
  const missing = await rejects(() => alice.benchmarks.get(MISSING), NotFoundError);
  assert.match(missing.requestId ?? '', UUID);
  assert.is(missing.headers['x-request-id'], missing.requestId);
  assert.is(missing.extensions.instance, `urn:benchmarks:request:${missing.requestId}`);

  const invalid = await rejects(
    () => alice.results.create({ benchmark_id, flavor_id, execution_datetime: '2025-03-01T10:00:00Z' }, { score: 'high' }),
    ValidationError,
  );
  assert.is(invalid.status, 422);
  assert.match(invalid.requestId ?? '', UUID);
  assert.is.not(invalid.requestId, missing.requestId);
  assert.is(invalid.extensions.instance, `urn:benchmarks:request:${invalid.requestId}`);

  // Sent with a request id: the server's answer carries the same.
  const traced = await rejects(
    () =>
      alice.results.create(
        { benchmark_id, flavor_id, execution_datetime: '2025-03-01T10:00:00Z' },
        { score: 'high' },
        {
          headers: { 'x-request-id': 'trace-422-b' },
        },
      ),
    ValidationError,
  );
  assert.is(traced.requestId, 'trace-422-b');

  // Where the answer header is not readable (a browser without it exposed), the instance names it.
  const request = { method: 'GET', url: 'http://x/api/v1/benchmarks/1' };
  const fromInstance = errorFromResponse({ status: 404, body: { instance: 'urn:benchmarks:request:abc-1' }, headers: {}, request });
  assert.is(fromInstance.requestId, 'abc-1');
  assert.is(errorFromResponse({ status: 404, body: {}, headers: {}, request }).requestId, undefined);
});

test('requestId: a call that got no answer carries the id it sent, if any', async () => {
  const c = client(await closedPort(), { retries: 0 });
  const sent = await rejects(() => c.health({ headers: { 'x-request-id': 'lost-1' } }), ConnectionError);
  assert.is(sent.requestId, 'lost-1');
  const unsent = await rejects(() => c.health(), ConnectionError);
  assert.is(unsent.requestId, undefined);
});

test.run();
