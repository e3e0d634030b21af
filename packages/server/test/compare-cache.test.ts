/**
 * Comparisons of large groups are remembered (services/compare/compare-cache.ts) and forgotten at every
 * write: one served by this process, and one made anywhere else (PostgreSQL notifies); one whose
 * notification was missed shows after the lifetime. Small comparisons are always computed.
 * Identical comparisons asked while one is computed share it (services/runtime/single-flight.ts).
 */
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type HttpResponse, type TestServer } from './support/harness.ts';
import { createSeeder, upload, type Seeder } from './support/seed.ts';
import { CompareCache } from '../src/services/compare/compare-cache.ts';
import { RequestAbandonedError } from '../src/db/request-scope.ts';
import { countStatements } from './support/statements.ts';

let t: TestServer;
let seed: Seeder;
let benchmarkId: string;
let flavor: { id: string; site_id: string };

async function insertBehind(n: number, options: { silent?: boolean } = {}): Promise<void> {
  await t.server.context.orm.em.fork().transactional(async (em) => {
    if (options.silent) await em.execute('set local session_replication_role = replica');
    await em.execute(
      `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
       select gen_random_uuid(), ?, ?, ?, jsonb_build_object('score', 1000 + g), now() - make_interval(secs => g), now(), ?, ?, false, false
       from generate_series(1, ?) g`,
      [benchmarkId, flavor.site_id, flavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub, n],
    );
  });
}

const matched = async () => {
  const res = await t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score' } });
  assert.is(res.status, 200, res.text);
  return res.body.matched as number;
};

/** A promise settled from outside, and whether it was asked for. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const answerOf = (matched: number) => ({ answer: { matched } as never, benchmarkName: 'b' });

/** Counts the comparison statements the server sends (the statistics statement, one per computation). */
const countCompareStatements = () => countStatements(t, 'sum(s.matched) over ()');

async function until(label: string, probe: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for: ${label}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A session of the test's own that holds the result table: every statement reading it waits until `release`. */
async function holdResults(): Promise<{ release(): Promise<void> }> {
  const locker = new pg.Client({ connectionString: t.databaseUrl });
  await locker.connect();
  await locker.query('begin');
  await locker.query('lock table result in access exclusive mode');
  return {
    release: async () => {
      await locker.query('rollback');
      await locker.end();
    },
  };
}

/** The cache's lifetime here: long enough that a comparison read a few requests later is still remembered on a loaded machine. */
const TTL_SECONDS = 10;

test.before(async () => {
  t = await startTestServer({ totalsCacheSeconds: String(TTL_SECONDS) }, 'compare_cache');
  seed = await createSeeder(t);
  benchmarkId = (await seed.benchmark()).id;
  const site = await seed.site();
  const f = await seed.flavor(site.id);
  flavor = { id: f.id, site_id: f.site_id };
  await insertBehind(1_000);
});
test.after(async () => {
  await t.close();
});

test('the cache: remembers large comparisons for its lifetime, never small ones, forgets on invalidate, keys ignore the format', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10 });
  let calls = 0;
  const computed = (n: number) => async () => {
    calls++;
    return { answer: { matched: n } as never, benchmarkName: 'b' };
  };
  const q = { benchmark_id: 'x', metric: 'json.a' } as const;
  assert.is((await cache.answer(q, computed(50))).answer.matched, 50);
  assert.is((await cache.answer({ ...q, format: 'svg' }, computed(99))).answer.matched, 50, 'the format is not part of the key');
  assert.is(calls, 1);
  assert.is((await cache.answer({ ...q, metric: 'json.b' }, computed(5))).answer.matched, 5);
  assert.is((await cache.answer({ ...q, metric: 'json.b' }, computed(6))).answer.matched, 6, 'small: always computed');
  cache.invalidate();
  assert.is((await cache.answer(q, computed(51))).answer.matched, 51);
  const late = cache.answer({ ...q, metric: 'json.c' }, async () => {
    cache.invalidate(); // a write finished while it ran
    return { answer: { matched: 70 } as never, benchmarkName: 'b' };
  });
  assert.is((await late).answer.matched, 70);
  assert.is((await cache.answer({ ...q, metric: 'json.c' }, computed(71))).answer.matched, 71, 'not kept');
});

