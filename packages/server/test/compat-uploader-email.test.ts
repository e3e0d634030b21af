/**
 * Compatibility with the origin service's frontend (docs/decisions.md): administrator views show
 * the uploader as SPEC.md's User, email included ("Submitted by <email>", "Claimant: <email>"); no
 * public response ever carries an email address. Real server, real PostgreSQL, real OpenID provider.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '@benchmarks/sdk/contract';
import { startTestServer, type TestServer } from './support/harness.ts';
import { upload } from './support/seed.ts';

let t: TestServer;
let admin: string;
let uploader: string;
let claimant: string;
const run = randomUUID().slice(0, 8);
const EMAILS = { uploader: `uploader-${run}@compat.example`, claimant: `claimant-${run}@compat.example` };

/** The items the uploader submitted (approved after the submits test), and every answer to a write. */
const made = { site: '', flavor: '', benchmark: '', tag: '', result: '', claimed: '', claim: '', watch: '', webhook: '' };
const written: string[] = [];

async function registered(sub: string, email?: string): Promise<string> {
  const token = email ? await t.token(sub, { email }) : await noEmailToken(sub);
  const res = await t.request('POST', '/users/self', { token });
  assert.ok(res.status === 200 || res.status === 201, res.text);
  return token;
}

async function noEmailToken(sub: string): Promise<string> {
  t.issuer.addAccount({ sub, entitlements: [] });
  return t.issuer.mintAccessToken({ sub });
}

async function write(method: string, path: string, token: string, body?: unknown, query?: Record<string, string>) {
  const res = await t.request(method, path, { token, body, query });
  assert.ok(res.status < 300, `${method} ${path}: ${res.text}`);
  written.push(res.text);
  return res.body;
}

test.before(async () => {
  t = await startTestServer({}, 'compat_email');
  admin = await t.admin('root');
  uploader = await registered('compat-uploader', EMAILS.uploader);
  claimant = await registered('compat-claimant', EMAILS.claimant);
  made.site = (await write('POST', '/sites', uploader, { name: `site-${run}`, address: 'x' })).id;
  made.flavor = (await write('POST', `/sites/${made.site}/flavors`, uploader, { name: 'small' })).id;
  const schema = { type: 'object', properties: { score: { type: 'number', suggestToUser: true } } };
  made.benchmark = (
    await write('POST', '/benchmarks', uploader, { docker_image: `compat/${run}`, docker_tag: '1', json_schema: schema })
  ).id;
  made.tag = (await write('POST', '/tags', uploader, { name: `tag-${run}` })).id;
});
test.after(async () => {
  await t.close();
});

const admins = (path: string, query: Record<string, string | number> = {}) => t.request('GET', path, { token: admin, query });
const userOf = async (sub: string) => (await admins('/users', { sub })).body.items[0];

test('GET /reports/submits: each item on review shows its uploader as GET /users does, email included ("Submitted by <email>")', async () => {
  const res = await admins('/reports/submits', { per_page: 100 });
  assert.is(res.status, 200, res.text);
  const user = await userOf('compat-uploader');
  assert.is(user.email, EMAILS.uploader);
  const mine = res.body.items.filter((s: any) => s.uploader.sub === 'compat-uploader');
  assert.equal(mine.map((s: any) => s.resource_type).sort(), ['benchmark', 'flavor', 'site', 'tag']);
  for (const s of mine) assert.equal(s.uploader, user);

  // Approved, the items can be used for results (and leave the submits).
  for (const path of [`/sites/${made.site}`, `/flavors/${made.flavor}`, `/benchmarks/${made.benchmark}`, `/tags/${made.tag}`]) {
    assert.is((await t.request('POST', `${path}:approve`, { token: admin })).status, 204);
  }
});

test('GET /reports/submits: the email is null for a user whose tokens carry none', async () => {
  const quiet = await registered('compat-no-email');
  await write('POST', '/tags', quiet, { name: `quiet-${run}` });
  const item = (await admins('/reports/submits', { resource_type: 'tag' })).body.items.find(
    (s: any) => s.uploader.sub === 'compat-no-email',
  );
  assert.ok(item, 'the tag is on review');
  assert.equal([item.uploader.email, item.uploader.removed], [null, false]);
});

