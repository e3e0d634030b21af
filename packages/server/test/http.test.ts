import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import ajvFormats from 'ajv-formats';
import { operations } from '@benchmarks/sdk/contract';
import { compileAll } from '../src/http/router.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { createSeeder } from './support/seed.ts';

let t: TestServer;

test.before(async () => {
  t = await startTestServer({ bodyLimit: '2048' }, 'http');
});
test.after(async () => {
  await t.close();
});

test("every schema of the contract compiles (the router compiles each on its operation's first request)", () => {
  const count = compileAll(operations);
  assert.ok(count > Object.keys(operations).length, `${count} validators`);
});

test('GET /api/v1/api-spec.json: a valid OpenAPI 3.1 document listing every operation of the contract', async () => {
  const res = await t.request('GET', '/api-spec.json');
  assert.is(res.status, 200);
  assert.is(res.body.openapi, '3.1.0');
  const result = await new Validator().validate(res.body);
  assert.ok(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
  const listed = new Set<string>();
  for (const [path, methods] of Object.entries(res.body.paths as Record<string, Record<string, { operationId: string }>>)) {
    for (const [method, op] of Object.entries(methods)) listed.add(`${method.toUpperCase()} ${path} ${op.operationId}`);
  }
  for (const op of Object.values(operations)) {
    assert.ok(listed.has(`${op.method} ${op.path} ${op.operationId}`), `${op.operationId} is in the document`);
  }
  assert.is(listed.size, Object.keys(operations).length);
  assert.is(res.body.servers[0].url, `${t.url}/api/v1`);
  assert.ok(res.body.components.schemas.Problem, 'errors are documented as Problem');
  assert.match(res.body.info.description, /terms of use/);
});

test('GET /api-spec.json: every schema compiles as strict JSON Schema 2020-12; a real /results:compare answer matches its schema', async () => {
  const doc = (await t.request('GET', '/api-spec.json')).body;
  const ajv = new Ajv2020({ strict: true, strictTypes: false, strictRequired: false });
  ajvFormats.default(ajv);
  ajv.addFormat('date-bound', true);
  // strictRequired: false for `anyOf` branches that require a field of their parent (a field or its
  // deprecated alias). The document is registered, so `#/components/schemas/…` resolves: its
  // top-level fields declared as keywords, the schemas in it compiled strictly by their pointers.
  for (const key of Object.keys(doc)) ajv.addKeyword(key);
  ajv.addSchema(doc, 'doc');
  const pointers = Object.keys(doc.components.schemas).map((name) => `/components/schemas/${name}`);
  const schemasIn = (at: string, content: Record<string, unknown> = {}) =>
    Object.keys(content).map((type) => `${at}/${type.replace('/', '~1')}/schema`);
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const at = `/paths/${path.replaceAll('/', '~1')}/${method}`;
      pointers.push(...op.parameters.map((_: unknown, i: number) => `${at}/parameters/${i}/schema`));
      pointers.push(...schemasIn(`${at}/requestBody/content`, op.requestBody?.content));
      for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
        pointers.push(...schemasIn(`${at}/responses/${status}/content`, response.content));
        for (const name of Object.keys(response.headers ?? {})) pointers.push(`${at}/responses/${status}/headers/${name}/schema`);
      }
    }
  }
  assert.ok(pointers.length > 300, `${pointers.length} schemas`);
  for (const pointer of pointers) {
    try {
      assert.ok(ajv.getSchema(`doc#${pointer}`), pointer);
    } catch (e) {
      assert.unreachable(`${pointer}: ${(e as Error).message}`);
    }
  }

  const seed = await createSeeder(t);
  const benchmark = await seed.benchmark({ schema: { type: 'object', properties: { score: { type: 'number' } } } });
  const site = await seed.site();
  const [base, other] = [await seed.flavor(site.id), await seed.flavor(site.id)];
  await seed.results(
    [base, other].flatMap((f, k) =>
      [1, 2, 3, 4, 5, 6].map((v) => ({
        benchmark_id: benchmark.id,
        flavor_id: f.id,
        site_id: site.id,
        json: { score: v * (k + 1) },
        execution_datetime: new Date(Date.UTC(2024, 0, v)),
      })),
    ),
  );
  const res = await t.request('GET', '/results:compare', {
    query: { benchmark_id: benchmark.id, metric: 'json.score', baseline: base.id },
  });
  assert.is(res.status, 200, res.text);
  const group = res.body.groups.find((g: any) => g.flavor.id === other.id);
  assert.ok(group.median_ci && group.mean_ci && group.vs_baseline.ratio_ci, 'every interval of the answer is there');
  const validate = ajv.getSchema('doc#/paths/~1results:compare/get/responses/200/content/application~1json/schema')!;
  assert.ok(validate(res.body), JSON.stringify(validate.errors));
  assert.not.ok(validate({ ...res.body, groups: [{ ...group, median_ci: [1, 2, 3] }] }), 'an interval is a pair');
});

