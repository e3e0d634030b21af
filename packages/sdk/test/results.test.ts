import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  asc,
  AuthenticationError,
  ConflictError,
  createClient,
  NotFoundError,
  PermissionError,
  ValidationError,
  where,
  type Client,
  type UploadItem,
  type UploadOutcome,
  type UploadProgress,
} from '../src/index.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { listen, proxy } from './support/http.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let admin: Client;
let alice: Client;
let bob: Client;
let anonymous: Client;
let benchmark_id: string;
let flavor_id: string;
let site_id: string;
let gpu: string;

const SCHEMA = {
  type: 'object',
  required: ['score'],
  properties: { score: { type: 'number' }, cpu: { type: 'integer', minimum: 1 } },
};

test.before(async () => {
  t = await startTestServer('sdk_results');
  admin = createClient({ baseUrl: t.url, token: await t.admin('res-admin') });
  alice = createClient({ baseUrl: t.url, token: await t.user('res-alice') });
  bob = createClient({ baseUrl: t.url, token: await t.user('res-bob') });
  anonymous = createClient({ baseUrl: t.url });
  benchmark_id = (await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/results', container_tag: '1', json_schema: SCHEMA }))
    .id;
  const site = await admin.sites.create({ name: 'Results site', address: 'x' });
  site_id = site.id;
  flavor_id = (await admin.flavors.create(site.id, { name: 'r-flavor' })).id;
  gpu = (await admin.tags.create({ name: 'r-gpu' })).id;
});
test.after(async () => {
  await Promise.all([admin, alice, bob, anonymous].map((c) => c.close()));
  await t.close();
});

const at = (minute: number) => `2025-02-01T10:${String(minute).padStart(2, '0')}:00Z`;

test('POST /results then GET /results/{id}: the created result with its embedded catalogue', async () => {
  const created = await alice.results.create(
    { benchmark_id, flavor_id, execution_datetime: at(0), tags_ids: [gpu] },
    { score: 1.5, cpu: 8 },
  );
  assert.is(created.benchmark.id, benchmark_id);
  assert.is(created.site.id, site_id);
  assert.is(created.flavor.id, flavor_id);
  assert.equal(
    created.tags.map((x) => x.id),
    [gpu],
  );
  assert.equal(created.json, { score: 1.5, cpu: 8 });
  assert.is(created.execution_datetime, '2025-02-01T10:00:00.000');
  assert.is(created.hidden, false);
  assert.equal(await anonymous.results.get(created.id), created);
  await admin.results.delete(created.id);
});

test('POST /results: a body against the schema → ValidationError SCHEMA_VIOLATION naming each violation', async () => {
  const err = await rejects(
    () => alice.results.create({ benchmark_id, flavor_id, execution_datetime: at(1) }, { cpu: 0 }),
    ValidationError,
  );
  assert.is(err.code, 'SCHEMA_VIOLATION');
  assert.ok(err.errors.length >= 2, JSON.stringify(err.errors));
  assert.ok(err.errors.every((e) => e.in === 'json'));
  await rejects(() => anonymous.results.create({ benchmark_id, flavor_id, execution_datetime: at(1) }, { score: 1 }), Error);
  await rejects(
    () =>
      alice.results.create({ benchmark_id: '00000000-0000-4000-8000-000000000000', flavor_id, execution_datetime: at(1) }, { score: 1 }),
    NotFoundError,
  );
});

test('GET /results: iteration across pages of 2 yields every result once, in order', async () => {
  const mine: string[] = [];
  for (let i = 0; i < 7; i++) {
    mine.push((await bob.results.create({ benchmark_id, flavor_id, execution_datetime: at(20 + i) }, { score: i, cpu: 1 + i })).id);
  }
  const request = anonymous.results.list({
    benchmark_id,
    per_page: 2,
    sort_by: [asc('execution_datetime')],
    filters: [where('cpu').gte(1)],
  });
  const first = await request;
  assert.is(first.total, 7);
  assert.is(first.pages, 4);
  const seen: string[] = [];
  for await (const r of request) seen.push(r.id);
  assert.equal(seen, mine);
  const sizes: number[] = [];
  for await (const page of request.pages()) sizes.push(page.items.length);
  assert.equal(sizes, [2, 2, 2, 1]);
  assert.equal((await anonymous.results.search({ terms: ['r-flavor'], per_page: 2, benchmark_id }).toArray({ max: 100 })).length, 7);
  const own = await bob.self.results({ per_page: 2 }).toArray({ max: 100 });
  assert.equal(own.map((r) => r.id).sort(), [...mine].sort());
  for (const id of mine) await admin.results.delete(id);
});

test('PUT /results/{id}/tags: setTags by the uploader; others get PermissionError NOT_UPLOADER', async () => {
  const r = await alice.results.create({ benchmark_id, flavor_id, execution_datetime: at(2) }, { score: 2 });
  assert.is(await alice.results.setTags(r.id, [gpu]), undefined);
  assert.equal(
    (await anonymous.results.get(r.id)).tags.map((x) => x.id),
    [gpu],
  );
  const err = await rejects(() => bob.results.setTags(r.id, []), PermissionError);
  assert.is(err.code, 'NOT_UPLOADER');
  await alice.results.setTags(r.id, []);
  assert.equal((await anonymous.results.get(r.id)).tags, []);
  await admin.results.delete(r.id);
});

test('GET /results/{id}/uploader: the uploader with email, for administrators only', async () => {
  const r = await alice.results.create({ benchmark_id, flavor_id, execution_datetime: at(3) }, { score: 3 });
  const who = await admin.results.uploader(r.id);
  assert.is(who.sub, 'res-alice');
  assert.is(who.email, 'res-alice@test.example');
  await rejects(() => bob.results.uploader(r.id), PermissionError);
  await admin.results.delete(r.id);
});

test('claims: claim hides a result; claims(), self.claims(), claims.list/get/approve/reject/delete', async () => {
  const r = await alice.results.create({ benchmark_id, flavor_id, execution_datetime: at(4) }, { score: 4 });
  const claim = await bob.results.claim(r.id, 'impossible numbers');
  assert.is(claim.resource_id, r.id);
  assert.is(claim.status, 'on_review');
  assert.is((await anonymous.results.get(r.id)).hidden, true);
  assert.not.ok((await anonymous.results.list({ benchmark_id }).toArray({ max: 100 })).some((x) => x.id === r.id));

  assert.equal(
    (await alice.results.claims(r.id).toArray({ max: 10 })).map((c) => c.id),
    [claim.id],
  );
  await rejects(() => anonymous.results.claims(r.id).then((p) => p), Error);
  assert.equal(
    (await bob.self.claims().toArray({ max: 10 })).map((c) => c.id),
    [claim.id],
  );
  assert.ok((await admin.claims.list().toArray({ max: 100 })).some((c) => c.id === claim.id));
  // Administrators see the claimant as a user, with email (GET /reports/claims/{id}).
  const seen = await admin.claims.get(claim.id);
  assert.equal({ ...seen, uploader: undefined }, { ...claim, uploader: undefined });
  assert.is(seen.uploader.email, `${claim.uploader.sub}@test.example`);
  await rejects(() => bob.claims.list().then((p) => p), PermissionError);

  // Rejecting the claim restores the result.
  await admin.claims.reject(claim.id);
  assert.is((await anonymous.results.get(r.id)).hidden, false);
  await rejects(() => admin.claims.get(claim.id), NotFoundError);

  // Upholding keeps it hidden; deleting the upheld claim restores it.
  const second = await bob.results.claim(r.id, 'still wrong');
  await admin.claims.approve(second.id);
  assert.is((await admin.claims.get(second.id)).status, 'approved');
  const twice = await rejects(() => admin.claims.approve(second.id), ConflictError);
  assert.is(twice.code, 'ALREADY_APPROVED');
  assert.is((await anonymous.results.get(r.id)).hidden, true);
  await admin.claims.delete(second.id);
  assert.is((await anonymous.results.get(r.id)).hidden, false);

  // Many at once, found by claimant.
  const flood = [await bob.results.claim(r.id, 'one'), await bob.results.claim(r.id, 'two')];
  const bobs = await admin.claims.list({ uploader_sub: 'res-bob' }).toArray({ max: 10 });
  assert.equal(bobs.map((c) => c.id).sort(), flood.map((c) => c.id).sort());
  const report = await admin.claims.rejectMany(bobs.map((c) => c.id));
  assert.equal([report.rejected.length, report.not_found, report.already_approved], [2, [], []]);
  assert.is((await anonymous.results.get(r.id)).hidden, false);

  await admin.results.delete(r.id);
  const gone = await rejects(() => bob.results.claim(r.id, 'late'), ConflictError);
  assert.is(gone.code, 'RESULT_DELETED');
});

test('results.upload, batchSize 1: one POST /results each, parallel over reused connections, outcomes in order, failures do not stop it', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const recorder = await listen((req, res) => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    res.on('close', () => inFlight--);
    proxy(t.url, req, res);
  });
  const uploader = createClient({ baseUrl: recorder.url, token: await t.user('res-bulk') });
  try {
    const items: UploadItem[] = Array.from({ length: 24 }, (_, i) => ({
      benchmark_id,
      flavor_id,
      execution_datetime: at(30 + (i % 30)),
      tags_ids: i % 2 ? [gpu] : undefined,
      json: i === 5 || i === 17 ? { cpu: 2 } : { score: 100 + i },
    }));
    const progress: UploadProgress[] = [];
    const { outcomes, stored: count } = await uploader.results.upload(items, {
      batchSize: 1,
      concurrency: 4,
      onProgress: (p) => {
        progress.push(p);
        if (p.done === 3) throw new Error('a broken progress bar');
      },
    });
    assert.is(outcomes.length, 24);
    assert.equal(
      outcomes.map((o) => o.index),
      items.map((_, i) => i),
      'input order',
    );
    assert.equal(
      outcomes.filter((o) => !o.ok).map((o) => o.index),
      [5, 17],
    );
    assert.is(count, 22);
    for (const o of outcomes) {
      if (o.ok) assert.equal((await anonymous.results.get(o.id)).json, items[o.index]!.json);
      else assert.instance(o.error, ValidationError);
    }
    assert.is(progress.length, 24);
    assert.equal(progress.at(-1), { done: 24, total: 24, failed: 2 });
    assert.ok(progress.every((p, i) => p.done === i + 1));
    // Connections are reused: undici may open a few more than `concurrency` (it counts a socket busy
    // until the end of a response is processed), never one per upload.
    assert.ok(recorder.connections() <= 8, `${recorder.connections()} connections for 24 uploads`);
    assert.is(recorder.seen.length, 24, 'POSTs are not retried');
    const stored = await anonymous.results.list({ benchmark_id, filters: [where('score').gte(100)] }).toArray({ max: 100 });
    assert.is(stored.length, 22);
    assert.ok(maxInFlight > 1 && maxInFlight <= 4, `${maxInFlight} uploads at once`);
  } finally {
    await uploader.close();
    await recorder.close();
  }
  assert.equal((await alice.results.upload([], { batchSize: 1 })).outcomes, []);
  await rejects(() => alice.results.upload([], { batchSize: 1, concurrency: 0 }), TypeError);
});

