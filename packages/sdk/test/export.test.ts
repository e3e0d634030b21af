/**
 * client.results.export / exportCsv against a real server (more results than one server batch of
 * 500, filters, CSV columns, problem answers, aborts), and against tiny local HTTP servers for what
 * the real one cannot be made to do on demand: break off midway, split a character across chunks,
 * stall, or refuse once with 503.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ServerResponse } from 'node:http';
import {
  createClient,
  IncompleteResponseError,
  NotFoundError,
  ServerError,
  TimeoutError,
  ValidationError,
  where,
  type Client,
  type ExportedResult,
} from '../src/index.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { listen, proxy, type LocalServer } from './support/http.ts';
import { rejects } from './support/assert.ts';

const COUNT = 1_203; // more than two of the server's batches of 500
const LABEL = 'ñandú 測試 🚀';

let t: TestServer;
let admin: Client;
let anonymous: Client;
let benchmark_id: string;
let small: string;
let large: string;
let nightly: string;
const locals: LocalServer[] = [];
const clients: Client[] = [];

/** A client of `baseUrl`, closed after the suite. */
function client(baseUrl: string, options: Partial<Parameters<typeof createClient>[0]> = {}): Client {
  const c = createClient({ baseUrl, ...options });
  clients.push(c);
  return c;
}

async function local(handler: Parameters<typeof listen>[0]): Promise<LocalServer> {
  const server = await listen(handler);
  locals.push(server);
  return server;
}

const at = (i: number) => new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString();

test.before(async () => {
  // One export at a time: a second one is refused while the first holds its place.
  t = await startTestServer('sdk_export', { exportConcurrency: '1' });
  admin = client(t.url, { token: await t.admin('export-admin') });
  anonymous = client(t.url);
  const schema = {
    type: 'object',
    properties: {
      result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true }, label: { type: 'string' } } },
      cores: { type: 'integer' },
    },
  };
  benchmark_id = (await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/export', container_tag: '1', json_schema: schema }))
    .id;
  const site = await admin.sites.create({ name: 'Export site', address: 'x' });
  small = (await admin.flavors.create(site.id, { name: 'small' })).id;
  large = (await admin.flavors.create(site.id, { name: 'large' })).id;
  nightly = (await admin.tags.create({ name: 'export-nightly' })).id;
  const items = Array.from({ length: COUNT }, (_, i) => ({
    benchmark_id,
    flavor_id: i % 2 ? large : small,
    execution_datetime: at(i),
    tags_ids: i % 3 === 0 ? [nightly] : [],
    json: { result: { score: i, label: `${LABEL} #${i}` }, cores: i % 2 ? 8 : 2 },
  }));
  for (let i = 0; i < items.length; i += 500) await admin.results.createMany(items.slice(i, i + 500));
});
test.after(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(locals.map((s) => s.close()));
  await t.close();
});

async function collect<T>(records: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const r of records) out.push(r);
  return out;
}

/** The whole text of a byte stream, read chunk by chunk. */
async function textOf(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += decoder.decode(chunk.value, { stream: true });
  return text + decoder.decode();
}

