/**
 * Benchmark JSON Schemas: bounded in size, checked and compiled in worker threads
 * (services/schema-compiler.ts), so that no client can stall the event loop with one.
 */
import { existsSync, readdirSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig, DEFAULTS } from '../src/config.ts';
import { countNodes } from '../src/services/json-schema.ts';
import { SchemaCompiler } from '../src/services/schema-compiler.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { inputs, problemDefect, seedCatalogue, type Catalogue } from './support/hardening.ts';

let t: TestServer;
let c: Catalogue;
let admin: string;

test.before(async () => {
  t = await startTestServer({}, 'schema_compiler');
  admin = await t.admin('schema-admin');
  c = await seedCatalogue(t, admin);
});
test.after(async () => {
  await t?.close();
});

const MAX_BYTES = DEFAULTS.maxSchemaBytes;
const MAX_NODES = DEFAULTS.maxSchemaNodes;

/**
 * A schema at both limits (by default), of the kind that costs ajv most per value: string
 * properties with a pattern and a format (5 values each), descriptions padding it to the byte limit.
 */
function largestSchema(maxNodes = MAX_NODES, maxBytes = MAX_BYTES): Record<string, unknown> {
  const build = (pad: number) => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < Math.floor((maxNodes - 2) / 5); i++) {
      properties[`metric_${i}`] = { type: 'string', pattern: '^[0-9]{4}-', format: 'date-time', description: 'd'.repeat(pad) };
    }
    return { type: 'object', properties };
  };
  const bytes = (pad: number) => Buffer.byteLength(JSON.stringify(build(pad)));
  const count = Object.keys(build(0).properties as object).length;
  return build(Math.max(0, Math.floor((maxBytes - bytes(0)) / count)));
}

function refused(res: { status: number; headers: Headers; text: string; body: any }, status: number, code: string, mention: RegExp): void {
  assert.is(res.status, status, res.text.slice(0, 300));
  assert.is(res.body.code, code, res.text.slice(0, 300));
  assert.is(problemDefect(res.status, res.headers.get('content-type'), res.text), null);
  assert.match(`${res.body.detail} ${JSON.stringify(res.body.errors ?? [])}`, mention);
}