test('POST /results:batch: createMany stores all or none; a refused batch is a ValidationError naming each item', async () => {
  const { ids } = await alice.results.createMany([
    { benchmark_id, flavor_id, execution_datetime: at(40), tags_ids: [gpu], json: { score: 40 } },
    { benchmark_id, flavor_id, execution_datetime: at(41), json: { score: 41, cpu: 2 } },
  ]);
  assert.is(ids.length, 2);
  assert.equal((await alice.results.get(ids[1]!)).json, { score: 41, cpu: 2 });
  const err = await rejects(
    () =>
      alice.results.createMany([
        { benchmark_id, flavor_id, execution_datetime: at(42), json: { score: 42 } },
        { benchmark_id, flavor_id, execution_datetime: at(43), json: { cpu: 0 } },
      ]),
    ValidationError,
  );
  assert.is(err.code, 'BATCH_REFUSED');
  assert.ok(
    err.errors.some((e) => e.path === '/items/1/json/score'),
    JSON.stringify(err.errors),
  );
  assert.ok(
    err.errors.some((e) => e.path === '/items/1/json/cpu'),
    JSON.stringify(err.errors),
  );
});

test('results.upload: batches in order; a refused batch reports its bad items with their own details and resends the others', async () => {
  const recorder = await listen((req, res) => proxy(t.url, req, res));
  const uploader = createClient({ baseUrl: recorder.url, token: await t.user('res-batches') });
  try {
    const missingTag = crypto.randomUUID();
    const items: UploadItem[] = Array.from({ length: 23 }, (_, i) => ({
      benchmark_id,
      flavor_id,
      execution_datetime: at(i),
      tags_ids: i === 8 ? [missingTag] : i % 2 ? [gpu] : undefined,
      json: i === 5 || i === 17 ? { cpu: 0 } : { score: 500 + i },
    }));
    const progress: UploadProgress[] = [];
    const outcomes = (await uploader.results.upload(items, { batchSize: 10, concurrency: 2, onProgress: (p) => progress.push(p) }))
      .outcomes;
    assert.equal(
      outcomes.map((o) => o.index),
      items.map((_, i) => i),
      'input order',
    );
    assert.equal(
      outcomes.filter((o) => !o.ok).map((o) => o.index),
      [5, 8, 17],
    );
    const failure = (i: number) => (outcomes[i] as Extract<UploadOutcome, { ok: false }>).error as ValidationError;
    assert.instance(failure(5), ValidationError);
    assert.is(failure(5).code, 'BATCH_REFUSED');
    assert.equal(
      failure(5)
        .errors.map((e) => [e.in, e.path])
        .sort(),
      [
        ['json', '/cpu'],
        ['json', '/score'],
      ],
    );
    assert.match(failure(5).detail, 'does not satisfy the json_schema');
    assert.equal(
      failure(8).errors.map((e) => [e.in, e.path]),
      [['body', 'tags_ids']],
    );
    assert.match(failure(8).detail, missingTag);
    assert.equal(
      failure(17)
        .errors.map((e) => [e.in, e.path])
        .sort(),
      [
        ['json', '/cpu'],
        ['json', '/score'],
      ],
    );
    for (const o of outcomes) {
      if (o.ok) assert.equal((await anonymous.results.get(o.id)).json, items[o.index]!.json);
    }
    // Batches 0-9, 10-19, 20-22; the first two refused once each, then sent again without their bad items.
    const posts = recorder.seen.filter((r) => r.method === 'POST');
    assert.ok(
      posts.every((r) => r.url === '/api/v1/results:batch'),
      posts.map((r) => r.url).join(' '),
    );
    assert.is(posts.length, 5);
    assert.equal(progress.at(-1), { done: 23, total: 23, failed: 3 });
    assert.ok(progress.every((p, i) => i === 0 || p.done >= progress[i - 1]!.done));
  } finally {
    await uploader.close();
    await recorder.close();
  }
  // A failure of the whole batch (here 401) fails every item of it and is not retried.
  const outcomes = (await anonymous.results.upload([{ benchmark_id, flavor_id, execution_datetime: at(1), json: { score: 1 } }])).outcomes;
  assert.is(outcomes.length, 1);
  assert.instance((outcomes[0] as Extract<UploadOutcome, { ok: false }>).error, AuthenticationError);
  assert.equal(await alice.results.upload([]), { total: 0, stored: 0, failed: 0, outcomes: [] });
  await rejects(() => alice.results.upload([], { batchSize: 0 }), TypeError);
  await rejects(() => alice.results.upload([], { batchSize: 501 }), TypeError);
  await rejects(() => alice.results.upload([], { concurrency: 0 }), TypeError);
});