test('results and claims: the claimant with email in GET /reports/claims ("Claimant: <email>"), the uploader in /results/{id}/uploader', async () => {
  const query = { benchmark_id: made.benchmark, flavor_id: made.flavor, tags_ids: [made.tag] };
  const results = [];
  for (const score of [1, 2]) {
    const res = await upload(t, uploader, query, { score });
    assert.is(res.status, 201, res.text);
    written.push(res.text);
    results.push(res.body.id);
  }
  [made.result, made.claimed] = results as [string, string];
  made.claim = (await write('POST', `/results/${made.claimed}:claim`, claimant, { message: 'score too good' })).id;
  made.watch = (await write('POST', '/watches', uploader, { benchmark_id: made.benchmark, metric: 'json.score' })).id;
  made.webhook = (await write('POST', '/users/self/webhooks', uploader, { url: 'http://192.0.2.1/hook' })).id;

  const claims = await admins('/reports/claims', { resource_id: made.claimed });
  assert.is(claims.status, 200, claims.text);
  assert.equal(
    claims.body.items.map((c: any) => c.id),
    [made.claim],
  );
  assert.equal(claims.body.items[0].uploader, await userOf('compat-claimant'));
  assert.is(claims.body.items[0].uploader.email, EMAILS.claimant);

  const owner = await admins(`/results/${made.claimed}/uploader`);
  assert.is(owner.status, 200, owner.text);
  assert.equal(owner.body, await userOf('compat-uploader'));
  assert.is(owner.body.email, EMAILS.uploader);
});

/** Public and user operations that answer about others: what the caller may read, the ids to use. */
const CALLER: Record<string, () => string> = {
  listResultClaims: () => uploader, // the uploader reads the claims against its result: not the claimant's email
  listSelfClaims: () => claimant,
};
const QUERY: Record<string, () => Record<string, string>> = {
  compareResults: () => ({ benchmark_id: made.benchmark, metric: 'json.score' }),
  findChanges: () => ({ benchmark_id: made.benchmark, metric: 'json.score' }),
};
/** Answers about the caller itself, which show the caller's own email by design. */
const OWN_USER = new Set(['getSelf']);

function concretePath(path: string): string {
  const kind = path.split('/')[1]!.split(':')[0]!;
  const ids: Record<string, string> = {
    sites: made.site,
    flavors: made.flavor,
    benchmarks: made.benchmark,
    tags: made.tag,
    results: made.claimed,
    watches: made.watch,
    users: made.webhook, // /users/self/webhooks/{id}: the uploader's
  };
  return path.replace('{id}', ids[kind] ?? '');
}

test('no public response carries an email address: every non-administrator GET of the contract, and every answer to a write', async () => {
  const reads = Object.values(operations).filter((op) => op.method === 'GET' && op.auth !== 'admin' && !OWN_USER.has(op.operationId));
  assert.ok(reads.length >= 20, `${reads.length} operations`);
  const leaks: string[] = [];
  for (const op of reads) {
    const token = op.auth === 'none' ? undefined : (CALLER[op.operationId] ?? (() => uploader))();
    const res = await t.request('GET', concretePath(op.path), { token, query: QUERY[op.operationId]?.() });
    assert.is(res.status, 200, `${op.operationId} ${op.path}: ${res.text}`);
    if (/@compat\.example/.test(res.text)) leaks.push(op.operationId);
  }
  // The answers were about these users' items: they name them (a real check, not an empty page).
  const claims = await t.request('GET', `/results/${made.claimed}/claims`, { token: uploader });
  assert.is(claims.body.items[0].uploader.sub, 'compat-claimant');
  assert.is((await t.request('GET', '/results', { query: { benchmark_id: made.benchmark } })).body.total, 1);
  assert.equal(leaks, []);
  for (const text of written) assert.not.match(text, /@compat\.example/, text);
  assert.ok(written.length >= 7);
});

test('POST /users:remove: administrator views show the email as null once the user is removed', async () => {
  assert.is((await t.request('POST', '/users:remove', { token: admin, query: { sub: 'compat-claimant' } })).status, 204);
  const claim = (await admins('/reports/claims', { resource_id: made.claimed })).body.items[0];
  assert.equal([claim.uploader.sub, claim.uploader.email, claim.uploader.removed], ['compat-claimant', null, true]);
});

test.run();