/** Polls `url` from another thread on a fixed schedule (not one after another), so a stall delays every poll sent during it. */
function pollFromAnotherThread(url: string, everyMs: number): { stop(): Promise<number[]> } {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const latencies = []; const inflight = new Set(); let stopped = false;
     parentPort.on('message', () => { stopped = true; });
     const tick = () => {
       if (stopped) return void Promise.all(inflight).then(() => parentPort.postMessage(latencies));
       const started = performance.now();
       const poll = fetch(workerData.url).then((r) => r.arrayBuffer()).then(
         () => latencies.push(performance.now() - started), () => latencies.push(Infinity)).finally(() => inflight.delete(poll));
       inflight.add(poll);
       setTimeout(tick, workerData.everyMs);
     };
     tick();`,
    { eval: true, workerData: { url, everyMs } },
  );
  return {
    stop: async () => {
      const done = new Promise<number[]>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      const latencies = await done;
      await worker.terminate();
      return latencies;
    },
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

test('MAX_SCHEMA_BYTES and MAX_SCHEMA_NODES: defaults 256 KiB and 5,000; other values parsed; nonsense refused', () => {
  assert.is(buildConfig({}).maxSchemaBytes, 256 * 1024);
  assert.is(buildConfig({}).maxSchemaNodes, 5000);
  assert.is(buildConfig({ maxSchemaBytes: '65536', maxSchemaNodes: '200' }).maxSchemaBytes, 65536);
  for (const bad of ['0', '-1', '1.5', 'lots', '100'])
    assert.throws(() => buildConfig({ maxSchemaBytes: bad }), /MAX_SCHEMA_BYTES must be/, bad);
  for (const bad of ['0', '-1', '2.5', 'many']) assert.throws(() => buildConfig({ maxSchemaNodes: bad }), /MAX_SCHEMA_NODES must be/, bad);
  assert.is(countNodes({ time: { type: 'number' } }, 100), 2);
  assert.is(countNodes({ enum: [1, 2, [3, 4]] }, 100), 6);
  assert.ok(countNodes({ a: Array.from({ length: 1000 }, () => ({})) }, 10) > 10);
});

test('POST and PUT /benchmarks: json_schema at the limits accepted; one byte or one value more is 422 JSON_SCHEMA_TOO_LARGE naming the limit', async () => {
  const padded = (bytes: number) => ({ description: 'x'.repeat(bytes - JSON.stringify({ description: '' }).length) });
  const values = (n: number) => ({ examples: Array.from({ length: n - 1 }, () => 0) });
  assert.is(Buffer.byteLength(JSON.stringify(padded(MAX_BYTES))), MAX_BYTES);
  assert.is(countNodes(values(MAX_NODES), MAX_NODES), MAX_NODES);
  const create = (schema: unknown) => t.request('POST', '/benchmarks', { token: admin, body: inputs.benchmark(schema) });
  const atBytes = await create(padded(MAX_BYTES));
  assert.is(atBytes.status, 201, atBytes.text.slice(0, 300));
  assert.is((await create(values(MAX_NODES))).status, 201);
  refused(
    await create(padded(MAX_BYTES + 1)),
    422,
    'JSON_SCHEMA_TOO_LARGE',
    new RegExp(`at most ${MAX_BYTES} bytes.*MAX_SCHEMA_BYTES.*not ${MAX_BYTES + 1}`),
  );
  refused(await create(values(MAX_NODES + 1)), 422, 'JSON_SCHEMA_TOO_LARGE', new RegExp(`at most ${MAX_NODES} values.*MAX_SCHEMA_NODES`));
  // An update that sets json_schema is held to the same limits, and changes nothing when refused.
  const id = atBytes.body.id as string;
  const put = await t.request('PUT', `/benchmarks/${id}`, {
    token: admin,
    body: { ...inputs.benchmark(values(MAX_NODES + 1)), container_image: atBytes.body.container_image },
  });
  refused(put, 422, 'JSON_SCHEMA_TOO_LARGE', /MAX_SCHEMA_NODES/);
  assert.equal((await t.request('GET', `/benchmarks/${id}`)).body.json_schema, padded(MAX_BYTES));
  // Invalid schemas are still reported in detail (checked by the worker).
  refused(await create({ type: 'x' }), 422, 'INVALID_JSON_SCHEMA', /\/json_schema\/type/);
  refused(await create({ $ref: '#/$defs/missing' }), 422, 'INVALID_JSON_SCHEMA', /does not compile/);
});

test('GET /health answers within 100 ms while the largest allowed json_schema is uploaded, compiled and used', async () => {
  const schema = largestSchema();
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  const nodes = countNodes(schema, MAX_NODES);
  assert.ok(bytes > MAX_BYTES - 1024 && bytes <= MAX_BYTES, `at the byte limit (${bytes})`);
  assert.ok(nodes > MAX_NODES - 10 && nodes <= MAX_NODES, `at the value limit (${nodes})`);
  const query = { flavor_id: c.flavor, execution_datetime: '2024-05-01T12:00:00Z' };

  // The same polls while the server does nothing: how noisy the machine is.
  const idlePoller = pollFromAnotherThread(`${t.api}/health`, 10);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const idle = (await idlePoller.stop()).sort((a, b) => a - b);

  const poller = pollFromAnotherThread(`${t.api}/health`, 10);
  const started = performance.now();
  const created = await t.request('POST', '/benchmarks', { token: admin, body: inputs.benchmark(schema) });
  assert.is(created.status, 201, created.text.slice(0, 300));
  const createdMs = performance.now() - started;
  const upload = (json: unknown) =>
    t.request('POST', '/results', { token: admin, query: { ...query, benchmark_id: created.body.id }, body: json });
  const good = await upload({ metric_1: '2024-05-01T12:00:00Z', metric_2: '2024-05-01T13:00:00+02:00' });
  assert.is(good.status, 201, good.text.slice(0, 300));
  const bad = await upload({ metric_1: '2024-13-01T12:00:00Z', metric_2: 'soon', metric_3: 3 });
  refused(bad, 422, 'SCHEMA_VIOLATION', /\/metric_2.*pattern/);
  assert.equal(
    bad.body.errors.map((e: { path: string; message: string }) => `${e.path} ${e.message.split(' ').slice(0, 2).join(' ')}`),
    ['/metric_1 must match', '/metric_2 must match', '/metric_2 must match', '/metric_3 must be'],
    'every violation reported: format of metric_1, pattern and format of metric_2, type of metric_3',
  );
  const totalMs = performance.now() - started;
  const latencies = (await poller.stop()).sort((a, b) => a - b);

  const [median, p95, max] = [percentile(latencies, 50), percentile(latencies, 95), latencies.at(-1)!];
  console.log(
    `largest schema (${bytes} bytes, ${nodes} values): created in ${createdMs.toFixed(0)} ms, two uploads by ${totalMs.toFixed(0)} ms; ` +
      `${latencies.length} polls of /health: median ${median.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms, max ${max.toFixed(1)} ms ` +
      `(idle: ${idle.length} polls, median ${percentile(idle, 50).toFixed(1)} ms, p95 ${percentile(idle, 95).toFixed(1)} ms, max ${idle.at(-1)!.toFixed(1)} ms)`,
  );
  assert.ok(latencies.length >= 50, `${latencies.length} polls`);
  // The bound holds for p95, not max: on a loaded 2-core machine an idle Node process sees timer
  // stalls of 100-140 ms now and then, unrelated to this server. Polls are sent on a fixed schedule,
  // so a stall of the event loop delays every poll sent during it and shows in p95: compiling this
  // schema on the event loop (before: about 0.4 s for the check, again for the first upload) gave
  // p95 385-801 ms.
  assert.ok(p95 < 100, `p95 of /health ${p95.toFixed(1)} ms (max ${max.toFixed(1)} ms)`);
});

test('a schema that takes longer than the time budget to compile: 422 JSON_SCHEMA_TOO_COMPLEX, and its worker is replaced', async () => {
  // Limits 8 times the defaults: this schema takes 2.5 s or more to check, the budget is 0.5 s.
  const compiler = new SchemaCompiler({ maxBytes: 8 * MAX_BYTES, maxNodes: 8 * MAX_NODES, budgetMs: 500 });
  try {
    assert.is(await compiler.check({ type: 'object' }), null);
    const err = await compiler.check(largestSchema(8 * MAX_NODES, 8 * MAX_BYTES)).then(
      () => null,
      (e: unknown) => e as { status: number; code: string; detail: string },
    );
    assert.ok(err, 'the check was cut');
    assert.is(err!.status, 422);
    assert.is(err!.code, 'JSON_SCHEMA_TOO_COMPLEX');
    assert.match(err!.detail, /longer than 0.5 s to compile/);
    assert.equal(await compiler.check({ type: 'x' }).then((p) => p?.[0]?.path), '/json_schema/type', 'a new worker answers');
    assert.is(compiler.threads, 1);
  } finally {
    await compiler.close();
  }
  assert.is(compiler.threads, 0);
});

test('a worker without work stops after idleMs, and the next schema starts a new one', async () => {
  const compiler = new SchemaCompiler({ maxBytes: MAX_BYTES, maxNodes: MAX_NODES, idleMs: 200 });
  try {
    assert.is(await compiler.check({ type: 'object' }), null);
    assert.is(compiler.threads, 1);
    await new Promise((r) => setTimeout(r, 100));
    assert.is(await compiler.check({ type: 'array' }), null);
    await new Promise((r) => setTimeout(r, 150));
    assert.is(compiler.threads, 1, 'a job restarts the idle clock');
    const deadline = Date.now() + 3000;
    while (compiler.threads && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.is(compiler.threads, 0, 'the idle worker is gone');
    const validate = await compiler.validator({ type: 'object', required: ['x'] });
    assert.is(validate({ x: 1 }), null, 'a new worker compiled it');
    assert.is(validate({})?.[0]?.message.includes('x'), true);
    assert.is(compiler.threads, 1);
  } finally {
    await compiler.close();
  }
});

/** Threads of this process (Linux), or null elsewhere. */
const osThreads = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : null);

test('closing the server terminates its schema workers: no thread is left', async () => {
  const own = await startTestServer({}, 'schema_compiler_close');
  const ownAdmin = await own.admin('closing-admin');
  const before = osThreads();
  const res = await own.request('POST', '/benchmarks', {
    token: ownAdmin,
    body: inputs.benchmark({ type: 'object', properties: { time: { type: 'number' } } }),
  });
  assert.is(res.status, 201);
  assert.is(own.server.context.schemas.threads, 1);
  if (before !== null) assert.ok(osThreads()! > before, 'a worker thread runs');
  await own.close();
  assert.is(own.server.context.schemas.threads, 0);
  if (before !== null) assert.is(osThreads(), before, 'the worker thread (and its loader thread) are gone');
});

test.run();