test('results.upload: cut by body size, split on 413, one by one against a server without the batch operation', async () => {
  const read = (req: import('node:http').IncomingMessage) =>
    new Promise<string>((done) => {
      let text = '';
      req.on('data', (d) => (text += d));
      req.on('end', () => done(text));
    });
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
    res.end(JSON.stringify(body));
  };
  let n = 0;
  const sizes: number[] = [];
  const small = await listen(async (req, res) => {
    const { items } = JSON.parse(await read(req)) as { items: unknown[] };
    sizes.push(items.length);
    if (items.length > 2) return json(res, 413, { status: 413, code: 'BODY_TOO_LARGE', detail: 'too large' });
    json(res, 201, { ids: items.map(() => `id-${n++}`) });
  });
  const old = await listen(async (req, res) => {
    const body = await read(req);
    if (req.url === '/api/v1/results:batch') return json(res, 404, { status: 404, code: 'ROUTE_NOT_FOUND', detail: 'no such path' });
    json(res, 201, { id: `single-${(JSON.parse(body) as { score: number }).score}` });
  });
  const item = (score: number): UploadItem => ({
    benchmark_id,
    flavor_id,
    execution_datetime: at(0),
    json: { score, pad: 'x'.repeat(100) },
  });
  const items = Array.from({ length: 7 }, (_, i) => item(i));
  const a = createClient({ baseUrl: small.url, token: 'x' });
  const b = createClient({ baseUrl: old.url, token: 'x' });
  try {
    const outcomes = (await a.results.upload(items, { concurrency: 1 })).outcomes;
    assert.ok(outcomes.every((o) => o.ok));
    assert.equal(sizes, [7, 4, 2, 2, 3, 2, 1], 'halved until the server accepts');
    assert.equal(new Set(outcomes.map((o) => (o as { id: string }).id)).size, 7);

    sizes.length = 0;
    const cut = (await a.results.upload(items, { concurrency: 1, maxBatchBytes: 2 * JSON.stringify(items[0]).length + 10 })).outcomes;
    assert.ok(cut.every((o) => o.ok));
    assert.equal(sizes, [2, 2, 2, 1], 'batches cut by size, never over the limit');

    const singles = (await b.results.upload(items, { batchSize: 3 })).outcomes;
    assert.equal(
      singles.map((o) => (o as { id: string }).id),
      items.map((_, i) => `single-${i}`),
    );
    assert.is(old.seen.filter((r) => r.url === '/api/v1/results:batch').length <= 3, true, 'the batch route is given up on');
    assert.is(old.seen.filter((r) => r.url.startsWith('/api/v1/results?')).length, 7);
  } finally {
    await Promise.all([a.close(), b.close(), small.close(), old.close()]);
  }
});

