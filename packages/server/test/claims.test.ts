/**
 * Claims and hidden results: a claim hides a result from every default list, search and total;
 * rejecting or deleting the claim brings it back once nothing else hides it; approving keeps it
 * hidden. Plus the claim lists and their access rules.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, expectProblem, upload, type Seeder } from './support/seed.ts';
import { buildConfig, DEFAULTS } from '../src/config.ts';
import { program } from '../src/program.ts';

let t: TestServer;
let seed: Seeder;
let owner: string;
let claimant: string;
let other: string;
let admin: string;
let bench: { id: string };
let flavor: { id: string };

test.before(async () => {
  t = await startTestServer({}, 'claims');
  seed = await createSeeder(t);
  [owner, claimant, other, admin] = await Promise.all([t.user('owner'), t.user('claimant'), t.user('other'), t.admin()]);
  bench = await seed.benchmark({ image: 'ghcr.io/claims/bench' });
  const site = await seed.site({ name: 'Claimed site' });
  flavor = await seed.flavor(site.id);
});
test.after(async () => {
  await t.close();
});

async function newResult(json: Record<string, unknown> = {}): Promise<string> {
  const res = await upload(t, owner, { benchmark_id: bench.id, flavor_id: flavor.id }, json);
  assert.is(res.status, 201, res.text);
  return res.body.id;
}
const claim = (id: string, message: unknown = 'The numbers are impossible', token = claimant) =>
  t.request('POST', `/results/${id}:claim`, { token, body: { message } });
const review = (id: string, action: 'approve' | 'reject') => t.request('POST', `/reports/claims/${id}:${action}`, { token: admin });

/** Where the result shows: in /results (and its total), in a search, and its hidden flag. */
async function visibility(id: string) {
  const list = await t.request('GET', '/results', { query: { benchmark_id: bench.id } });
  const search = await t.request('GET', '/results:search', { query: { terms: 'claims/bench' } });
  const got = await t.request('GET', `/results/${id}`);
  assert.is(got.status, 200);
  return {
    listed: list.body.items.some((r: any) => r.id === id),
    searched: search.body.items.some((r: any) => r.id === id),
    total: list.body.total as number,
    hidden: got.body.hidden as boolean,
  };
}

test('POST /results/{id}:claim: 201 Claim; the result leaves lists, searches and totals but GET still shows it', async () => {
  const id = await newResult({ n: 1 });
  const before = await visibility(id);
  assert.equal([before.listed, before.searched, before.hidden], [true, true, false]);

  const res = await claim(id);
  assert.is(res.status, 201, res.text);
  const c = res.body;
  assert.equal(Object.keys(c).sort(), ['id', 'message', 'resource_id', 'resource_type', 'status', 'upload_datetime', 'uploader']);
  assert.equal(
    { ...c, id: undefined, upload_datetime: undefined },
    {
      id: undefined,
      message: 'The numbers are impossible',
      resource_type: 'result',
      resource_id: id,
      status: 'on_review',
      upload_datetime: undefined,
      uploader: { iss: t.issuer.issuer, sub: 'claimant', removed: false },
    },
  );
  assert.not.match(c.upload_datetime, /Z$/);

  const after = await visibility(id);
  assert.equal([after.listed, after.searched, after.hidden, after.total], [false, false, true, before.total - 1]);
  const mine = await t.request('GET', '/users/self/results', { token: owner });
  assert.is(mine.body.items.find((r: any) => r.id === id).hidden, true, 'the uploader still sees it, marked hidden');
  // Administrators see the claimant as a user, email included (the original frontend shows it).
  const seen = (await t.request('GET', `/reports/claims/${c.id}`, { token: admin })).body;
  assert.equal({ ...seen, uploader: undefined }, { ...c, uploader: undefined });
  assert.is(seen.uploader.sub, 'claimant');
  assert.is(seen.uploader.email, 'claimant@test.example');
});

test('POST /results/{id}:claim: validation, auth and unknown results', async () => {
  const id = await newResult();
  expectProblem(await t.request('POST', `/results/${id}:claim`, { token: claimant, body: {} }), 422, 'INVALID_BODY');
  expectProblem(await claim(id, ''), 422, 'INVALID_BODY');
  expectProblem(await claim(id, '   '), 422, 'INVALID_BODY');
  expectProblem(await claim(id, 'nul \u0000 inside'), 422, 'INVALID_BODY');
  expectProblem(await claim(id, 'x'.repeat(2001)), 422, 'INVALID_BODY');
  expectProblem(
    await t.request('POST', `/results/${id}:claim`, { token: claimant, body: { message: 'm', bad_field: 1 } }),
    422,
    'INVALID_BODY',
  );
  expectProblem(await t.request('POST', `/results/${id}:claim`, { body: {} }), 401, 'MISSING_TOKEN');
  expectProblem(await claim(id, 'm', await t.token('unregistered')), 403, 'NOT_REGISTERED');
  expectProblem(await claim('00000000-0000-4000-8000-000000000001'), 404, 'NOT_FOUND');
  assert.is((await visibility(id)).hidden, false, 'failed claims change nothing');
  assert.is((await claim(id, 'x'.repeat(2000))).status, 201);
});