test('the cache: parts are remembered by their key for answers that differ elsewhere; forgotten at a write; bounded by their size', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10, maxBytes: 1000 });
  let calls = 0;
  const part =
    (matched: number, bytes = 100) =>
    async () => {
      calls++;
      return { matched, bytes, label: `part ${calls}` };
    };
  const key = { benchmark_id: 'x', metric: 'json.a' };
  assert.is((await cache.part(key, part(50))).label, 'part 1');
  assert.is(
    (await cache.part({ metric: 'json.a', benchmark_id: 'x' }, part(50))).label,
    'part 1',
    'the order of the parameters does not matter',
  );
  assert.is((await cache.part({ ...key, baseline: 'b' }, part(50))).label, 'part 2');
  assert.is(cache.partCount, 2);
  assert.is((await cache.part({ ...key, metric: 'json.s' }, part(5))).label, 'part 3');
  assert.is((await cache.part({ ...key, metric: 'json.s' }, part(5))).label, 'part 4', 'small: always computed');
  // One larger than the bound is not kept; ten of a tenth each push the oldest out.
  await cache.part({ ...key, metric: 'json.big' }, part(50, 5000));
  await cache.part({ ...key, metric: 'json.big' }, part(50, 5000));
  assert.is(calls, 6);
  for (let i = 0; i < 10; i++) await cache.part({ ...key, i }, part(50));
  assert.is(cache.partCount, 10);
  assert.is((await cache.part(key, part(50))).label, 'part 17', 'the least recently used went first');
  // Forgotten at a write, and not kept when a write finished while it was computed.
  cache.invalidate();
  assert.is(cache.partCount, 0);
  const late = await cache.part(key, async () => {
    cache.invalidate();
    return { matched: 50, bytes: 1, label: 'late' };
  });
  assert.is(late.label, 'late');
  assert.is((await cache.part(key, part(50))).label, 'part 18');
  // Identical parts asked while one is computed await it.
  const slow = deferred<{ matched: number; bytes: number; label: string }>();
  const pair = [0, 1].map(() =>
    cache.part({ ...key, metric: 'json.slow' }, () => {
      calls++;
      return slow.promise;
    }),
  );
  slow.resolve({ matched: 50, bytes: 1, label: 'slow' });
  assert.equal(
    (await Promise.all(pair)).map((p) => p.label),
    ['slow', 'slow'],
  );
  assert.is(calls, 19);
});

test('the cache: answers are bounded by their size (about 2 KB a group), the least recently used forgotten first', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10, maxBytes: 100 * 2048 });
  let calls = 0;
  const withGroups = (groups: number) => async () => {
    calls++;
    return { answer: { matched: 50, groups: Array.from({ length: groups }, () => ({})) } as never, benchmarkName: 'b' };
  };
  const q = { benchmark_id: 'x', metric: 'json.a' } as const;
  await cache.answer(q, withGroups(10_000));
  await cache.answer(q, withGroups(10_000));
  assert.is(calls, 2, 'an answer of 10,000 groups is larger than the bound: not kept');
  for (let i = 0; i < 12; i++) await cache.answer({ ...q, confidence: 0.5 + i / 100 }, withGroups(9));
  assert.is(cache.size, 10, 'ten answers of 9 groups fill 100 groups’ worth');
  await cache.answer({ ...q, confidence: 0.5 }, withGroups(9));
  assert.is(calls, 15, 'the first of them was forgotten');
});