/** Waits until the server's one export place is free again (the previous export's connection closed). */
async function placeFreed(): Promise<boolean> {
  const probe = client(t.url, { retries: 0 });
  const deadline = Date.now() + 60_000; // ends a wait that would never end; the place is freed at once
  while (Date.now() < deadline) {
    try {
      await collect(probe.results.export({ benchmark_id, execution_before: at(1) }));
      return true;
    } catch (err) {
      if (!(err instanceof ServerError && err.code === 'EXPORT_BUSY')) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return false;
}

test('results.export: all 1,203 results (several server batches), typed, in execution order, each as results.get returns it', async () => {
  const results: ExportedResult[] = await collect(anonymous.results.export({ benchmark_id }));
  assert.is(results.length, COUNT);
  assert.is(new Set(results.map((r) => r.id)).size, COUNT);
  assert.equal(
    results.map((r) => (r.json as { result: { score: number } }).result.score),
    Array.from({ length: COUNT }, (_, i) => i),
    'execution_datetime order',
  );
  for (const r of [results[0]!, results[600]!, results.at(-1)!]) assert.equal(r, await anonymous.results.get(r.id));
  assert.is(results[1]!.flavor.name, 'large');
  assert.equal(
    results[3]!.tags.map((tag) => tag.name),
    ['export-nightly'],
  );
});

test('results.export: where() filters, flavor_id, tags_ids and dates apply as in results.list', async () => {
  const high = await collect(
    anonymous.results.export({ benchmark_id, flavor_id: large, filters: [where('result.score').gte(1000), where('cores').eq(8)] }),
  );
  assert.equal(
    high.map((r) => (r.json as { result: { score: number } }).result.score),
    Array.from({ length: 101 }, (_, i) => 1001 + 2 * i),
  );
  const tagged = await collect(anonymous.results.export({ tags_ids: [nightly], execution_before: at(30) }));
  assert.is(tagged.length, 10); // 0, 3, ..., 27
  assert.is(tagged.length, (await anonymous.results.list({ tags_ids: [nightly], execution_before: at(30) })).total);
  assert.equal(await collect(anonymous.results.export({ benchmark_id, execution_after: '2030-01-01T00:00:00Z' })), []);
});

test('results.exportCsv: a ReadableStream of the CSV, with the columns asked for or the default ones', async () => {
  const chosen = await textOf(
    anonymous.results.exportCsv({
      benchmark_id,
      columns: ['id', 'flavor_name', 'json.result.score', 'json.result.label', 'tags'],
      filters: [where('result.score').lt(3)],
    }),
  );
  const ids = (await collect(anonymous.results.export({ benchmark_id, execution_before: at(3) }))).map((r) => r.id);
  assert.equal(chosen.split('\r\n'), [
    'id,flavor_name,json.result.score,json.result.label,tags',
    `${ids[0]},small,0,${LABEL} #0,export-nightly`,
    `${ids[1]},large,1,${LABEL} #1,`,
    `${ids[2]},small,2,${LABEL} #2,`,
    '',
  ]);
  const all = (await textOf(anonymous.results.exportCsv({ benchmark_id }))).split('\r\n');
  assert.is(all[0], 'id,execution_datetime,benchmark_name,site_name,flavor_name,tags,json.result.score');
  assert.is(all.length, COUNT + 2);
  assert.match(all[COUNT]!, /,ghcr\.io\/sdk-test\/export:1,Export site,small,,1202$/);
});

test('problem answers become SDK errors, thrown by the first read: INVALID_COLUMN, a malformed filter, an unknown benchmark', async () => {
  const column = await rejects(() => textOf(anonymous.results.exportCsv({ columns: ['id', 'password'] })), ValidationError);
  assert.is(column.code, 'INVALID_COLUMN');
  assert.match(column.detail, "columns[1] 'password'");
  const filter = await rejects(() => collect(anonymous.results.export({ filters: ['result.score >> 3'] })), ValidationError);
  assert.is(filter.status, 422);
  await rejects(() => collect(anonymous.results.export({ benchmark_id: '00000000-0000-4000-8000-000000000000' })), NotFoundError);
});

test('results.export: aborting the signal mid-stream throws its reason at once and closes the connection', async () => {
  const controller = new AbortController();
  const reason = new Error('stopped by the test');
  let seen = 0;
  const err = await rejects(async () => {
    for await (const _ of anonymous.results.export({ benchmark_id }, { signal: controller.signal })) {
      if (++seen === 10) controller.abort(reason);
    }
  }, Error);
  assert.is(err, reason);
  assert.is(seen, 10, 'no result after the abort, not even those of a chunk already read');
  assert.ok(await placeFreed(), 'the server saw the connection close and gave the export place back');
});

test('results.exportCsv: aborting the signal errors the stream with its reason; leaving a loop early closes the connection', async () => {
  const controller = new AbortController();
  const reader = anonymous.results.exportCsv({ benchmark_id }, { signal: controller.signal }).getReader();
  assert.not.ok((await reader.read()).done);
  controller.abort(new Error('csv stopped'));
  const err = await rejects(() => reader.read(), Error);
  assert.is(err.message, 'csv stopped');
  assert.ok(await placeFreed());
  let seen = 0;
  for await (const _ of anonymous.results.export({ benchmark_id })) if (++seen === 5) break;
  assert.ok(await placeFreed(), 'break closed the connection');
});

/** Answers 200 with NDJSON, writes `parts` a few milliseconds apart, then `end` ends or destroys the socket. */
function streaming(parts: (string | Buffer)[], end: 'end' | 'destroy' | 'stall', type = 'application/x-ndjson') {
  return async (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': type });
    for (const part of parts) {
      res.write(part);
      await new Promise((r) => setTimeout(r, 20));
    }
    if (end === 'end') res.end();
    if (end === 'destroy') res.socket?.destroy();
  };
}

test('a broken stream throws IncompleteResponseError, not a short export: half a line then the socket destroyed; not retried', async () => {
  const half = '{"id":"1"}\n{"id":"2","json":{"sco';
  const server = await local(streaming([half], 'destroy'));
  const c = client(server.url);
  const got: unknown[] = [];
  const err = await rejects(async () => {
    for await (const r of c.results.export()) got.push(r);
  }, IncompleteResponseError);
  assert.equal(got, [{ id: '1' }]);
  assert.is(err.receivedBytes, Buffer.byteLength(half));
  assert.match(
    err.message,
    /^The answer of GET http:\/\/127\.0\.0\.1:\d+\/api\/v1\/results:export\?format=ndjson broke off after 33 bytes: \S/,
  );
  assert.is(server.seen.length, 1, 'a body already begun is not asked for again');
  const rows = ['id,flavor_name\r\n', 'a,small\r\nb,la'];
  const csv = await local(streaming(rows, 'destroy', 'text/csv'));
  const partial = await rejects(() => textOf(client(csv.url).results.exportCsv()), IncompleteResponseError);
  assert.is(partial.receivedBytes, Buffer.byteLength(rows.join('')));
});

test('a body that ends cleanly without its final newline is an error too (NDJSON and CSV)', async () => {
  const ndjson = await local(streaming(['{"id":"1"}\n{"id":"2"}'], 'end'));
  const err = await rejects(() => collect(client(ndjson.url).results.export()), IncompleteResponseError);
  assert.match(err.message, /line 2 ends without its newline/);
  const csv = await local(streaming(['id\r\n', 'a'], 'end', 'text/csv'));
  await rejects(() => textOf(client(csv.url).results.exportCsv()), IncompleteResponseError);
  const empty = await local(streaming([], 'end'));
  assert.equal(await collect(client(empty.url).results.export()), [], 'an empty export is complete');
});

test('lines and UTF-8 characters split across chunks are put back together; nothing is sent before the first read', async () => {
  const bytes = Buffer.from(`{"label":"${LABEL}"}\n{"n":2}\n`);
  const cut = bytes.indexOf(Buffer.from('🚀')) + 2; // inside the 4 bytes of the rocket
  const server = await local(streaming([bytes.subarray(0, 5), bytes.subarray(5, cut), bytes.subarray(cut)], 'end'));
  const records = client(server.url, { userAgent: 'export-test/1' }).results.export({ filters: [where('n').gt(1)] });
  await new Promise((r) => setTimeout(r, 50));
  assert.is(server.seen.length, 0, 'nothing sent before the first read');
  assert.equal(await collect(records), [{ label: LABEL }, { n: 2 }]);
  const { url, headers } = server.seen[0]!;
  assert.is(url, '/api/v1/results:export?filters=n%20%3E%201&format=ndjson');
  assert.match(String(headers['user-agent']), /^export-test\/1 benchmarks-sdk\//);
  assert.match(String(headers.accept), /application\/x-ndjson.*application\/problem\+json/);
});

test('before the body starts, a 503 is retried as for any GET (Retry-After); the export then arrives whole', async () => {
  const server = await local((req, res, seen) => {
    if (seen.length === 1) {
      res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '0' });
      res.end(JSON.stringify({ status: 503, code: 'EXPORT_BUSY', detail: 'busy' }));
      return;
    }
    proxy(t.url, req, res);
  });
  assert.is((await collect(client(server.url).results.export({ benchmark_id }))).length, COUNT);
  assert.is(server.seen.length, 2);
});

test('timeoutMs watches each wait for the server, not the time the caller takes between reads', async () => {
  // 2 s, not less: the first line must reach the client within it even on a loaded machine.
  const timeoutMs = 2_000;
  const stalled = await local(streaming(['{"id":"1"}\n'], 'stall'));
  const got: unknown[] = [];
  const started = Date.now();
  await rejects(async () => {
    for await (const r of client(stalled.url, { timeoutMs }).results.export()) got.push(r);
  }, TimeoutError);
  const waited = Date.now() - started;
  assert.equal(got, [{ id: '1' }]);
  // At least the timeout (5 ms: timers count whole milliseconds); the upper bound only catches a
  // wait never cut.
  assert.ok(waited >= timeoutMs - 5 && waited < timeoutMs + 30_000, `the stalled export ended after ${waited} ms`);
  const prompt = await local(streaming(['{"n":1}\n{"n":2}\n{"n":3}\n'], 'end'));
  const slowReader: unknown[] = [];
  for await (const r of client(prompt.url, { timeoutMs }).results.export()) {
    slowReader.push(r);
    // The caller takes longer than timeoutMs between its first and second read: not counted.
    if (slowReader.length === 1) await new Promise((resolve) => setTimeout(resolve, timeoutMs + 500));
  }
  assert.is(slowReader.length, 3);
});

test.run();