test('rejecting the claim restores the result; approving keeps it hidden', async () => {
  const restored = await newResult();
  const c1 = (await claim(restored)).body;
  const total = (await visibility(restored)).total;
  const rejected = await review(c1.id, 'reject');
  assert.is(rejected.status, 204);
  assert.is(rejected.text, '');
  const after = await visibility(restored);
  assert.equal([after.listed, after.searched, after.hidden, after.total], [true, true, false, total + 1]);
  expectProblem(await t.request('GET', `/reports/claims/${c1.id}`, { token: admin }), 404, 'NOT_FOUND');
  expectProblem(await review(c1.id, 'reject'), 404, 'NOT_FOUND');

  const upheld = await newResult();
  const c2 = (await claim(upheld)).body;
  assert.is((await review(c2.id, 'approve')).status, 204);
  assert.is((await t.request('GET', `/reports/claims/${c2.id}`, { token: admin })).body.status, 'approved');
  assert.equal((await visibility(upheld)).listed, false);
  assert.is((await visibility(upheld)).hidden, true);
  expectProblem(await review(c2.id, 'approve'), 409, 'ALREADY_APPROVED');
  expectProblem(await review(c2.id, 'reject'), 409, 'ALREADY_APPROVED');
  assert.is((await visibility(upheld)).hidden, true);
  // deleting an upheld claim is how an administrator takes it back
  assert.is((await t.request('DELETE', `/reports/claims/${c2.id}`, { token: admin })).status, 204);
  assert.equal([(await visibility(upheld)).listed, (await visibility(upheld)).hidden], [true, false]);
});

test('a result comes back only when no open or upheld claim is left, and never when deleted', async () => {
  const id = await newResult();
  const a = (await claim(id, 'first')).body;
  const b = (await claim(id, 'second', other)).body;
  assert.is((await review(a.id, 'reject')).status, 204);
  assert.is((await visibility(id)).hidden, true, 'the second claim still hides it');
  assert.is((await review(b.id, 'approve')).status, 204);
  const c = (await claim(id, 'third')).body;
  assert.is((await t.request('DELETE', `/reports/claims/${c.id}`, { token: admin })).status, 204);
  assert.is((await visibility(id)).hidden, true, 'the upheld claim still hides it');
  assert.is((await t.request('DELETE', `/reports/claims/${b.id}`, { token: admin })).status, 204);
  assert.is((await visibility(id)).hidden, false);

  const deleted = await newResult();
  const d = (await claim(deleted)).body;
  assert.is((await t.request('DELETE', `/results/${deleted}`, { token: admin })).status, 204);
  assert.is((await review(d.id, 'reject')).status, 204);
  assert.is((await visibility(deleted)).hidden, true, 'a deleted result stays hidden');
  expectProblem(await claim(deleted), 409, 'RESULT_DELETED');
});

test('concurrent claims and reviews of one result leave a consistent hidden flag', async () => {
  const id = await newResult();
  const first = await Promise.all(Array.from({ length: 6 }, (_, i) => claim(id, `claim ${i}`)));
  assert.ok(first.every((r) => r.status === 201));
  const mixed = await Promise.all([
    ...first.map((r) => review(r.body.id, 'reject')),
    ...Array.from({ length: 3 }, (_, i) => claim(id, `late ${i}`)),
  ]);
  assert.ok(
    mixed.every((r) => r.status === 204 || r.status === 201),
    mixed.map((r) => r.status).join(),
  );
  const [row] = await seed.sql<{ hidden: boolean; claims: number }>(
    'select hidden, (select count(*)::int from claim where resource_id = result.id) as claims from result where id = ?',
    [id],
  );
  assert.equal(row, { hidden: true, claims: 3 });
  const late = mixed.filter((r) => r.status === 201);
  await Promise.all(late.map((r) => review(r.body.id, 'reject')));
  assert.is((await visibility(id)).hidden, false);
});

