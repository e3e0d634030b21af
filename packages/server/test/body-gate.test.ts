/**
 * Requests with large bodies (batches of results) are admitted a few at a time (services/runtime/admission.ts):
 * the others wait, unread, and are then served in full. Unit checks of the gate, then a real server
 * with LARGE_BODY_CONCURRENCY=1 receiving several large batches at once.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request as httpRequest } from 'node:http';
import { Semaphore, LARGE_BODY_BYTES } from '../src/services/runtime/admission.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';
import { assertProblem } from './support/problem.ts';

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Polls `check` until it holds, for at most a minute: it only ends waits that would never end. */
async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check() && Date.now() < deadline) await tick();
}

test('the gate runs at most `limit` at once, first come first served, and frees a place however work ends', async () => {
  const gate = new Semaphore(2);
  const started: number[] = [];
  const releases: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const jobs = [0, 1, 2, 3, 4].map((n) =>
    gate.run(async () => {
      started.push(n);
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      if (n === 1) throw new Error('job 1 fails');
      return n;
    }),
  );
  const settled = Promise.allSettled(jobs);
  await tick();
  assert.equal(started, [0, 1]);
  assert.equal(gate.load, { active: 2, waiting: 3 });
  releases[1]!();
  await tick();
  assert.equal(started, [0, 1, 2], 'a failed job frees its place');
  releases[0]!();
  releases[2]!();
  await tick();
  assert.equal(started, [0, 1, 2, 3, 4]);
  releases[3]!();
  releases[4]!();
  const outcomes = await settled;
  assert.equal(
    outcomes.map((o) => o.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled'],
  );
  assert.is(most, 2);
  assert.equal(gate.load, { active: 0, waiting: 0 });
  assert.is(gate.peak, 2);
  assert.is(gate.waited, 3);
});

let t: TestServer;
let seed: Seeder;

test('a server admitting one large body at a time stores every batch sent at once', async () => {
  t = await startTestServer({ largeBodyConcurrency: '1' }, 'gate');
  seed = await createSeeder(t);
  const alice = await t.user('alice');
  const benchmark = (await seed.benchmark({ schema: { type: 'object', required: ['score'] } })).id;
  const flavor = (await seed.flavor((await seed.site()).id)).id;
  const padding = 'x'.repeat(1000);
  const batch = (n: number) =>
    Array.from({ length: 100 }, (_, i) => ({
      benchmark_id: benchmark,
      flavor_id: flavor,
      execution_datetime: '2024-05-01T12:00:00Z',
      json: { score: n * 100 + i, padding },
    }));
  assert.ok(JSON.stringify({ items: batch(0) }).length >= LARGE_BODY_BYTES, 'each batch is a large body');

  const responses = await Promise.all(
    [0, 1, 2, 3].map((n) => t.request('POST', '/results:batch', { token: alice, body: { items: batch(n) } })),
  );
  for (const res of responses) assert.is(res.status, 201, res.text);
  const gate = t.server.context.runtime.largeBodies.working;
  assert.is(gate.peak, 1, 'never two large bodies at once');
  assert.ok(gate.waited >= 1, `some batches waited (${gate.waited})`);
  const [{ n }] = await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ?', [benchmark]);
  assert.is(n, 400);

  // A small body does not queue behind large ones: the gate counts only large bodies.
  const waitedBefore = gate.waited;
  const one = await t.request('POST', '/results', {
    token: alice,
    query: { benchmark_id: benchmark, flavor_id: flavor, execution_datetime: '2024-05-01T12:00:00Z' },
    body: { score: 1 },
  });
  assert.is(one.status, 201, one.text);
  assert.is(gate.waited, waitedBefore);
});

test('a client sending its large body slowly holds only a reading place: other batches are stored meanwhile', async () => {
  const alice = await t.user('alice');
  const benchmark = (await seed.benchmark({ schema: { type: 'object', required: ['score'] } })).id;
  const flavor = (await seed.flavor((await seed.site()).id)).id;
  const items = Array.from({ length: 100 }, (_, i) => ({
    benchmark_id: benchmark,
    flavor_id: flavor,
    execution_datetime: '2024-05-01T12:00:00Z',
    json: { score: i, padding: 'y'.repeat(1000) },
  }));
  const text = JSON.stringify({ items });
  // Half the body, then nothing: the server waits for the rest.
  const slow = httpRequest(`${t.api}/results:batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
  });
  const slowDone = new Promise<number>((resolve) => {
    slow.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    slow.on('error', () => resolve(-1));
  });
  slow.write(text.slice(0, text.length / 2));
  const admission = t.server.context.runtime.largeBodies;
  await eventually(() => admission.reading.load.active !== 0);
  assert.is(admission.reading.load.active, 1, 'the slow body is being read');

  // Held up, it would wait for the slow body, which comes only after it: a minute ends that wait.
  const blocked = new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), 60_000).unref());
  const fast = await Promise.race([t.request('POST', '/results:batch', { token: alice, body: { items: items.slice(0, 80) } }), blocked]);
  assert.ok(fast !== 'blocked', 'another batch is not held up by the slow body');
  assert.is(fast.status, 201, fast.text);
  assert.equal(admission.working.load, { active: 0, waiting: 0 });

  slow.end(text.slice(text.length / 2));
  assert.is(await slowDone, 201);
  const [{ n }] = await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ?', [benchmark]);
  assert.is(n, 180);
  assert.equal(admission.reading.load, { active: 0, waiting: 0 });
});

test('a client that goes away in the middle of its large body frees its place, and nothing is stored', async () => {
  const alice = await t.user('alice');
  const benchmark = (await seed.benchmark({ schema: {} })).id;
  const flavor = (await seed.flavor((await seed.site()).id)).id;
  const items = Array.from({ length: 100 }, () => ({
    benchmark_id: benchmark,
    flavor_id: flavor,
    execution_datetime: '2024-05-01T12:00:00Z',
    json: { padding: 'z'.repeat(1000) },
  }));
  const text = JSON.stringify({ items });
  const gone = httpRequest(`${t.api}/results:batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
  });
  gone.on('error', () => {});
  gone.write(text.slice(0, 1000));
  const admission = t.server.context.runtime.largeBodies;
  await eventually(() => admission.reading.load.active !== 0);
  assert.is(admission.reading.load.active, 1);
  gone.destroy();
  await eventually(() => admission.reading.load.active === 0);
  assert.equal(admission.reading.load, { active: 0, waiting: 0 });
  const [{ n }] = await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ?', [benchmark]);
  assert.is(n, 0);
  const after = await t.request('POST', '/results:batch', { token: alice, body: { items } });
  assert.is(after.status, 201, after.text);
});

