/**
 * Secrets and headers: access tokens never reach the logs (debug level included, 500s included)
 * or an error body; every response carries the security headers; the Swagger UI page runs only
 * its own scripts, its inline one allowed by hash.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { createLogger } from '../src/core/logger.ts';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';
import { startTestServer, type TestServer } from './support/harness.ts';
import { inputs } from './support/hardening.ts';

const lines: string[] = [];
let t: TestServer;
let stranger: RunningIssuer;

test.before(async () => {
  t = await startTestServer({ logLevel: 'debug' }, 'secrets', { logger: createLogger('debug', (line) => lines.push(line)) });
  stranger = await startIssuer();
});
test.after(async () => {
  await stranger.close();
  await t.close();
});

/** The token and the parts of it that identify it (payload, signature). */
function fragments(token: string): string[] {
  const parts = token.split('.');
  return [token, ...parts.filter((p) => p.length >= 20)];
}

test('access tokens never appear in the logs (debug level, errors and 500s included) nor in error bodies', async () => {
  const user = await t.user('secret-user');
  const admin = await t.admin('secret-admin');
  const expired = await t.token('secret-user', { ttlSeconds: -600 });
  const untrusted = await stranger.mintAccessToken({ sub: 'secret-user' });
  const opaque = await t.issuer.mintOpaqueToken('secret-opaque');
  const forged = `${user.split('.').slice(0, 2).join('.')}.${admin.split('.')[2]}`;
  const tokens = [user, admin, expired, untrusted, opaque, forged];
  const bodies: string[] = [];
  const send = async (method: string, path: string, options: Parameters<TestServer['request']>[2]) => {
    const res = await t.request(method, path, options);
    bodies.push(`${res.status} ${res.headers.get('www-authenticate') ?? ''} ${res.text}`);
    return res;
  };

  for (const token of tokens) {
    await send('GET', '/users/self', { token });
    await send('POST', '/sites', { token, body: inputs.site() });
    await send('POST', '/sites', { token, rawBody: '{"broken":' });
    await send('GET', '/sites/not-an-id', { token });
    await send('GET', '/results', { token, query: { access_token: token, filters: `token == ${token}` } });
    await send('GET', '/no/such/route', { token });
    await send('DELETE', '/users/self', { token });
    await send('GET', '/users/self', { headers: { authorization: `Basic ${token}` } });
    await send('GET', '/users/self', { headers: { authorization: `Bearer ${token} ${token}` } });
  }
  // A 500: the table the authenticator reads is gone for a moment.
  const em = t.server.context.orm.em.fork();
  await em.execute('alter table app_user rename to app_user_gone');
  try {
    for (const token of [user, admin]) {
      const res = await send('GET', '/users/self', { token });
      assert.is(res.status, 500, res.text);
      assert.is(res.body.code, 'INTERNAL_ERROR');
      assert.not.match(res.text, /app_user|select|\n\s+at /i, 'no SQL or stack in a 500');
    }
  } finally {
    await em.execute('alter table app_user_gone rename to app_user');
  }

  const log = lines.join('');
  assert.ok(
    lines.some((l) => /"level":"error".*request failed/.test(l)),
    'the 500 was logged, with its cause',
  );
  assert.ok(
    lines.some((l) => /"msg":"request"/.test(l)),
    'debug logging was on',
  );
  for (const [i, token] of tokens.entries()) {
    for (const fragment of fragments(token)) {
      assert.not.ok(log.includes(fragment), `token ${i} is not in the log`);
      const leaking = bodies.find((b) => b.includes(fragment));
      assert.is(leaking, undefined, `token ${i} is not in an error body: ${leaking?.slice(0, 200)}`);
    }
  }
  console.log(`secrets: ${bodies.length} responses and ${lines.length} debug log lines checked for ${tokens.length} tokens: none found`);
});

test('security headers on API answers, errors and parser errors', async () => {
  for (const [url, init] of [
    [`${t.api}/health`, {}],
    [`${t.api}/no/such/route`, {}],
    [`${t.api}/sites`, { method: 'POST' }],
    [`${t.url}/api-spec.json`, {}],
    [`${t.api}/sites?x=${'a'.repeat(20_000)}`, {}],
  ] as const) {
    const res = await fetch(url, init);
    assert.is(res.headers.get('x-content-type-options'), 'nosniff', url.slice(0, 60));
    assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'.*frame-ancestors 'none'/, url.slice(0, 60));
    if (res.status < 431) {
      assert.is(res.headers.get('x-frame-options'), 'DENY');
      assert.is(res.headers.get('referrer-policy'), 'no-referrer');
    }
    await res.arrayBuffer();
  }
  const tooLong = await fetch(`${t.api}/sites?x=${'a'.repeat(20_000)}`);
  assert.is(tooLong.status, 431);
  assert.is(((await tooLong.json()) as { code: string }).code, 'HEADERS_TOO_LARGE');
});

test('GET /: a strict CSP; the one inline script is allowed by its hash, nothing by unsafe-inline; every asset loads', async () => {
  const res = await fetch(`${t.url}/`);
  assert.is(res.status, 200);
  const csp = res.headers.get('content-security-policy') ?? '';
  const html = await res.text();
  const directives = Object.fromEntries(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
  assert.equal(directives['default-src'], ["'none'"]);
  assert.equal(directives['frame-ancestors'], ["'none'"]);
  assert.equal(directives['object-src'] ?? directives['default-src'], ["'none'"]);
  assert.not.ok(directives['script-src']!.includes("'unsafe-inline'"), 'no unsafe-inline for scripts');
  assert.not.ok(directives['script-src']!.includes("'unsafe-eval'"), 'no unsafe-eval');
  const inline = [...html.matchAll(/<script(?![^>]*\bsrc=)[^>]*>([\s\S]*?)<\/script>/gi)].map((m) => m[1]!);
  assert.is(inline.length, 1, 'the template has one inline script');
  for (const script of inline) {
    const hash = `'sha256-${createHash('sha256').update(script, 'utf8').digest('base64')}'`;
    assert.ok(directives['script-src']!.includes(hash), `the inline script's hash ${hash} is allowed`);
  }
  assert.not.match(html, /\son[a-z]+\s*=/i, 'no inline event handler attributes (a hash would not allow them)');
  const assets = [...html.matchAll(/<(script|link)[^>]*(?:src|href)="([^"]+)"/g)].map((m) => [m[1]!, m[2]!] as const);
  assert.ok(assets.length >= 4, 'scripts, style sheet and icon');
  for (const [tag, url] of assets) {
    if (url.startsWith('https://fonts.googleapis.com/')) {
      // koa2-swagger-ui's template links web fonts: the policy takes style sheets from 'self' only,
      // so the browser refuses it (swagger-ui.test.ts sees the refusal in Chromium).
      assert.is(tag, 'link');
      assert.equal(directives['style-src'], ["'self'", "'unsafe-inline'"]);
      continue;
    }
    assert.ok(url.startsWith('/'), `${url} comes from this server ('self')`);
    const asset = await fetch(new URL(url, t.url));
    assert.is(asset.status, 200, url);
    if (tag === 'script') assert.match(asset.headers.get('content-type') ?? '', /javascript/, url);
    assert.ok((await asset.arrayBuffer()).byteLength > 100, `${url} has content`);
  }
});

test.run();