test('GET /reports/claims: administrators; on_review by default; status, dates, sort and pages', async () => {
  const id = await newResult();
  const open = (await claim(id, 'open one')).body;
  const upheldResult = await newResult();
  const upheld = (await claim(upheldResult, 'upheld one')).body;
  await review(upheld.id, 'approve');

  const list = await t.request('GET', '/reports/claims', { token: admin, query: { per_page: 100 } });
  assert.is(list.status, 200);
  assert.ok(list.body.items.every((c: any) => c.status === 'on_review'));
  assert.ok(list.body.items.some((c: any) => c.id === open.id));
  const times = list.body.items.map((c: any) => c.upload_datetime);
  assert.equal(times, [...times].sort(), 'default +upload_datetime');
  const approved = await t.request('GET', '/reports/claims', { token: admin, query: { status: 'approved' } });
  assert.ok(approved.body.items.every((c: any) => c.status === 'approved'));
  assert.ok(approved.body.items.some((c: any) => c.id === upheld.id));
  const byResult = await t.request('GET', '/reports/claims', { token: admin, query: { resource_id: id, upload_after: '2000-01-01' } });
  assert.equal(
    byResult.body.items.map((c: any) => c.id),
    [open.id],
  );
  const none = await t.request('GET', '/reports/claims', { token: admin, query: { upload_before: '2000-01-01' } });
  assert.equal([none.body.total, none.body.items], [0, []]);
  const desc = await t.request('GET', '/reports/claims', { token: admin, query: { sort_by: '-upload_datetime', per_page: 1 } });
  assert.is(desc.body.items[0].upload_datetime, times.at(-1));
  assert.is(desc.body.per_page, 1);
  expectProblem(await t.request('GET', '/reports/claims', { token: admin, query: { sort_by: '+message' } }), 422, 'INVALID_SORT');
  expectProblem(await t.request('GET', '/reports/claims', { token: admin, query: { status: 'rejected' } }), 422, 'INVALID_QUERY');
  expectProblem(await t.request('GET', '/reports/claims', { token: claimant }), 403, 'NOT_ADMIN');
  expectProblem(await t.request('GET', `/reports/claims/${open.id}`, { token: claimant }), 403, 'NOT_ADMIN');
  expectProblem(await t.request('POST', `/reports/claims/${open.id}:reject`, { token: claimant }), 403, 'NOT_ADMIN');
  expectProblem(await t.request('DELETE', `/reports/claims/${open.id}`), 401, 'MISSING_TOKEN');
  expectProblem(await t.request('GET', '/reports/claims/00000000-0000-4000-8000-000000000002', { token: admin }), 404, 'NOT_FOUND');
});

test('GET /results/{id}/claims: the uploader or an admin, every status by default', async () => {
  const id = await newResult();
  const a = (await claim(id, 'a')).body;
  const b = (await claim(id, 'b', other)).body;
  await review(b.id, 'approve');
  for (const token of [owner, admin]) {
    const res = await t.request('GET', `/results/${id}/claims`, { token });
    assert.is(res.status, 200);
    assert.equal(
      res.body.items.map((c: any) => c.id),
      [a.id, b.id],
    );
    assert.is(res.body.total, 2);
  }
  const onlyApproved = await t.request('GET', `/results/${id}/claims`, { token: owner, query: { status: 'approved' } });
  assert.equal(
    onlyApproved.body.items.map((c: any) => c.id),
    [b.id],
  );
  expectProblem(await t.request('GET', `/results/${id}/claims`, { token: claimant }), 403, 'NOT_UPLOADER');
  expectProblem(await t.request('GET', `/results/${id}/claims`), 401, 'MISSING_TOKEN');
  expectProblem(await t.request('GET', '/results/00000000-0000-4000-8000-000000000003/claims', { token: admin }), 404, 'NOT_FOUND');
  expectProblem(await t.request('GET', `/results/${id}/claims`, { token: owner, query: { bad_key: 1 } }), 422, 'INVALID_QUERY');
});

test('GET /users/self/claims: the claims the caller filed, every status', async () => {
  const dave = await t.user('dave');
  const id = await newResult();
  const mine = [(await claim(id, 'one', dave)).body, (await claim(id, 'two', dave)).body];
  await claim(id, 'not mine', other);
  await review(mine[1]!.id, 'approve');
  const res = await t.request('GET', '/users/self/claims', { token: dave });
  assert.is(res.status, 200);
  assert.equal(
    res.body.items.map((c: any) => c.id),
    mine.map((c) => c.id),
  );
  assert.equal(
    res.body.items.map((c: any) => c.status),
    ['on_review', 'approved'],
  );
  const open = await t.request('GET', '/users/self/claims', { token: dave, query: { status: 'on_review' } });
  assert.equal(
    open.body.items.map((c: any) => c.id),
    [mine[0]!.id],
  );
  expectProblem(await t.request('GET', '/users/self/claims'), 401, 'MISSING_TOKEN');
});