test('large bodies are refused as small ones are: a "__proto__" key 400, another charset 415, over BODY_LIMIT 413; no place kept', async () => {
  const alice = await t.user('alice');
  const admission = t.server.context.runtime.largeBodies;
  const padding = 'p'.repeat(LARGE_BODY_BYTES);
  const send = (text: string, contentType = 'application/json') =>
    t.request('POST', '/results:batch', { token: alice, rawBody: text, contentType });
  const proto = await send(`{"items":[],"padding":"${padding}","__proto__":{"isAdmin":true}}`);
  assertProblem(proto, 400, 'MALFORMED_JSON');
  assert.match(proto.body.detail, /__proto__/);
  const latin = await send(`{"items":[],"padding":"${padding}"}`, 'application/json; charset=latin1');
  assertProblem(latin, 415, 'UNSUPPORTED_MEDIA_TYPE');
  const tooBig = await send(`{"items":[],"padding":"${'p'.repeat(1024 * 1024)}"}`);
  assertProblem(tooBig, 413, 'BODY_TOO_LARGE');
  assert.match(tooBig.body.detail, /larger than 1048576 bytes/);
  assert.equal(admission.reading.load, { active: 0, waiting: 0 });
  assert.equal(admission.working.load, { active: 0, waiting: 0 });
});

test.after(async () => {
  await t?.close();
});

test.run();