test('docs/openapi.json: redocly lint (recommended rules) finds no error and no warning', async () => {
  const cli = fileURLToPath(import.meta.resolve('@redocly/cli/bin/cli.js'));
  const file = fileURLToPath(new URL('../../../docs/openapi.json', import.meta.url));
  const args = [cli, 'lint', file, '--extends=recommended', '--format=json'];
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off' };
  // lint exits 1 on errors: its report is still on stdout.
  const { stdout } = await promisify(execFile)(process.execPath, args, { env }).catch((e: { stdout: string }) => e);
  const problems = JSON.parse(stdout).problems.map((p: any) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
  assert.equal(problems, []);
});

test('GET /api-spec.json (root): the same document', async () => {
  const root = await fetch(`${t.url}/api-spec.json`);
  const api = await t.request('GET', '/api-spec.json');
  assert.equal(await root.json(), api.body);
});

test('the OpenAPI servers URL follows the public base URL behind a trusted proxy', async () => {
  const t2 = await startTestServer({ trustProxy: 'true' }, 'proxy');
  try {
    const res = await fetch(`${t2.api}/api-spec.json`, {
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'bench.example.org', 'x-forwarded-prefix': '/perf' },
    });
    assert.is(((await res.json()) as any).servers[0].url, 'https://bench.example.org/perf/api/v1');
    // Without trust, forwarded headers are ignored.
    const untrusted = await fetch(`${t.api}/api-spec.json`, { headers: { 'x-forwarded-host': 'evil.example.org' } });
    assert.is(((await untrusted.json()) as any).servers[0].url, `${t.url}/api/v1`);
  } finally {
    await t2.close();
  }
});

test('GET /: Swagger UI (koa2-swagger-ui) whose every asset its policy allows is served locally', async () => {
  const res = await fetch(`${t.url}/`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/html/);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /frame-ancestors 'none'/);
  const styleSources = /style-src ([^;]*)/.exec(csp)?.[1]?.trim().split(/\s+/);
  const html = await res.text();
  assert.match(html, /\/api\/v1\/api-spec\.json/);
  const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(urls.length >= 4, 'two scripts, a style sheet, an icon');
  for (const url of urls) {
    if (/^https?:/.test(url)) {
      // The template's link to web fonts on a CDN: style sheets come from 'self' only, so the
      // browser never loads it (secrets.test.ts and swagger-ui.test.ts check it in Chromium).
      assert.match(url, /^https:\/\/fonts\.googleapis\.com\//, `${url} is the template's web fonts`);
      assert.equal(styleSources, ["'self'", "'unsafe-inline'"], 'the policy refuses style sheets from elsewhere');
      continue;
    }
    const asset = await fetch(new URL(url, t.url));
    assert.is(asset.status, 200, url);
    assert.ok((await asset.arrayBuffer()).byteLength > 100, `${url} has content`);
  }
  const head = await fetch(`${t.url}/`, { method: 'HEAD' });
  assert.is(head.status, 200);
});

test('the Swagger UI page is at / only, for GET and HEAD: other paths ending in / and other methods are not it', async () => {
  for (const path of ['/nothing/', '/api/v1/', '/swagger-ui/assets/', '/swagger-ui/assets/__proto__', '/swagger-ui/assets/index.html']) {
    const res = await fetch(`${t.url}${path}`);
    assert.is(res.status, 404, path);
    assert.match(res.headers.get('content-type') ?? '', /problem\+json/, path);
  }
  const post = await fetch(`${t.url}/`, { method: 'POST' });
  assert.ok(post.status === 404 || post.status === 405, `POST /: ${post.status}`);
  assert.match(post.headers.get('content-type') ?? '', /problem\+json/);
});

test('GET /terms-of-use: the terms users accept by registering, linked from the API description', async () => {
  const res = await fetch(`${t.url}/terms-of-use`);
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/markdown/);
  assert.match(await res.text(), /# Terms of use/);
  const spec = await t.request('GET', '/api-spec.json');
  assert.equal(spec.body.info['x-terms-of-use'], { version: '2024-01', url: '/terms-of-use' });
});