// ---------------------------------------------------------------------------------------------
// Claims cannot hide the catalogue (docs/security.md, "Claim floods")

test('POST /results/{id}:claim: at most MAX_OPEN_CLAIMS on review per user, also when filed at once; reviewed ones free room', async () => {
  const capped = await startTestServer({ maxOpenClaims: '3' }, 'claims-cap');
  try {
    const s = await createSeeder(capped);
    const [flooder, someone, boss] = await Promise.all([capped.user('flooder'), capped.user('someone'), capped.admin()]);
    const b = await s.benchmark();
    const site = await s.site();
    const f = await s.flavor(site.id);
    const ids = await s.results(
      Array.from({ length: 10 }, (_, i) => ({
        benchmark_id: b.id,
        site_id: site.id,
        flavor_id: f.id,
        json: { i },
        execution_datetime: new Date(),
      })),
    );
    const claimOn = (id: string, token = flooder) => capped.request('POST', `/results/${id}:claim`, { token, body: { message: 'flood' } });

    const burst = await Promise.all(ids.slice(0, 8).map((id) => claimOn(id)));
    assert.equal(burst.map((r) => r.status).sort(), [201, 201, 201, 422, 422, 422, 422, 422]);
    const refused = burst.find((r) => r.status === 422)!;
    expectProblem(refused, 422, 'TOO_MANY_OPEN_CLAIMS');
    assert.match(refused.body.detail, /\(3\)/);
    assert.is(refused.body.limit, 3);
    const [hidden] = await s.sql<{ n: number }>('select count(*)::int as n from result where hidden and id = any(?::uuid[])', [ids]);
    assert.is(hidden!.n, 3, 'a refused claim hides nothing');

    // Another user is not limited by the flooder's claims.
    assert.is((await claimOn(ids[8]!, someone)).status, 201);
    // A rejected claim frees its place, and so does an upheld one (no longer waiting for review).
    const filed = burst.filter((r) => r.status === 201).map((r) => r.body.id as string);
    assert.is((await capped.request('POST', `/reports/claims/${filed[0]}:reject`, { token: boss })).status, 204);
    assert.is((await claimOn(ids[9]!)).status, 201);
    expectProblem(await claimOn(ids[8]!), 422, 'TOO_MANY_OPEN_CLAIMS');
    assert.is((await capped.request('POST', `/reports/claims/${filed[1]}:approve`, { token: boss })).status, 204);
    assert.is((await claimOn(ids[8]!)).status, 201);
  } finally {
    await capped.close();
  }
});

test('MAX_OPEN_CLAIMS: default 50, 0 disables, checked; --max-open-claims / MAX_OPEN_CLAIMS on the command line', () => {
  assert.is(buildConfig({}).maxOpenClaims, 50);
  assert.is(DEFAULTS.maxOpenClaims, 50);
  assert.is(buildConfig({ maxOpenClaims: '0' }).maxOpenClaims, 0);
  assert.is(buildConfig({ maxOpenClaims: '7' }).maxOpenClaims, 7);
  for (const bad of ['-1', 'many', '1.5', '2000000'])
    assert.throws(() => buildConfig({ maxOpenClaims: bad }), /MAX_OPEN_CLAIMS must be/, bad);
  const start = program().commands.find((c) => c.name() === 'start')!;
  const option = start.options.find((o) => o.long === '--max-open-claims');
  assert.ok(option);
  assert.is(option!.envVar, 'MAX_OPEN_CLAIMS');
});

