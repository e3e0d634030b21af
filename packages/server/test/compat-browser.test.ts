/**
 * Drop-in for the origin service's frontend, in a real browser: Debian's Chromium drives a page on
 * an origin of its own (support/frontend.ts) that makes the HTTP calls the origin's Next.js frontend
 * makes (docs/migrating.md, "The frontend's settings") against `benchmarks-server start --demo
 * --cors-origins <that origin>`, as an operator runs it. Logging in is the authorization code
 * flow with PKCE against the demo's provider, its login and consent forms filled in the browser;
 * every API call then crosses origins with a bearer token (a CORS preflight each).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { demoWebClient } from '@benchmarks/demo';
import { WEB_CLIENT_ID } from '@benchmarks/demo/issuer';
import { freePort } from '../src/db/embedded.ts';
import { launchChromium } from './support/browser.ts';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { FRONTEND_SCOPES, startFrontend, type Frontend, type LoginResult } from './support/frontend.ts';
import { demoTokens, runServer, type ServerProcess } from './support/process.ts';

let dir: string;
let demo: ServerProcess;
let api: string;
let issuer: string;
let frontend: Frontend;
/** An origin the server and the provider do not allow. */
let stranger: Frontend;
let browser: Browser;

test.before(async () => {
  frontend = await startFrontend();
  stranger = await startFrontend();
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-compat-browser-'));
  await chmod(dir, 0o755);
  const port = await freePort();
  const args = ['start', '--demo', '--port', String(port), '--data-dir', dir, '--cors-origins', frontend.origin, '--demo-seed', 'false'];
  demo = runServer(args, { DATABASE_URL: await createMigratedTestDatabase('compat-browser') });
  await demoTokens(demo);
  api = `http://127.0.0.1:${port}/api/v1`;
  issuer = /Built-in OpenID provider: (\S+)/.exec(demo.stdout())![1]!;
  browser = await launchChromium();
});
test.after(async () => {
  await browser?.close();
  demo?.child.kill('SIGTERM');
  await demo?.exited;
  await releaseTestDatabase();
  await Promise.all([frontend?.close(), stranger?.close()]);
  await rm(dir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: any;
  /** Read by the page: only headers the server exposes to scripts are readable. */
  requestId: string | null;
  /** A call the browser refused (CORS) or could not make. */
  error?: string;
}

/** A call from the page's origin, as the generated axios client makes it (its Accept, JSON bodies). */
function call(page: Page, method: string, pathAndQuery: string, options: { body?: unknown; token?: string } = {}): Promise<Answer> {
  return page.evaluate(
    async ({ url, method, body, token }) => {
      const headers: Record<string, string> = { accept: 'application/json, text/plain, */*' };
      if (token) headers.authorization = `Bearer ${token}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      try {
        const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await res.text();
        const json = /json/.test(res.headers.get('content-type') ?? '') && text !== '';
        return { status: res.status, body: json ? JSON.parse(text) : text, requestId: res.headers.get('x-request-id') };
      } catch (err) {
        return { status: 0, body: null, requestId: null, error: String(err) };
      }
    },
    { url: `${api}${pathAndQuery}`, method, body: options.body, token: options.token },
  );
}

/** The query string the browser's URLSearchParams makes of these pairs (the generated client's setSearchParams). */
function searchParams(page: Page, pairs: [string, string][]): Promise<string> {
  return page.evaluate((p) => new URLSearchParams(p).toString(), pairs);
}

interface Session {
  page: Page;
  token: string;
  login: LoginResult;
}

/** Logs `sub` in on a fresh browser profile: the frontend's login, the provider's forms filled in, the code exchanged. */
async function logIn(sub: string): Promise<Session> {
  const page = await (await browser.newContext()).newPage();
  const given = new URLSearchParams({ authority: issuer, client_id: WEB_CLIENT_ID, api, scope: FRONTEND_SCOPES });
  await page.goto(`${frontend.origin}/login?${given}`);
  await page.waitForSelector('body[data-page="login"]', { timeout: 30_000 });
  assert.ok(page.url().startsWith(`${issuer}/interaction/`), `the provider's login page: ${page.url()}`);
  await page.fill('input[name="login"]', sub);
  await page.click('button:has-text("Sign in")');
  await page.waitForSelector('body[data-page="consent"]', { timeout: 30_000 });
  await page.click('button:has-text("Allow")');
  await page.waitForURL(`${frontend.origin}/oidc-redirect?**`, { timeout: 30_000 });
  await page.waitForFunction(() => (window as { loginResult?: unknown }).loginResult, undefined, { timeout: 30_000 });
  const login = (await page.evaluate(() => (window as { loginResult?: unknown }).loginResult)) as LoginResult;
  assert.is(login.error, undefined, login.error);
  return { page, token: login.accessToken!, login };
}

let user: Session;
let admin: Session;

test('login in Chromium: authorization code + PKCE against the demo provider, token and userinfo read across origins, /users/self', async () => {
  user = await logIn('demo-user');
  const { login } = user;
  assert.ok(login.state, 'the state came back');
  assert.is(login.token!.status, 200, `the token endpoint's answer is readable from the frontend origin: ${JSON.stringify(login.token)}`);
  assert.is(login.token!.body.token_type, 'Bearer');
  assert.match(String(login.token!.body.access_token), /^eyJ[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT access token');
  assert.match(String(login.token!.body.id_token), /^eyJ/, 'an ID token');
  assert.equal([login.userinfo!.status, login.userinfo!.body.sub, login.userinfo!.body.email], [200, 'demo-user', 'user@demo.example']);
  assert.ok(login.jwksKeys! >= 1, 'the JWKS is readable');
  assert.is(login.self!.status, 404, 'not registered yet: the frontend shows its registration page');
  assert.is(login.self!.body.code, 'NOT_REGISTERED');

  admin = await logIn('demo-admin');
  assert.is(admin.login.self!.status, 200, 'the demo registered its administrator');
  assert.is(admin.login.self!.body.email, 'admin@demo.example');
});

test('login: the token endpoint refuses another origin; a wrong PKCE verifier is refused', async () => {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${stranger.origin}/`);
  const tokenEndpoint = `${issuer}/token`;
  const exchange = (origin: Page) =>
    origin.evaluate(async (url) => {
      try {
        const res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=authorization_code&code=nope&redirect_uri=x&client_id=benchmarks-web&code_verifier=x',
        });
        return { status: res.status, body: await res.json() };
      } catch (err) {
        return { error: String(err) };
      }
    }, tokenEndpoint);
  assert.match(String((await exchange(page)).error), /Failed to fetch/, 'CORS refused to the stranger');
  const allowed = await exchange(user.page);
  assert.equal([allowed.status, allowed.body?.error], [400, 'invalid_grant'], 'readable from the frontend origin');
  const fromStranger = await call(page, 'GET', '/results');
  assert.match(String(fromStranger.error), /Failed to fetch/, 'the API refuses the stranger origin too');
});

test('the demo web client: redirect URIs at the CORS origins (/oidc-redirect and /), printed; any other refused by the provider', async () => {
  assert.match(
    demo.stdout(),
    `Web login client: ${WEB_CLIENT_ID} (authorization code + PKCE; redirect URIs: ${frontend.origin}/oidc-redirect, ${frontend.origin}/)`,
  );
  const page = await (await browser.newContext()).newPage();
  const authorize = (redirectUri: string) =>
    `${issuer}/auth?${new URLSearchParams({
      client_id: WEB_CLIENT_ID,
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: FRONTEND_SCOPES,
      state: 'x',
      code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
      code_challenge_method: 'S256',
    })}`;
  for (const uri of [`${frontend.origin}/`, `${frontend.origin}/oidc-redirect`]) {
    await page.goto(authorize(uri));
    assert.is(await page.getAttribute('body', 'data-page'), 'login', uri);
  }
  for (const uri of [`${stranger.origin}/oidc-redirect`, `${frontend.origin}/elsewhere`]) {
    await page.goto(authorize(uri));
    assert.is(await page.getAttribute('body', 'data-page'), 'error', uri);
    assert.match((await page.textContent('body')) ?? '', /redirect_uri/, uri);
  }
  const withoutPkce = new URL(authorize(`${frontend.origin}/oidc-redirect`));
  withoutPkce.searchParams.delete('code_challenge');
  withoutPkce.searchParams.delete('code_challenge_method');
  await page.goto(withoutPkce.href);
  assert.match(page.url(), /^http:\/\/127\.0\.0\.1:\d+\/oidc-redirect\?error=invalid_request/, 'PKCE is required');
});

test('demoWebClient: redirect URIs from the CORS origins; BENCHMARKS_DEMO_REDIRECT_URIS instead; none for * alone', () => {
  assert.equal(demoWebClient(['http://localhost:3000/', '*'], ''), {
    redirectUris: ['http://localhost:3000/oidc-redirect', 'http://localhost:3000/'],
    corsOrigins: ['http://localhost:3000/', '*'],
  });
  assert.equal(demoWebClient(['*'], 'https://perf.example/oidc-redirect, http://127.0.0.1:3000/cb'), {
    redirectUris: ['https://perf.example/oidc-redirect', 'http://127.0.0.1:3000/cb'],
    corsOrigins: ['*'],
  });
  assert.is(demoWebClient(['*'], undefined), undefined);
  assert.is(demoWebClient([], ''), undefined);
  assert.throws(
    () => demoWebClient([], 'ftp://x/cb'),
    /BENCHMARKS_DEMO_REDIRECT_URIS must list http\(s\) URLs without a fragment, not 'ftp:\/\/x\/cb'/,
  );
  assert.throws(() => demoWebClient([], 'http://x/cb#frag'), /BENCHMARKS_DEMO_REDIRECT_URIS/);
});

test('registration and status probes: users/self, users:register, users/self:try_admin (CORS preflights with Authorization)', async () => {
  const registered = await call(user.page, 'POST', '/users:register', { token: user.token });
  assert.is(registered.status, 201, JSON.stringify(registered.body));
  assert.ok(registered.requestId, 'X-Request-Id is exposed to scripts');
  const self = await call(user.page, 'GET', '/users/self', { token: user.token });
  assert.equal([self.status, self.body.sub, self.body.email], [200, 'demo-user', 'user@demo.example']);
  assert.is((await call(user.page, 'GET', '/users/self:try_admin', { token: user.token })).status, 403);
  assert.is((await call(admin.page, 'GET', '/users/self:try_admin', { token: admin.token })).status, 204);
  assert.is((await call(user.page, 'GET', '/users/self:try_admin')).status, 401);
});

const ids: Record<string, string> = {};
const C_RAY_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    score: { type: 'number', suggestToUser: true },
    type: { type: 'string' },
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer', suggestToUser: true } } } } },
  },
  required: ['score'],
};

test('submissions: a user uploads, the admin page lists them with the email and approves or rejects each by resource_type', async () => {
  const post = async (path: string, body: unknown) => {
    const res = await call(user.page, 'POST', path, { token: user.token, body });
    assert.is(res.status, 201, `${path}: ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const benchmark = await post('/benchmarks', {
    docker_image: 'compat/c-ray',
    docker_tag: '1.0',
    url: 'https://hub.docker.com/r/compat/c-ray',
    json_schema: C_RAY_SCHEMA,
    description: 'c-ray',
  });
  assert.equal([benchmark.docker_image, benchmark.docker_tag, benchmark.status], ['compat/c-ray', '1.0', 'on_review']);
  ids.benchmark = benchmark.id;
  ids.site = (await post('/sites', { name: 'CESGA', address: 'Santiago de Compostela', description: 'a site' })).id;
  ids.flavor = (await post(`/sites/${ids.site}/flavors`, { name: 'hpc.8core-16ram', description: 'a flavor' })).id;
  ids.gpu = (await post('/tags', { name: 'gpu' })).id;
  ids.cpu = (await post('/tags', { name: 'cpu' })).id;
  const doomed = (await post('/sites', { name: 'to-reject', address: 'nowhere' })).id;

  const duplicate = await call(user.page, 'POST', '/sites', { token: user.token, body: { name: 'CESGA', address: 'x' } });
  assert.equal([duplicate.status, duplicate.body.code], [409, 'DUPLICATE'], 'the frontend shows "already exists"');

  const submits = await call(admin.page, 'GET', '/reports/submits', { token: admin.token });
  assert.is(submits.status, 200, JSON.stringify(submits.body));
  assert.equal(
    submits.body.items.map((s: any) => [s.resource_type, s.uploader.email]).sort(),
    [
      ['benchmark', 'user@demo.example'],
      ['flavor', 'user@demo.example'],
      ['site', 'user@demo.example'],
      ['site', 'user@demo.example'],
      ['tag', 'user@demo.example'],
      ['tag', 'user@demo.example'],
    ],
    '"Submitted by <email>"',
  );
  for (const field of ['page', 'pages', 'has_next', 'has_prev', 'total', 'items']) assert.ok(field in submits.body, field);
  for (const submit of submits.body.items) {
    const verb = submit.resource_id === doomed ? 'reject' : 'approve';
    const res = await call(admin.page, 'POST', `/${submit.resource_type}s/${submit.resource_id}:${verb}`, { token: admin.token });
    assert.is(res.status, 204, `${verb} ${submit.resource_type}: ${JSON.stringify(res.body)}`);
  }
  assert.equal((await call(admin.page, 'GET', '/reports/submits', { token: admin.token })).body.items, []);
  assert.is((await call(user.page, 'GET', `/sites/${doomed}`)).status, 404, 'the rejected site is gone');
});

/** score, cpu count, type, execution day in January 2024, tags. */
const RESULTS: [number, number, string, number, string[]][] = [
  [10, 4, 'AMD', 10, ['gpu', 'cpu']],
  [20, 8, 'Intel', 12, ['gpu']],
  [30, 16, 'AMD', 20, []],
  [5, 2, 'Intel', 25, ['cpu']],
];
const resultIds: string[] = [];

test('createResult: execution_datetime from toISOString(), repeated tags_ids, a JSON body; docker_image in the answer', async () => {
  for (const [score, count, type, day, tags] of RESULTS) {
    const query = await user.page.evaluate(
      ({ day, benchmark, flavor, tags }) => {
        const execDate = new Date(Date.UTC(2024, 0, day, 12, 0, 0));
        const params = new URLSearchParams([
          ['execution_datetime', execDate.toISOString()],
          ['benchmark_id', benchmark],
          ['flavor_id', flavor],
        ]);
        for (const tag of tags) params.append('tags_ids', tag);
        return params.toString();
      },
      { day, benchmark: ids.benchmark!, flavor: ids.flavor!, tags: tags.map((t) => ids[t]!) },
    );
    assert.match(query, /^execution_datetime=2024-01-\d\dT12%3A00%3A00\.000Z&/);
    const res = await call(user.page, 'POST', `/results?${query}`, {
      token: user.token,
      body: { score, type, machine: { cpu: { count } } },
    });
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.is(res.body.execution_datetime.slice(0, 10), `2024-01-${String(day).padStart(2, '0')}`);
    assert.equal([res.body.benchmark.docker_image, res.body.benchmark.docker_tag], ['compat/c-ray', '1.0']);
    assert.equal(res.body.tags.map((t: any) => t.name).sort(), [...tags].sort());
    resultIds.push(res.body.id);
  }
});

/** The scores of GET /results (or another list) with this query string, in order. */
async function scores(query: string, path = '/results'): Promise<number[]> {
  const res = await call(user.page, 'GET', `${path}?${query}`);
  assert.is(res.status, 200, `${path}?${query}: ${JSON.stringify(res.body)}`);
  return res.body.items.map((r: any) => r.json.score);
}

test('sort_by: %2B as URLSearchParams sends it, an unencoded + (a space once decoded) read as +, -, and the name columns', async () => {
  const encoded = await searchParams(user.page, [['sort_by', '+json.score']]);
  assert.is(encoded, 'sort_by=%2Bjson.score', 'what the generated client sends');
  assert.equal(await scores(encoded), [5, 10, 20, 30]);
  assert.equal(await scores('sort_by=+json.score'), [5, 10, 20, 30], 'the origin answered 422 here; both work');
  assert.equal(await scores('sort_by=-json.score'), [30, 20, 10, 5]);
  assert.equal(await scores('sort_by=-json.machine.cpu.count'), [30, 20, 10, 5]);
  for (const column of ['benchmark_name', 'site_name', 'flavor_name']) {
    const res = await call(user.page, 'GET', `/results?sort_by=%2B${column}`);
    assert.equal([res.status, res.body.total], [200, 4], column);
  }
  assert.equal(await scores(''), [10, 20, 30, 5], 'default: +execution_datetime');
});

test('filters: spaces as + (URLSearchParams) or %20 (qs), repeated filters AND-ed, text values', async () => {
  const plus = await searchParams(user.page, [['filters', 'score > 15']]);
  assert.is(plus, 'filters=score+%3E+15');
  assert.equal(await scores(`${plus}&sort_by=%2Bjson.score`), [20, 30]);
  assert.equal(await scores('filters=score%20%3E%2015&sort_by=%2Bjson.score'), [20, 30]);
  const both = await searchParams(user.page, [
    ['filters', 'score >= 10'],
    ['filters', 'machine.cpu.count < 16'],
    ['sort_by', '+json.score'],
  ]);
  assert.equal(await scores(both), [10, 20]);
  assert.equal(await scores('filters=type+%3D%3D+AMD&sort_by=%2Bjson.score'), [10, 30]);
});

test('date-only bounds, repeated tags_ids (AND), empty terms=, benchmark/site/flavor ids', async () => {
  assert.equal(await scores('execution_after=2024-01-11&execution_before=2024-01-21'), [20, 30]);
  assert.equal(await scores(`tags_ids=${ids.gpu}&tags_ids=${ids.cpu}`), [10], 'both tags');
  assert.equal(await scores(`tags_ids=${ids.gpu}&sort_by=%2Bjson.score`), [10, 20]);
  assert.equal(
    await scores(`benchmark_id=${ids.benchmark}&site_id=${ids.site}&flavor_id=${ids.flavor}&sort_by=%2Bjson.score`),
    [5, 10, 20, 30],
  );
  assert.equal(await scores('terms=&sort_by=%2Bjson.score', '/results:search'), [5, 10, 20, 30], 'empty terms: everything');
  assert.equal(await scores('terms=gpu&sort_by=%2Bjson.score', '/results:search'), [10, 20], 'a tag name');
  for (const [path, expected] of [
    ['/benchmarks:search?terms=', 1],
    ['/benchmarks:search?terms=c-ray', 1],
    ['/sites:search?terms=', 1],
    [`/sites/${ids.site}/flavors:search?terms=hpc`, 1],
    ['/tags:search?terms=', 2],
    ['/tags:search?terms=gp', 1],
  ] as const) {
    const res = await call(user.page, 'GET', path);
    assert.equal([res.status, res.body.total], [200, expected], path);
  }
  const benchmarks = await call(user.page, 'GET', '/benchmarks?sort_by=%2Bdocker_image');
  assert.equal([benchmarks.body.items[0].docker_image, benchmarks.body.items[0].docker_tag], ['compat/c-ray', '1.0']);
});

test('pagination fields the frontend reads: page, pages, has_next, next_num, has_prev, prev_num, total, items', async () => {
  const first = (await call(user.page, 'GET', '/results?per_page=3&page=1')).body;
  assert.equal(
    [first.page, first.pages, first.has_next, first.next_num, first.has_prev, first.total, first.items.length],
    [1, 2, true, 2, false, 4, 3],
  );
  const second = (await call(user.page, 'GET', '/results?per_page=3&page=2')).body;
  assert.equal([second.page, second.has_next, second.has_prev, second.prev_num, second.items.length], [2, false, true, 1, 1]);
});

test('PUT result tags by its uploader, claim, admin claim review, DELETE result', async () => {
  const [first, second, third] = resultIds;
  const put = await call(user.page, 'PUT', `/results/${third}/tags`, { token: user.token, body: { tags_ids: [ids.cpu] } });
  assert.ok(put.status >= 200 && put.status < 300, JSON.stringify(put.body));
  assert.equal(
    (await call(user.page, 'GET', `/results/${third}`)).body.tags.map((t: any) => t.name),
    ['cpu'],
  );
  const claim = await call(user.page, 'POST', `/results/${second}:claim`, { token: user.token, body: { message: 'wrong flavor' } });
  assert.is(claim.status, 201, JSON.stringify(claim.body));
  const other = await call(user.page, 'POST', `/results/${third}:claim`, { token: user.token, body: { message: 'duplicate run' } });
  assert.is(other.status, 201, JSON.stringify(other.body));
  assert.equal(await scores('sort_by=%2Bjson.score'), [5, 10], 'claimed results are hidden');
  const claims = await call(admin.page, 'GET', '/reports/claims', { token: admin.token });
  assert.is(claims.status, 200, JSON.stringify(claims.body));
  assert.equal(
    claims.body.items.map((c: any) => [c.resource_id, c.uploader.email]).sort(),
    [
      [second, 'user@demo.example'],
      [third, 'user@demo.example'],
    ].sort(),
    '"Claimant: <email>"',
  );
  assert.is((await call(admin.page, 'GET', `/reports/claims/${claim.body.id}`, { token: admin.token })).status, 200);
  assert.is((await call(admin.page, 'POST', `/reports/claims/${claim.body.id}:approve`, { token: admin.token })).status, 204);
  assert.is((await call(admin.page, 'POST', `/reports/claims/${other.body.id}:reject`, { token: admin.token })).status, 204);
  assert.equal(await scores('sort_by=%2Bjson.score'), [5, 10, 30], 'a rejected claim restores its result');
  assert.is((await call(admin.page, 'DELETE', `/results/${first}`, { token: admin.token })).status, 204);
  assert.equal(await scores('sort_by=%2Bjson.score'), [5, 30]);
});

test('site editor: PUT site and flavor bodies that echo what GET showed (id, upload_datetime, status, site_id); flavors/{id}/site', async () => {
  const site = (await call(admin.page, 'GET', '/sites?sort_by=%2Bname')).body.items.find((s: any) => s.id === ids.site);
  const putSite = await call(admin.page, 'PUT', `/sites/${site.id}`, { token: admin.token, body: { ...site, description: 'edited site' } });
  assert.ok(putSite.status >= 200 && putSite.status < 300, JSON.stringify(putSite.body));
  assert.is((await call(admin.page, 'GET', `/sites/${site.id}`)).body.description, 'edited site');
  const flavor = (await call(admin.page, 'GET', `/sites/${site.id}/flavors`)).body.items[0];
  const putFlavor = await call(admin.page, 'PUT', `/flavors/${flavor.id}`, {
    token: admin.token,
    body: { ...flavor, description: 'edited flavor' },
  });
  assert.ok(putFlavor.status >= 200 && putFlavor.status < 300, JSON.stringify(putFlavor.body));
  assert.is((await call(admin.page, 'GET', `/flavors/${flavor.id}`)).body.description, 'edited flavor');
  assert.is((await call(admin.page, 'GET', `/flavors/${flavor.id}/site`)).body.id, site.id);
  const wrong = await call(admin.page, 'PUT', `/sites/${site.id}`, { token: admin.token, body: { ...site, id: ids.flavor } });
  assert.equal([wrong.status, wrong.body.code], [422, 'INVALID_BODY'], 'an echo that differs is refused');
});

test.run();
