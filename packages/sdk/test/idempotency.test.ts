/**
 * Safe retries of creating POSTs: the SDK sends an Idempotency-Key with each one, the same on every
 * retry, and retries them after a lost answer, a timeout or a 5xx. The answers are lost by a
 * transport wrapper (a `fetch` passed to createClient) that hands each request to the real server
 * and then drops or replaces the first answer, as a proxy or a flaky network would.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, ServerError, ValidationError, where, type Client, type FetchLike, type UploadItem } from '../src/index.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let token: string;
let anonymous: Client;
let benchmark_id: string;
let flavor_id: string;

test.before(async () => {
  t = await startTestServer('sdk_idempotency');
  const adminToken = await t.admin('idem-admin');
  token = await t.user('idem-uploader');
  const admin = createClient({ baseUrl: t.url, token: adminToken });
  anonymous = createClient({ baseUrl: t.url });
  benchmark_id = (
    await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/idempotency', container_tag: '1', json_schema: { type: 'object' } })
  ).id;
  const site = await admin.sites.create({ name: 'Idempotency site', address: 'x' });
  flavor_id = (await admin.flavors.create(site.id, { name: 'i-flavor' })).id;
  await admin.close();
});
test.after(async () => {
  await anonymous.close();
  await t.close();
});

let runs = 0;
const newRun = () => `run-${process.pid}-${++runs}`;
const at = '2025-03-01T10:00:00Z';
/** How many results carry this run marker. */
const stored = async (run: string) => (await anonymous.results.list({ benchmark_id, filters: [where('run').eq(run)] })).total;

interface Sent {
  method: string;
  url: string;
  key: string | undefined;
}

/**
 * A transport that sends every request to the real server; for the first `lose` POSTs it then
 * throws away the answer and does what `fail` says instead.
 */
function lossy(fail: (signal: AbortSignal | undefined) => Promise<Response>, lose = 1): { fetch: FetchLike; sent: Sent[] } {
  const sent: Sent[] = [];
  let lost = 0;
  const fetch: FetchLike = async (url, init) => {
    sent.push({ method: init.method, url, key: init.headers['idempotency-key'] });
    if (init.method !== 'POST' || lost >= lose) return globalThis.fetch(url, init);
    lost++;
    const { signal, ...rest } = init;
    const real = await globalThis.fetch(url, rest); // the server does the work and answers...
    await real.text(); // ...and the answer is lost on its way back
    return fail(signal);
  };
  return { fetch, sent };
}

const connectionLost = async (): Promise<Response> => {
  throw new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
};
const gatewayError = (status: number) => async () =>
  new Response(JSON.stringify({ type: 'urn:x', title: 'Bad Gateway', status, detail: 'the proxy lost the answer', code: 'UPSTREAM' }), {
    status,
    headers: { 'content-type': 'application/problem+json', 'retry-after': '0' },
  });
