/**
 * Benchmark JSON Schemas: bounded in size, checked and compiled in worker threads
 * (services/schemas/schema-compiler.ts), so that no client can stall the event loop with one.
 */
import { existsSync, readdirSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig, DEFAULTS } from '../src/config.ts';
import { countNodes } from '../src/services/schemas/json-schema.ts';
import { SchemaCompiler } from '../src/services/schemas/schema-compiler.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { inputs, problemDefect, seedCatalogue, type Catalogue } from './support/hardening.ts';

let t: TestServer;
let tClosed = false;
let c: Catalogue;
let admin: string;

test.before(async () => {
  // The largest schema compiles in about 1 s on an idle machine, several times that on a loaded one:
  // the budget is this test's choice (generous), not the default's 10 s measured against the clock.
  t = await startTestServer({}, 'schema_compiler', { schemaBudgetMs: 10 * 60_000 });
  admin = await t.admin('schema-admin');
  c = await seedCatalogue(t, admin);
});
test.after(async () => {
  if (!tClosed) await t?.close();
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

/**
 * Sends GET /health one request after another until `work` settles. Returns how many were sent and
 * answered while a worker thread was working on a schema (the compiler's `compiling` count), and how
 * many polls there were in all. On the event loop a compile answers none of them: they would wait
 * for it to end.
 */
async function healthPollsDuring(work: Promise<unknown>): Promise<{ during: number; polls: number }> {
  let settled = false;
  void work.then(
    () => (settled = true),
    () => (settled = true),
  );
  let during = 0;
  let polls = 0;
  while (!settled) {
    const sentDuring = t.server.context.schemas.compiling > 0;
    const res = await fetch(`${t.api}/health`);
    await res.arrayBuffer();
    assert.is(res.status, 200);
    polls++;
    if (sentDuring && t.server.context.schemas.compiling > 0) during++;
  }
  return { during, polls };
}

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

test('GET /health answers while the largest allowed json_schema is checked, compiled and used: the work is in a worker thread', async () => {
  const schema = largestSchema();
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  const nodes = countNodes(schema, MAX_NODES);
  assert.ok(bytes > MAX_BYTES - 1024 && bytes <= MAX_BYTES, `at the byte limit (${bytes})`);
  assert.ok(nodes > MAX_NODES - 10 && nodes <= MAX_NODES, `at the value limit (${nodes})`);
  const query = { flavor_id: c.flavor, execution_datetime: '2024-05-01T12:00:00Z' };

  // An ordering, not a duration: /health polls sent and answered while a worker thread works on the
  // schema (its check at creation, its compile at the first upload) show the event loop free during
  // that work, however slow the machine. A compile on the event loop would let none through.
  const creating = t.request('POST', '/benchmarks', { token: admin, body: inputs.benchmark(schema) });
  const checked = await healthPollsDuring(creating);
  const created = await creating;
  assert.is(created.status, 201, created.text.slice(0, 300));
  const upload = (json: unknown) =>
    t.request('POST', '/results', { token: admin, query: { ...query, benchmark_id: created.body.id }, body: json });
  const uploading = upload({ metric_1: '2024-05-01T12:00:00Z', metric_2: '2024-05-01T13:00:00+02:00' });
  const compiled = await healthPollsDuring(uploading);
  const good = await uploading;
  assert.is(good.status, 201, good.text.slice(0, 300));
  const bad = await upload({ metric_1: '2024-13-01T12:00:00Z', metric_2: 'soon', metric_3: 3 });
  refused(bad, 422, 'SCHEMA_VIOLATION', /\/metric_2.*pattern/);
  assert.equal(
    bad.body.errors.map((e: { path: string; message: string }) => `${e.path} ${e.message.split(' ').slice(0, 2).join(' ')}`),
    ['/metric_1 must match', '/metric_2 must match', '/metric_2 must match', '/metric_3 must be'],
    'every violation reported: format of metric_1, pattern and format of metric_2, type of metric_3',
  );
  console.log(
    `largest schema (${bytes} bytes, ${nodes} values): /health answered ${checked.during} of ${checked.polls} polls during its check, ` +
      `${compiled.during} of ${compiled.polls} during its compile`,
  );
  assert.ok(checked.during >= 1, `/health answered while a worker checked the schema (${checked.during} of ${checked.polls} polls)`);
  assert.ok(compiled.during >= 1, `/health answered while a worker compiled the schema (${compiled.during} of ${compiled.polls} polls)`);
  assert.is(t.server.context.schemas.compiling, 0, 'no job left');
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

test('a worker without work stops after idleMs, a job meanwhile restarts its idle clock, and the next schema starts a new one', async () => {
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
  // The idle clock runs on wall-clock time, and a loaded machine oversleeps. So each round checks
  // when its steps actually ran; a round whose steps did not fall where they prove something is run
  // again with a longer idleMs, rather than misread.
  for (let idleMs = 400; ; idleMs *= 2) {
    assert.ok(idleMs <= 60_000, 'no round ran its steps in time');
    const compiler = new SchemaCompiler({ maxBytes: MAX_BYTES, maxNodes: MAX_NODES, idleMs });
    try {
      const firstSent = performance.now();
      assert.is(await compiler.check({ type: 'object' }), null);
      const firstDone = performance.now();
      assert.is(compiler.threads, 1);
      await sleep(idleMs / 2);
      const secondSent = performance.now();
      assert.is(await compiler.check({ type: 'array' }), null);
      // The first idle clock started after the first job was sent: the worker was there for the second
      // (10 ms: timers count whole milliseconds of the event loop's clock).
      if (secondSent >= firstSent + idleMs - 10) continue;
      // Past the first job's idle time, before the second's ends: only a restarted clock keeps the worker.
      await sleep(firstDone + idleMs * 1.25 - performance.now());
      const at = performance.now();
      const threads = compiler.threads;
      if (at <= firstDone + idleMs || at >= secondSent + idleMs - 10) continue;
      assert.is(threads, 1, 'a job restarts the idle clock');
      const deadline = Date.now() + idleMs + 60_000;
      while (compiler.threads && Date.now() < deadline) await sleep(20);
      assert.is(compiler.threads, 0, 'the idle worker is gone');
      const validate = await compiler.validator({ type: 'object', required: ['x'] });
      assert.is(validate({ x: 1 }), null, 'a new worker compiled it');
      assert.is(validate({})?.[0]?.message.includes('x'), true);
      assert.is(compiler.threads, 1);
      return;
    } finally {
      await compiler.close();
    }
  }
});

/** Threads of this process (Linux), or null elsewhere. */
const osThreads = () => (existsSync('/proc/self/task') ? readdirSync('/proc/self/task').length : null);

test('closing the server terminates its schema workers: no thread is left', async () => {
  // The file's own server first: a worker of its own ending after its idle time (10 s) meanwhile
  // would take its threads from the count.
  await t.close();
  tClosed = true;
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
