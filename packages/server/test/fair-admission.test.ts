/**
 * Expensive places shared fairly between clients (services/runtime/admission.ts, TimedPlaces): a
 * freed place goes to the waiting client holding the fewest, clients take turns, and a full line
 * makes room for a client with fewer requests in it. At unit level (two clients, one flooding) and
 * through HTTP: one address looping over comparisons does not make another client's comparison
 * wait behind all of its own, nor does a verified token from the same address.
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { AppError } from '../src/core/errors.ts';
import { runInScope } from '../src/db/request-scope.ts';
import { ExpensiveListAdmission, TimedPlaces } from '../src/services/runtime/admission.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';

/** Places whose holders the test releases, and the order in which requests were given one. */
function places(limit: number, maxWaiting = 1000) {
  const tp = new TimedPlaces(limit, maxWaiting, 60_000, (why) => new AppError(503, 'EXPENSIVE_LIST_BUSY', why));
  const admitted: string[] = [];
  const holders: { label: string; leave: () => void }[] = [];
  const enter = (client: string, label: string) =>
    tp.enter(undefined, client).then((leave) => {
      admitted.push(label);
      holders.push({ label, leave });
    });
  /** Gives back the place held longest. */
  const releaseOldest = async () => {
    holders.shift()!.leave();
    await new Promise((r) => setImmediate(r));
  };
  return { tp, admitted, holders, enter, releaseOldest };
}

test('two clients, one flooding: a freed place goes to the client holding fewer; they take turns, then the flood goes on', async () => {
  const { tp, admitted, enter, releaseOldest } = places(2);
  const flood = Array.from({ length: 10 }, (_, i) => enter('ip:flood', `A${i + 1}`));
  await new Promise((r) => setImmediate(r));
  assert.equal(admitted, ['A1', 'A2'], 'with no one else waiting, one client may take every place');
  const other = [1, 2, 3].map((i) => enter('ip:other', `B${i}`));
  assert.equal(tp.load, { active: 2, waiting: 11 });
  const heldByFlood: number[] = [];
  while (admitted.length < 13) {
    await releaseOldest();
    if (admitted.length <= 8) heldByFlood.push(tp.heldBy('ip:flood'));
  }
  await Promise.all([...flood, ...other]);
  assert.equal(admitted, ['A1', 'A2', 'B1', 'A3', 'B2', 'A4', 'B3', 'A5', 'A6', 'A7', 'A8', 'A9', 'A10']);
  // While the other client waited, the flooding one held one of the two places, never both.
  assert.ok(
    heldByFlood.every((n) => n <= 1),
    `places held by the flooding client: ${heldByFlood}`,
  );
  assert.equal(tp.counts, { admitted: 13, waited: 11, abandoned: 0, timedOut: 0, full: 0 });
});

test('three clients on one place: turns in the order they began to wait, each client first come, first served', async () => {
  const { admitted, enter, releaseOldest } = places(1);
  const all = [
    enter('a', 'a1'),
    enter('a', 'a2'),
    enter('a', 'a3'),
    enter('b', 'b1'),
    enter('b', 'b2'),
    enter('c', 'c1'),
    enter('a', 'a4'),
  ];
  await new Promise((r) => setImmediate(r));
  while (admitted.length < 7) await releaseOldest();
  await Promise.all(all);
  assert.equal(admitted, ['a1', 'a2', 'b1', 'c1', 'a3', 'b2', 'a4']);
});

test('a full line makes room for a client with fewer requests in it: the flooding client’s latest is refused', async () => {
  const { tp, admitted, enter, releaseOldest } = places(1, 4);
  const refusals: string[] = [];
  const track = (client: string, label: string) =>
    enter(client, label).catch((err: AppError) => {
      refusals.push(`${label} ${err.detail}`);
    });
  const all = ['A1', 'A2', 'A3', 'A4', 'A5'].map((label) => track('flood', label));
  await new Promise((r) => setImmediate(r));
  assert.equal(tp.load, { active: 1, waiting: 4 });
  all.push(track('flood', 'A6'));
  await new Promise((r) => setImmediate(r));
  assert.equal(refusals, ['A6 full'], 'the same client: the newcomer is refused, as before');
  all.push(track('other', 'B1'), track('third', 'C1'));
  await new Promise((r) => setImmediate(r));
  assert.equal(refusals, ['A6 full', 'A5 full', 'A4 full'], 'the flooding client’s latest gave way');
  assert.equal(tp.load, { active: 1, waiting: 4 });
  while (admitted.length < 5) await releaseOldest();
  await Promise.all(all);
  assert.equal(admitted, ['A1', 'A2', 'B1', 'C1', 'A3']);
  assert.is(tp.counts.full, 3);
});