/** Never answers: the client's timeout aborts the attempt. */
const never = (signal: AbortSignal | undefined) =>
  new Promise<Response>((_, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

test('POST /results: the connection drops after the server stored it; the retry carries the same key and stores nothing more', async () => {
  const { fetch, sent } = lossy(connectionLost);
  const client = createClient({ baseUrl: t.url, token, fetch });
  const run = newRun();
  const result = await client.results.create({ benchmark_id, flavor_id, execution_datetime: at }, { run });
  const posts = sent.filter((s) => s.method === 'POST');
  assert.is(posts.length, 2, 'the first attempt and one retry');
  assert.ok(posts[0]!.key && posts[0]!.key === posts[1]!.key, `one key for both attempts: ${posts.map((p) => p.key).join(' ')}`);
  assert.match(posts[0]!.key!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.is(await stored(run), 1);
  assert.is((await anonymous.results.get(result.id)).json.run, run, 'the answer names the stored result');
  // The next call is another logical call: another key.
  await client.results.create({ benchmark_id, flavor_id, execution_datetime: at }, { run });
  assert.is.not(sent.at(-1)!.key, posts[0]!.key);
  assert.is(await stored(run), 2);
});

test('POST /results:batch: a 503 (or 502) after the server stored it is retried and stores the batch once, with the first ids', async () => {
  for (const status of [503, 502]) {
    const { fetch, sent } = lossy(gatewayError(status));
    const client = createClient({ baseUrl: t.url, token, fetch });
    const run = newRun();
    const items = [0, 1, 2].map((i) => ({ benchmark_id, flavor_id, execution_datetime: at, json: { run, i } }));
    const { ids } = await client.results.createMany(items);
    assert.is(ids.length, 3);
    assert.is(sent.filter((s) => s.method === 'POST').length, 2);
    assert.is(await stored(run), 3, `${status}: stored once`);
    for (const [i, id] of ids.entries()) assert.is((await anonymous.results.get(id)).json.i, i);
  }
});

test('a creating POST whose answer never comes: TimeoutError is retried with the key; stored once', async () => {
  const { fetch, sent } = lossy(never);
  // The timeout only cuts the lost attempt short: the retry is answered by the real server, within
  // the same timeout (5 s: a real upload takes milliseconds, more on a loaded machine).
  const client = createClient({ baseUrl: t.url, token, fetch, timeoutMs: 5_000 });
  const run = newRun();
  const created = await client.results.create({ benchmark_id, flavor_id, execution_datetime: at }, { run });
  assert.is(sent.filter((s) => s.method === 'POST').length, 2);
  assert.is(await stored(run), 1);
  assert.is((await anonymous.results.get(created.id)).json.run, run);
  // Catalogue creates too: a retried tag creation is not a 409 DUPLICATE.
  const tags = lossy(connectionLost);
  const tagClient = createClient({ baseUrl: t.url, token, fetch: tags.fetch });
  const tag = await tagClient.tags.create({ name: `tag-${run}` });
  assert.is(tag.name, `tag-${run}`);
  assert.is(tags.sent.filter((s) => s.method === 'POST').length, 2);
});

test('idempotencyKey: the caller’s own key is sent; calls with it are applied once; another body under it is 422 IDEMPOTENCY_KEY_REUSED', async () => {
  const { fetch, sent } = lossy(connectionLost, 0);
  const client = createClient({ baseUrl: t.url, token, fetch });
  const run = newRun();
  const key = `ci-job-${run}`;
  const first = await client.results.create({ benchmark_id, flavor_id, execution_datetime: at }, { run }, { idempotencyKey: key });
  const second = await client.call('createResult', {
    query: { benchmark_id, flavor_id, execution_datetime: at },
    body: { run },
    idempotencyKey: key,
  });
  assert.is(second.id, first.id);
  assert.equal(
    sent.filter((s) => s.method === 'POST').map((s) => s.key),
    [key, key],
  );
  assert.is(await stored(run), 1);
  const err = await rejects(
    () => client.results.create({ benchmark_id, flavor_id, execution_datetime: at }, { run, other: true }, { idempotencyKey: key }),
    ValidationError,
  );
  assert.is(err.code, 'IDEMPOTENCY_KEY_REUSED');
  assert.is(await stored(run), 1);
  await rejects(() => client.tags.create({ name: 'x' }, { idempotencyKey: 'caf\u00e9' }), TypeError);
  await rejects(() => client.tags.create({ name: 'x' }, { idempotencyKey: '' }), TypeError);
});

test('POSTs without a key (registration, approval) are still not retried after a 5xx', async () => {
  const { fetch, sent } = lossy(gatewayError(503));
  const client = createClient({ baseUrl: t.url, token: await t.token('idem-newcomer'), fetch });
  await rejects(() => client.self.register(), ServerError);
  assert.equal(
    sent.map((s) => [s.method, s.key]),
    [['POST', undefined]],
  );
});

test('results.upload with a content key: a lost batch answer is retried; running the same upload again stores nothing twice', async () => {
  const run = newRun();
  const items: UploadItem[] = Array.from({ length: 7 }, (_, i) => ({ benchmark_id, flavor_id, execution_datetime: at, json: { run, i } }));
  const keys: string[] = [];
  const idempotencyKey = (batch: readonly UploadItem[], operation: string) => {
    const key = `${operation}:${batch.map((b) => `${b.json.run}/${b.json.i}`).join(',')}`;
    keys.push(key);
    return key;
  };
  const { fetch, sent } = lossy(connectionLost);
  const client = createClient({ baseUrl: t.url, token, fetch });
  const first = await client.results.upload(items, { batchSize: 3, concurrency: 1, idempotencyKey });
  assert.is(first.stored, 7);
  assert.ok(
    first.outcomes.every((o) => o.ok),
    JSON.stringify(first),
  );
  assert.is(keys.length, 3, 'one key per batch');
  assert.is(sent.filter((s) => s.method === 'POST').length, 4, 'three batches, the first one sent twice');
  assert.is(await stored(run), 7);
  // The same upload again (a CI job re-run): the same keys, the same ids, nothing new stored.
  const rerun = createClient({ baseUrl: t.url, token });
  try {
    const again = await rerun.results.upload(items, { batchSize: 3, idempotencyKey });
    assert.equal(again, first);
    assert.is(await stored(run), 7);
    // One by one (POST /results), keyed per item.
    const single = await rerun.results.upload(items.slice(0, 2), { batchSize: 1, idempotencyKey });
    const singleAgain = await rerun.results.upload(items.slice(0, 2), { batchSize: 1, idempotencyKey });
    assert.is(single.stored, 2);
    assert.equal(singleAgain, single);
    assert.is(await stored(run), 9);
  } finally {
    await rerun.close();
  }
});

test.run();
