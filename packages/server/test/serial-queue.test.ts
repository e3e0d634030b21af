/**
 * The serial queue of background upkeep (services/runtime/serial-queue.ts): one run at a time,
 * requests while one waits sharing it, and `idle()` meaning nothing queued, running or waiting to
 * be retried.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SerialQueue } from '../src/services/runtime/serial-queue.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('runs one at a time; requests made while one has not started share it', async () => {
  const errors: unknown[] = [];
  const queue = new SerialQueue({ retryMs: 10, onError: (err) => errors.push(err) });
  const log: string[] = [];
  let running = 0;
  const work = (name: string) => async () => {
    running++;
    assert.is(running, 1, 'never two at once');
    log.push(`start ${name}`);
    await sleep(20);
    log.push(`end ${name}`);
    running--;
  };
  const a = queue.request(work('a'));
  const a2 = queue.request(work('a2')); // a has not started: shares its run
  await sleep(5);
  const b = queue.request(work('b')); // a is running: queued after it
  const c = queue.request(work('c')); // waits with b: shares its run
  assert.ok(queue.busy);
  await Promise.all([a, a2, b, c]);
  assert.equal(log, ['start a', 'end a', 'start b', 'end b']);
  assert.not.ok(queue.busy);
  assert.equal(errors, []);
});

test('an error goes to onError and the queue goes on', async () => {
  const errors: string[] = [];
  const queue = new SerialQueue({ retryMs: 10, onError: (err) => errors.push((err as Error).message) });
  let ran = false;
  await queue.request(async () => {
    throw new Error('boom');
  });
  await queue.request(async () => {
    ran = true;
  });
  assert.equal(errors, ['boom']);
  assert.ok(ran);
});

test('idle() does not resolve while a run keeps asking to be retried; close() ends it', async () => {
  const queue = new SerialQueue({ retryMs: 30, onError: () => {} });
  let runs = 0;
  const work = async () => {
    runs++;
    // e.g. a lock another process holds: asked twice, one retry.
    queue.retryLater();
    queue.retryLater();
  };
  await queue.request(work);
  assert.is(runs, 1, 'the request resolves after its own run');
  assert.ok(queue.busy, 'a retry is waiting');
  let idle = false;
  const waiting = queue.idle().then(() => {
    idle = true;
  });
  await sleep(250);
  assert.not.ok(idle, 'not idle while retries wait');
  assert.ok(runs >= 3 && runs <= 10, `retried every 30 ms, once each time: ${runs} runs`);
  await queue.close();
  await waiting;
  assert.ok(idle, 'closed: idle');
});

test('idle() resolves once the last retry has run', async () => {
  const queue = new SerialQueue({ retryMs: 20, onError: () => {} });
  let runs = 0;
  await queue.request(async () => {
    runs++;
    if (runs < 3) queue.retryLater();
  });
  await queue.idle();
  assert.is(runs, 3);
  assert.not.ok(queue.busy);
});

test('close() cancels a waiting retry; nothing runs after it', async () => {
  const queue = new SerialQueue({ retryMs: 20, onError: () => {} });
  let runs = 0;
  await queue.request(async () => {
    runs++;
    queue.retryLater();
  });
  await queue.close();
  await sleep(50);
  await queue.request(async () => {
    runs++;
  });
  await queue.idle();
  assert.is(runs, 1);
});

test.run();