test('ExpensiveListAdmission.run takes the client from the request scope, as it takes the signal', async () => {
  const admission = new ExpensiveListAdmission(1, 60_000);
  const release: (() => void)[] = [];
  const order: string[] = [];
  const asClient = (client: string, label: string) =>
    runInScope(label, new AbortController().signal, async (scope) => {
      scope.client = client;
      return admission.run(
        () =>
          new Promise<void>((resolve) => {
            order.push(label);
            release.push(resolve);
          }),
      );
    });
  const runs = [asClient('ip:a', 'a1'), asClient('ip:a', 'a2'), asClient('ip:a', 'a3'), asClient('id:x y', 'b1')];
  await new Promise((r) => setImmediate(r));
  assert.is(admission.heldBy('ip:a'), 1);
  while (order.length < 4 || release.length) {
    release.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(runs);
  assert.equal(order, ['a1', 'a2', 'b1', 'a3']);
});

let t: TestServer | undefined;

test.after(async () => {
  await t?.close();
});

test('GET /results:compare: one address looping over confidences does not make other clients wait behind all of its comparisons', async () => {
  // One place; addresses from X-Forwarded-For (a trusted proxy), so that the test can be several clients.
  t = await startTestServer({ expensiveListConcurrency: '1', expensiveListWait: '60s', statementTimeout: '0', trustProxy: 'true' }, 'fair');
  const seed = await createSeeder(t);
  const site = await seed.site();
  const flavor = await seed.flavor(site.id);
  const benchmarks = [(await seed.benchmark()).id, (await seed.benchmark()).id];
  await seed.results(
    benchmarks.flatMap((benchmark_id) =>
      [1, 2, 3, 4, 5].map((score, i) => ({
        benchmark_id,
        flavor_id: flavor.id,
        site_id: site.id,
        json: { score },
        execution_datetime: new Date(Date.UTC(2025, 0, 1, 0, i)),
      })),
    ),
  );
  // A token verified once (registering): from then on its requests are its identity's, whatever the address.
  const token = await t.user('fair-user');
  const admission = t.server.context.runtime.expensiveLists;
  const compare = (from: string, benchmark: string, confidence: number, auth?: string) =>
    fetch(`${t!.api}/results:compare?benchmark_id=${benchmark}&metric=json.score&confidence=${confidence}`, {
      headers: { 'x-forwarded-for': from, ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
    });
  const finished: string[] = [];
  const labelled = (label: string, res: Promise<Response>) =>
    res.then(async (r) => {
      finished.push(label);
      return { label, status: r.status, text: await r.text() };
    });
  const until = async (label: string, probe: () => Promise<boolean> | boolean) => {
    const deadline = Date.now() + 30_000;
    while (!(await probe())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for: ${label}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  // The first comparison takes the place and waits for the test's lock on the results.
  const locker = new pg.Client({ connectionString: t.databaseUrl });
  await locker.connect();
  await locker.query('begin');
  await locker.query('lock table result in access exclusive mode');
  const answers: Promise<{ label: string; status: number; text: string }>[] = [];
  try {
    answers.push(labelled('F1', compare('10.0.0.1', benchmarks[0]!, 0.9)));
    await until('the first holds the place', () => admission.load.active === 1);
    for (let i = 2; i <= 6; i++) answers.push(labelled(`F${i}`, compare('10.0.0.1', benchmarks[0]!, 0.9 + i / 100)));
    await until('the flood waits', () => admission.load.waiting === 5);
    answers.push(labelled('other address', compare('10.0.0.2', benchmarks[1]!, 0.95)));
    await until('the other address waits', () => admission.load.waiting === 6);
    answers.push(labelled('token', compare('10.0.0.1', benchmarks[1]!, 0.8, token)));
    await until('the token waits', () => admission.load.waiting === 7);
  } finally {
    await locker.query('rollback');
    await locker.end();
  }
  const done = await Promise.all(answers);
  for (const d of done) assert.is(d.status, 200, `${d.label}: ${d.text}`);
  console.log(`one place, a flood of 6 from one address, 2 other clients: finished ${finished.join(', ')}`);
  // Turns: F1 held the place, F2 was first in line; then each other client, before the flood goes on.
  const rank = (label: string) => finished.indexOf(label);
  assert.ok(rank('other address') <= 3 && rank('token') <= 3, `finished: ${finished}`);
  assert.ok(rank('F6') > rank('other address') && rank('F6') > rank('token'));
});

test.run();