test('GET /results:compare at another confidence, direction or ranking: answered from what was read, no statement', async () => {
  t.server.context.compare.cache.invalidate();
  const statements = countCompareStatements();
  try {
    const ask = async (query: Record<string, string | number>) => {
      const res = await t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score', ...query } });
      assert.is(res.status, 200, res.text);
      return res.body;
    };
    const first = await ask({ confidence: 0.9 });
    assert.is(statements.sent, 1);
    const others = [await ask({ confidence: 0.8 }), await ask({ confidence: 0.99, better: 'lower' }), await ask({ confidence: 0.51 })];
    assert.is(statements.sent, 1, 'one statement for four confidences');
    assert.ok(others[0].groups[0].median_ci[0] >= first.groups[0].median_ci[0], 'a narrower interval at a lower confidence');
    assert.is(others[1].better, 'lower');
    t.server.context.compare.cache.invalidate();
    await ask({ confidence: 0.8 });
    assert.is(statements.sent, 2, 'after a write: read anew');
  } finally {
    statements.stop();
  }
});

test('a comparison of 1,000 results is remembered; a write made anywhere shows at once; a missed notification after the lifetime', async () => {
  assert.is(await matched(), 1_000);
  await insertBehind(5, { silent: true });
  assert.is(await matched(), 1_000, 'remembered (the write was not notified)');
  await insertBehind(1); // notified: every server forgets its comparisons
  // Delivered in milliseconds, more on a loaded machine; awaited for well under the lifetime, after
  // which the comparison would be computed again anyway.
  const deadline = Date.now() + (TTL_SECONDS * 1000) / 2;
  let now = await matched();
  while (now !== 1_006 && Date.now() < deadline) now = await matched();
  assert.is(now, 1_006);
  await insertBehind(2, { silent: true });
  assert.is(await matched(), 1_006);
  await new Promise((r) => setTimeout(r, TTL_SECONDS * 1000 + 100));
  assert.is(await matched(), 1_008, 'after TOTALS_CACHE_SECONDS');
});

test('the cache: identical comparisons asked while one is computed await it; a write lets later ones compute anew, and the earlier answer is not kept', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10 });
  const q = { benchmark_id: 'x', metric: 'json.a' } as const;
  const first = deferred<ReturnType<typeof answerOf>>();
  let calls = 0;
  const compute = (d: { promise: Promise<ReturnType<typeof answerOf>> }) => () => {
    calls++;
    return d.promise;
  };
  const before = [cache.answer(q, compute(first)), cache.answer({ ...q, format: 'csv' }, compute(first)), cache.answer(q, compute(first))];
  assert.is(calls, 1, 'one computation for three requests, whatever their format');
  cache.invalidate(); // a write finished while it ran
  const second = deferred<ReturnType<typeof answerOf>>();
  const after = [cache.answer(q, compute(second)), cache.answer({ ...q, format: 'svg' }, compute(second))];
  assert.is(calls, 2, 'requests after the write do not await the computation that began before it');
  first.resolve(answerOf(50));
  assert.equal(
    (await Promise.all(before)).map((c) => c.answer.matched),
    [50, 50, 50],
    'those that asked before the write get its answer',
  );
  second.resolve(answerOf(60));
  assert.equal(
    (await Promise.all(after)).map((c) => c.answer.matched),
    [60, 60],
  );
  assert.is(
    (await cache.answer(q, compute(deferred()))).answer.matched,
    60,
    'the answer begun after the write is kept, not the earlier one',
  );
  assert.is(calls, 2);
  assert.equal(cache.computing.counts, { started: 2, joined: 3 });
});