test('results.upload: an item the body validator refuses (INVALID_BODY) fails alone, the others are stored', async () => {
  const items: UploadItem[] = [
    { benchmark_id, flavor_id, execution_datetime: at(50), json: { score: 50 } },
    { benchmark_id: 'not-a-uuid', flavor_id, execution_datetime: at(51), json: { score: 51 } },
    { benchmark_id, flavor_id, execution_datetime: at(52), json: { score: 52 } },
  ];
  const outcomes = (await alice.results.upload(items)).outcomes;
  assert.equal(
    outcomes.map((o) => o.ok),
    [true, false, true],
  );
  const err = (outcomes[1] as Extract<UploadOutcome, { ok: false }>).error as ValidationError;
  assert.instance(err, ValidationError);
  assert.is(err.code, 'INVALID_BODY');
  assert.equal(
    err.errors.map((e) => [e.in, e.path]),
    [['body', 'benchmark_id']],
  );
  assert.is(err.detail, 'benchmark_id must be a UUID');
});

test('results.upload: from an iterable, an async iterable, a file stream of NDJSON and a web stream, read as it goes', async () => {
  const item = (score: number): UploadItem => ({ benchmark_id, flavor_id, execution_datetime: at(score % 60), json: { score } });
  const storedScores = async (from: number, to: number) =>
    (await anonymous.results.list({ benchmark_id, filters: [where('score').gte(from), where('score').lt(to)] }).toArray({ max: 100 }))
      .map((r) => r.json.score as number)
      .sort((a, b) => a - b);

  // A generator: its total is known once it has been read to the end.
  function* generated() {
    for (let i = 0; i < 5; i++) yield item(1000 + i);
  }
  const progress: UploadProgress[] = [];
  const fromIterable = await alice.results.upload(generated(), { batchSize: 2, concurrency: 1, onProgress: (p) => progress.push(p) });
  assert.equal([fromIterable.total, fromIterable.stored, fromIterable.failed], [5, 5, 0]);
  assert.is(progress[0]!.total, undefined, 'not known before the end');
  assert.equal(progress.at(-1), { done: 5, total: 5, failed: 0 });
  assert.equal(await storedScores(1000, 1005), [1000, 1001, 1002, 1003, 1004]);

  // An async generator, read only as fast as batches go out.
  let read = 0;
  async function* slow() {
    for (let i = 0; i < 6; i++) {
      read++;
      await new Promise((resolve) => setTimeout(resolve, 1));
      yield item(1100 + i);
    }
  }
  const fromAsync = await alice.results.upload(slow(), { batchSize: 4 });
  assert.equal([fromAsync.total, fromAsync.stored, read], [6, 6, 6]);
  assert.equal(
    fromAsync.outcomes.map((o) => o.index),
    [0, 1, 2, 3, 4, 5],
  );

  // NDJSON in a file: blank lines skipped, a bad line fails alone, the last line needs no newline.
  const dir = await mkdtemp(join(tmpdir(), 'sdk-upload-'));
  try {
    const file = join(dir, 'results.ndjson');
    const lines = [
      JSON.stringify(item(1200)),
      '',
      '{"benchmark_id": oops',
      JSON.stringify(item(1201)),
      '[1, 2]',
      JSON.stringify(item(1202)),
    ];
    await writeFile(file, lines.join('\n'));
    const fromFile = await alice.results.upload(createReadStream(file, { highWaterMark: 16 }));
    assert.equal([fromFile.total, fromFile.stored, fromFile.failed], [5, 3, 2]);
    assert.equal(
      fromFile.outcomes.map((o) => o.ok),
      [true, false, true, false, true],
    );
    const bad = fromFile.outcomes[1] as Extract<UploadOutcome, { ok: false }>;
    assert.instance(bad.error, TypeError);
    assert.match(String(bad.error), 'line 3 is not valid JSON');
    assert.match(String((fromFile.outcomes[3] as Extract<UploadOutcome, { ok: false }>).error), 'line 5 is not a JSON object');
    assert.equal(await storedScores(1200, 1203), [1200, 1201, 1202]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  // A web stream whose chunks cut lines and characters in two; a refused item fails with its details.
  const text = `${JSON.stringify({ ...item(1300), json: { score: 1300, note: 'é€' } })}\n${JSON.stringify({ ...item(1301), json: { cpu: 0 } })}\n`;
  const bytes = new TextEncoder().encode(text);
  const web = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < bytes.length; i += 7) controller.enqueue(bytes.subarray(i, i + 7));
      controller.close();
    },
  });
  const fromWeb = await alice.results.upload(web, { batchSize: 1 });
  assert.equal([fromWeb.total, fromWeb.stored], [2, 1]);
  assert.instance((fromWeb.outcomes[1] as Extract<UploadOutcome, { ok: false }>).error, ValidationError);
  const [stored] = await anonymous.results.list({ benchmark_id, filters: [where('score').eq(1300)] }).toArray({ max: 1 });
  assert.is(stored?.json.note, 'é€');

  // What is not a source, or mixes items with bytes, is refused.
  await rejects(() => alice.results.upload('{}' as never), TypeError);
  await rejects(() => alice.results.upload(42 as never), TypeError);
  await rejects(
    () =>
      alice.results.upload(
        (async function* () {
          yield item(1400);
          yield '{}\n';
        })() as never,
      ),
    TypeError,
  );
});

test('results.upload: aborting its signal stops reading and sending, and rejects with the reason', async () => {
  const controller = new AbortController();
  const reason = new Error('cancelled by the user');
  let read = 0;
  async function* endless() {
    for (let i = 0; ; i++) {
      read++;
      if (read === 3) controller.abort(reason);
      yield { benchmark_id, flavor_id, execution_datetime: at(0), json: { score: 2000 + i } } satisfies UploadItem;
    }
  }
  try {
    await alice.results.upload(endless(), { batchSize: 1, concurrency: 1, signal: controller.signal });
    assert.unreachable('the upload resolved');
  } catch (err) {
    assert.is(err, reason);
  }
  assert.ok(read <= 4, `${read} items read`);
  await rejects(() => alice.results.upload([], { signal: AbortSignal.abort(new TypeError('before')) }), TypeError);
});

test.run();