test('GET /health answers without the database; GET /ready checks it and the migrations', async () => {
  const health = await t.request('GET', '/health');
  assert.is(health.status, 200);
  assert.is(health.body.status, 'ok');
  const ready = await t.request('GET', '/ready');
  assert.equal(ready.body, { status: 'ready', database: 'ok', migrations: 'applied' });
});

test('unknown route: 404 problem+json', async () => {
  assertProblem(await t.request('GET', '/no-such-thing'), 404, 'ROUTE_NOT_FOUND');
  const outside = await fetch(`${t.url}/not/the/api`);
  assert.is(outside.status, 404);
  assert.match(outside.headers.get('content-type') ?? '', /problem\+json/);
});

test('wrong method: 405 with Allow', async () => {
  const res = await t.request('DELETE', '/users/self');
  assertProblem(res, 405, 'METHOD_NOT_ALLOWED');
  assert.match(res.headers.get('allow') ?? '', /GET/);
  assert.match(res.headers.get('allow') ?? '', /POST/);
});

test('bodies: malformed JSON 400, not JSON 415, over the limit 413, missing 422; nothing stored', async () => {
  const token = await t.user('http-body');
  assertProblem(await t.request('POST', '/sites', { token, rawBody: '{"name": "x",' }), 400, 'MALFORMED_JSON');
  assertProblem(
    await t.request('POST', '/sites', { token, rawBody: 'name=x', contentType: 'application/x-www-form-urlencoded' }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  assertProblem(await t.request('POST', '/sites', { token, rawBody: 'name: x', contentType: 'text/yaml' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  const big = JSON.stringify({ name: 'big', address: 'x'.repeat(4096) });
  assertProblem(await t.request('POST', '/sites', { token, rawBody: big }), 413, 'BODY_TOO_LARGE');
  assertProblem(await t.request('POST', '/sites', { token }), 422, 'BODY_REQUIRED');
  const listed = await t.request('GET', '/sites', { query: { status: 'on_review' } });
  assert.is(listed.body.total, 0, 'no rejected request stored anything');
});

test('bodies: a "__proto__" key anywhere is 400, another charset 415, gzip is read; small and chunked bodies alike', async () => {
  const token = await t.user('http-body');
  for (const rawBody of ['{"name":"x","__proto__":{"isAdmin":true}}', '{"name":"x","a":[{"b":{"__proto__":null}}]}']) {
    const res = await t.request('POST', '/sites', { token, rawBody });
    assertProblem(res, 400, 'MALFORMED_JSON');
    assert.match(res.body.detail, /__proto__/);
  }
  for (const charset of ['latin1', 'utf-16', 'x-unknown']) {
    const res = await t.request('POST', '/sites', { token, rawBody: '{"name":"x"}', contentType: `application/json; charset=${charset}` });
    assertProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    assert.match(res.body.detail, new RegExp(`UTF-8 JSON, not ${charset}`));
  }
  const utf8 = await t.request('POST', '/sites', { token, rawBody: '{}', contentType: 'application/json; charset=UTF-8' });
  assertProblem(utf8, 422, 'INVALID_BODY');
  // Sent chunked (no Content-Length), a body goes through the large-body gate: the same reader.
  const chunked = async (text: string, headers: Record<string, string> = {}) =>
    fetch(`${t.api}/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: new Blob([text]).stream(),
      duplex: 'half',
    } as RequestInit);
  const proto = await chunked('{"name":"x","__proto__":{}}');
  assert.is(proto.status, 400);
  assert.match(((await proto.json()) as { detail: string }).detail, /__proto__/);
  const big = await chunked(JSON.stringify({ name: 'big', address: 'x'.repeat(4096) }));
  assert.is(big.status, 413);
  assert.is(((await big.json()) as { code: string }).code, 'BODY_TOO_LARGE');
  const gzipped = await fetch(`${t.api}/sites`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync('{"name":"x","__proto__":{}}'),
  });
  assert.is(gzipped.status, 400, 'a gzip body is inflated, then parsed like any other');
  assert.match(((await gzipped.json()) as { detail: string }).detail, /__proto__/);
  const listed = await t.request('GET', '/sites', { query: { status: 'on_review' } });
  assert.is(listed.body.total, 0, 'no refused body stored anything');
});

test('unknown query parameter: 422 naming it', async () => {
  const res = await t.request('GET', '/health', { query: { verbose: 'yes' } });
  assertProblem(res, 422, 'INVALID_QUERY');
  assert.equal(res.body.errors, [{ in: 'query', path: 'verbose', message: "unknown query parameter 'verbose'" }]);
  assert.is(res.body.detail, "The query parameters are invalid: unknown query parameter 'verbose'.");
});

/** GET `path?query` as sent (no encoding of ours), parsed. */
async function getRaw(pathAndQuery: string, token?: string) {
  const res = await fetch(`${t.api}${pathAndQuery}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    body: /json/.test(res.headers.get('content-type') ?? '') ? JSON.parse(text) : text,
  };
}

const UNKNOWN_BENCHMARK = '00000000-0000-4000-8000-000000000000';

test('numbers in query parameters must be plain decimal, on every endpoint: 0x10, a leading space, 1e1, +5, 1.0 are 422 naming the parameter and the value', async () => {
  const INTEGER = "must be a decimal integer (digits, optionally after '-')";
  const NUMBER = 'must be a decimal number as JSON writes one (0.95, -2, 9.5e-1)';
  const compare = `/results:compare?benchmark_id=${UNKNOWN_BENCHMARK}&metric=json.score`;
  const cases: [string, string, string, string][] = [
    ['/sites?page=0x10', 'page', '0x10', INTEGER],
    ['/benchmarks?page=%201', 'page', ' 1', INTEGER],
    ['/tags?page=1e1', 'page', '1e1', INTEGER],
    ['/results?per_page=%2B5', 'per_page', '+5', INTEGER],
    ['/results:search?terms=x&page=1.0', 'page', '1.0', INTEGER],
    ['/sites:search?terms=a&per_page=5%20', 'per_page', '5 ', INTEGER],
    ['/sites?page=', 'page', '', INTEGER],
    ['/sites?page=1&page=0b1', 'page', '0b1', INTEGER],
    [`${compare}&min_samples=0o7`, 'min_samples', '0o7', INTEGER],
    [`${compare}&confidence=.95`, 'confidence', '.95', NUMBER],
    [`${compare}&confidence=Infinity`, 'confidence', 'Infinity', NUMBER],
    [`${compare}&confidence=0x1`, 'confidence', '0x1', NUMBER],
  ];
  for (const [request, parameter, value, syntax] of cases) {
    const res = await getRaw(request);
    assertProblem(res, 422, 'INVALID_QUERY');
    const message = `${syntax}, not ${JSON.stringify(value)}`;
    assert.equal(res.body.errors, [{ in: 'query', path: parameter, message }], request);
    assert.is(res.body.detail, `The query parameters are invalid: ${parameter} ${message}.`, request);
  }
  const users = await getRaw('/users?per_page=1e2', await t.admin('numbers-admin'));
  assertProblem(users, 422, 'INVALID_QUERY');
  assert.equal(users.body.errors, [{ in: 'query', path: 'per_page', message: `${INTEGER}, not "1e2"` }], 'an administrator list too');
  const huge = await getRaw(`${compare}&confidence=1e999`);
  assertProblem(huge, 422, 'INVALID_QUERY');
  assert.equal(huge.body.errors, [{ in: 'query', path: 'confidence', message: 'must be a finite number, not "1e999"' }]);
});

test('numbers in query parameters: plain decimal is read as before (leading zeros, a minus sign, JSON exponents for numbers)', async () => {
  const page = await getRaw('/sites?page=007&per_page=05');
  assert.is(page.status, 200, page.text);
  assert.is(page.body.page, 7);
  assert.is(page.body.per_page, 5);
  const negative = await getRaw('/tags?page=-1');
  assertProblem(negative, 422, 'INVALID_QUERY');
  assert.equal(negative.body.errors, [{ in: 'query', path: 'page', message: 'must be >= 1' }], 'a bound, not the syntax');
  // A number parameter takes JSON's syntax, exponent included: past validation, the benchmark is unknown.
  for (const confidence of ['0.95', '9.5e-1', '95E-2']) {
    const res = await getRaw(
      `/results:compare?benchmark_id=${UNKNOWN_BENCHMARK}&metric=json.score&confidence=${confidence}&min_samples=010`,
    );
    assertProblem(res, 404, 'NOT_FOUND');
  }
});

test('numbers in query parameters, property: GET /tags answers 200 exactly when page is an optional minus and digits between 1 and 1,000,000', async () => {
  const candidate = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.stringMatching(/^[-+ .eExob0-9_]{0,8}$/),
    fc.integer({ min: -10, max: 2_000_000 }).map(String),
  );
  await fc.assert(
    fc.asyncProperty(candidate, async (page) => {
      const res = await getRaw(`/tags?per_page=1&page=${encodeURIComponent(page)}`);
      const valid = /^-?\d+$/.test(page) && Number(page) >= 1 && Number(page) <= 1_000_000;
      assert.is(res.status, valid ? 200 : 422, `page=${JSON.stringify(page)}: ${res.text}`);
      if (valid) assert.is(res.body.page, Number(page));
      else assert.is(res.body.code, 'INVALID_QUERY');
    }),
    { numRuns: 150 },
  );
});

test('security headers on API responses; CORS is off by default', async () => {
  const res = await fetch(`${t.api}/health`, { headers: { origin: 'https://app.example.org' } });
  assert.is(res.headers.get('x-content-type-options'), 'nosniff');
  assert.is(res.headers.get('access-control-allow-origin'), null);
});

const list = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);

test('CORS for configured origins: preflight, readable headers and errors, other origins get nothing', async () => {
  const t2 = await startTestServer({ corsOrigins: 'https://app.example.org,https://other.example.org' }, 'cors');
  try {
    const origin = 'https://app.example.org';
    const pre = await fetch(`${t2.api}/results:batch`, {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type,idempotency-key',
      },
    });
    assert.is(pre.status, 204);
    assert.is(pre.headers.get('access-control-allow-origin'), origin);
    assert.equal(list(pre.headers.get('access-control-allow-methods')), ['get', 'head', 'post', 'put', 'patch', 'delete', 'options']);
    assert.equal(list(pre.headers.get('access-control-allow-headers')), [
      'authorization',
      'content-type',
      'accept',
      'idempotency-key',
      'x-request-id',
    ]);
    assert.is(pre.headers.get('access-control-max-age'), '600');
    assert.is(pre.headers.get('access-control-allow-credentials'), null, 'no credentials: bearer tokens, no cookies');
    assert.ok(list(pre.headers.get('vary')).includes('origin'));

    const exposed = [
      'www-authenticate',
      'retry-after',
      'allow',
      'idempotent-replayed',
      'ratelimit-policy',
      'ratelimit-limit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'warning',
      'x-request-id',
    ];
    const health = await fetch(`${t2.api}/health`, { headers: { origin } });
    assert.is(health.status, 200);
    assert.is(health.headers.get('access-control-allow-origin'), origin);
    assert.ok(list(health.headers.get('vary')).includes('origin'), 'caches keep answers per origin');
    assert.equal(list(health.headers.get('access-control-expose-headers')), exposed);
    assert.is(health.headers.get('access-control-allow-credentials'), null);
    // An error is readable by the page too: its problem and WWW-Authenticate.
    const denied = await fetch(`${t2.api}/users/self`, { headers: { origin } });
    assert.is(denied.status, 401);
    assert.is(denied.headers.get('access-control-allow-origin'), origin);
    assert.equal(list(denied.headers.get('access-control-expose-headers')), exposed);
    const second = await fetch(`${t2.api}/health`, { headers: { origin: 'https://other.example.org' } });
    assert.is(second.headers.get('access-control-allow-origin'), 'https://other.example.org');

    for (const headers of [{ origin: 'https://evil.example.org' }, { origin: 'https://app.example.org.evil.example' }, {}] as Record<
      string,
      string
    >[]) {
      const other = await fetch(`${t2.api}/health`, { headers });
      assert.is(other.status, 200);
      assert.is(other.headers.get('access-control-allow-origin'), null, JSON.stringify(headers));
      assert.is(other.headers.get('access-control-expose-headers'), null);
    }
    const otherPre = await fetch(`${t2.api}/results:batch`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example.org', 'access-control-request-method': 'POST' },
    });
    assert.is(otherPre.headers.get('access-control-allow-origin'), null);
    assert.is(otherPre.headers.get('access-control-allow-methods'), null);
    await otherPre.arrayBuffer();
  } finally {
    await t2.close();
  }
});

test("CORS with '*': any origin, without credentials", async () => {
  const t2 = await startTestServer({ corsOrigins: '*' }, 'cors-any');
  try {
    const pre = await fetch(`${t2.api}/sites`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://anyone.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.is(pre.status, 204);
    assert.is(pre.headers.get('access-control-allow-origin'), '*');
    const res = await fetch(`${t2.api}/health`, { headers: { origin: 'https://anyone.example' } });
    assert.is(res.headers.get('access-control-allow-origin'), '*');
    assert.ok(list(res.headers.get('access-control-expose-headers')).includes('x-request-id'));
    assert.is(res.headers.get('access-control-allow-credentials'), null);
    const none = await fetch(`${t2.api}/health`);
    assert.is(none.headers.get('access-control-allow-origin'), null, 'a request without Origin is no CORS request');
  } finally {
    await t2.close();
  }
});

test.run();