test('the cache: an error goes to the requests that awaited that computation only; small comparisons are shared too', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10 });
  const q = { benchmark_id: 'x', metric: 'json.a' } as const;
  const failing = deferred<ReturnType<typeof answerOf>>();
  let calls = 0;
  const both = [0, 1].map(() =>
    cache.answer(q, () => {
      calls++;
      return failing.promise;
    }),
  );
  failing.reject(new Error('statement timeout'));
  for (const r of await Promise.allSettled(both)) assert.is(r.status === 'rejected' && (r.reason as Error).message, 'statement timeout');
  assert.is(calls, 1);
  assert.is((await cache.answer(q, async () => answerOf(5))).answer.matched, 5, 'the next request computes again');
  const small = deferred<ReturnType<typeof answerOf>>();
  const pair = [0, 1].map(() =>
    cache.answer(q, () => {
      calls++;
      return small.promise;
    }),
  );
  small.resolve(answerOf(6));
  assert.equal(
    (await Promise.all(pair)).map((c) => c.answer.matched),
    [6, 6],
  );
  assert.is(calls, 2, 'a small comparison is not remembered, but shared while it runs');
});

test('the cache: when the client that started a computation goes away, the others compute it; one that goes away stops waiting', async () => {
  const cache = new CompareCache({ ttlMs: 60_000, minMatched: 10 });
  const leader = new AbortController();
  const follower = new AbortController();
  const leaving = new AbortController();
  const abandoned = deferred<ReturnType<typeof answerOf>>();
  let calls = 0;
  const first = cache.computing.run(
    'k',
    () => {
      calls++;
      return abandoned.promise;
    },
    leader.signal,
  );
  const second = cache.computing.run(
    'k',
    async () => {
      calls++;
      return answerOf(70);
    },
    follower.signal,
  );
  const third = cache.computing.run('k', async () => answerOf(0), leaving.signal);
  leaving.abort(new RequestAbandonedError());
  assert.instance(
    await third.then(
      () => null,
      (err) => err,
    ),
    RequestAbandonedError,
  );
  // The leader's client goes away: its statement is cancelled, its computation fails.
  leader.abort(new RequestAbandonedError());
  abandoned.reject(new Error('canceling statement due to user request'));
  assert.match(
    String(
      await first.then(
        () => null,
        (err) => err,
      ),
    ),
    /user request/,
  );
  assert.is((await second).answer.matched, 70, 'the follower computed it itself');
  assert.is(calls, 2);
  assert.is(cache.computing.size, 0, 'nothing left running');
});

test('8 identical comparisons at once after a write: one statement computes them, in JSON, CSV and SVG alike', async () => {
  const writer = await t.user('compare-writer');
  const wrote = await upload(t, writer, { benchmark_id: benchmarkId, flavor_id: flavor.id }, { score: 5 });
  assert.is(wrote.status, 201, wrote.text);
  const [{ n: stored }] = await seed.sql<{ n: number }>('select count(*)::int as n from result where benchmark_id = ? and not hidden', [
    benchmarkId,
  ]);
  const flights = t.server.context.compare.cache.computing.counts;
  const joined = flights.joined;
  const statements = countCompareStatements();
  // The first comparison's statement waits for the test's lock, so that all eight arrive while it runs.
  const lock = await holdResults();
  const formats = ['json', 'csv', 'svg', 'json', 'csv', 'svg', 'json', 'json'] as const;
  let answers: Promise<HttpResponse>[] = [];
  try {
    answers = formats.map((format) =>
      t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score', format } }),
    );
    // Each request has sent its statement, awaits one already sent, or waits for a place to send one.
    const admission = t.server.context.runtime.expensiveLists;
    await until(
      'all eight requests computing or waiting',
      () => statements.sent + flights.joined - joined + admission.load.waiting >= formats.length,
    );
  } finally {
    await lock.release();
  }
  const done = await Promise.all(answers);
  statements.stop();
  console.log(`8 identical comparisons after a write: ${statements.sent} statement, ${flights.joined - joined} requests awaited it`);
  for (const [i, res] of done.entries()) assert.is(res.status, 200, `${formats[i]}: ${res.text}`);
  assert.is(statements.sent, 1, 'the comparison was computed once');
  for (const [i, res] of done.entries()) {
    if (formats[i] === 'json') assert.is(res.body.matched, stored, 'the answer includes the write');
    if (formats[i] === 'csv') assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    if (formats[i] === 'svg') assert.match(res.text, /^<svg/);
  }
});

test.run();