test('GET /reports/claims: uploader_iss and uploader_sub narrow the list to one claimant', async () => {
  const eve = await t.user('eve');
  const [r1, r2] = [await newResult(), await newResult()];
  const mine = [(await claim(r1, 'eve one', eve)).body, (await claim(r2, 'eve two', eve)).body];
  await claim(r1, 'not eve', other);
  await review(mine[1]!.id, 'approve');
  const list = (query: Record<string, string | number>) =>
    t.request('GET', '/reports/claims', { token: admin, query: { per_page: 100, ...query } });

  const open = await list({ uploader_iss: t.issuer.issuer, uploader_sub: 'eve' });
  assert.is(open.status, 200, open.text);
  assert.equal(
    open.body.items.map((c: any) => c.id),
    [mine[0]!.id],
  );
  // Administrators see the claimant as a user, with email (the origin frontend shows "Claimant: <email>").
  const eveUser = (await t.request('GET', '/users', { token: admin, query: { sub: 'eve' } })).body.items[0];
  assert.equal(open.body.items[0].uploader, eveUser);
  assert.equal([eveUser.iss, eveUser.email, eveUser.removed], [t.issuer.issuer, 'eve@test.example', false]);
  assert.equal(
    (await list({ uploader_sub: 'eve', status: 'approved' })).body.items.map((c: any) => c.id),
    [mine[1]!.id],
  );
  assert.equal((await list({ uploader_sub: 'eve', resource_id: r2 })).body.total, 0, 'combined with the other filters');
  assert.is((await list({ uploader_iss: 'https://elsewhere.example', uploader_sub: 'eve' })).body.total, 0);
  assert.ok((await list({ uploader_iss: t.issuer.issuer })).body.items.some((c: any) => c.uploader.sub === 'other'));
  expectProblem(await list({ uploader_sub: '' }), 422, 'INVALID_QUERY');
  expectProblem(await t.request('GET', '/reports/claims', { token: eve, query: { uploader_sub: 'eve' } }), 403, 'NOT_ADMIN');
});

test('POST /reports/claims:reject: rejects the listed claims on review at once, reports the gone and the upheld; results come back', async () => {
  const flooder = await t.user('flooder');
  const results = [await newResult(), await newResult(), await newResult()];
  const filed = [];
  for (const id of results) filed.push((await claim(id, 'spam', flooder)).body.id as string);
  const upheld = (await claim(results[0]!, 'real problem', other)).body.id as string;
  await review(upheld, 'approve');
  const unknown = '00000000-0000-4000-8000-0000000000ff';
  const bulk = (ids: unknown, token = admin) => t.request('POST', '/reports/claims:reject', { token, body: { ids } });

  const res = await bulk([filed[1], unknown, upheld, filed[0], filed[2], filed[1]]);
  assert.is(res.status, 200, res.text);
  assert.equal(res.body, { rejected: [filed[1], filed[0], filed[2]], not_found: [unknown], already_approved: [upheld] });
  assert.equal([(await visibility(results[1]!)).hidden, (await visibility(results[2]!)).hidden], [false, false]);
  assert.is((await visibility(results[0]!)).hidden, true, 'the upheld claim still hides its result');
  const left = await t.request('GET', '/reports/claims', { token: admin, query: { uploader_sub: 'flooder' } });
  assert.is(left.body.total, 0);
  assert.equal((await bulk(filed)).body, { rejected: [], not_found: filed, already_approved: [] }, 'repeating changes nothing');

  expectProblem(await bulk(filed, claimant), 403, 'NOT_ADMIN');
  expectProblem(await t.request('POST', '/reports/claims:reject', { body: { ids: filed } }), 401, 'MISSING_TOKEN');
  expectProblem(await bulk([]), 422, 'INVALID_BODY');
  expectProblem(await bulk(['not-a-uuid']), 422, 'INVALID_BODY');
  expectProblem(await bulk(Array.from({ length: 501 }, () => unknown)), 422, 'INVALID_BODY');
});

test('POST /reports/claims:reject racing single reviews and new claims of the same results: no error, hidden flags consistent', async () => {
  const results = [await newResult(), await newResult(), await newResult(), await newResult()];
  const filed: string[] = [];
  for (const id of results) for (const token of [claimant, other]) filed.push((await claim(id, 'race', token)).body.id);
  const answers = await Promise.all([
    t.request('POST', '/reports/claims:reject', { token: admin, body: { ids: filed } }),
    t.request('POST', '/reports/claims:reject', { token: admin, body: { ids: [...filed].reverse() } }),
    ...filed.filter((_, i) => i % 3 === 0).map((id) => review(id, 'reject')),
    ...filed.filter((_, i) => i % 3 === 1).map((id) => review(id, 'approve')),
    ...results.map((id) => claim(id, 'late')),
  ]);
  assert.equal([answers[0]!.status, answers[1]!.status], [200, 200], 'both bulk rejects');
  assert.ok(
    answers.every((r) => [200, 201, 204, 404, 409].includes(r.status)),
    answers.map((r) => `${r.status} ${r.body?.code ?? ''}`).join(),
  );
  const [row] = await seed.sql<{ n: number }>(
    'select count(*)::int as n from result r where r.id = any(?::uuid[]) and r.hidden <> (r.deleted or exists (select 1 from claim c where c.resource_id = r.id))',
    [results],
  );
  assert.is(row!.n, 0, 'hidden = deleted or claimed');
});

test.run();
