import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SignJWT, importJWK } from 'jose';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';
import { User } from '../src/entities/user.ts';

let t: TestServer;
let stranger: RunningIssuer;

test.before(async () => {
  t = await startTestServer({ termsVersion: '2025-03' }, 'users');
  stranger = await startIssuer();
});
test.after(async () => {
  await stranger.close();
  await t.close();
});

test('POST /users:register: registers the caller once, recording the terms version and time', async () => {
  const token = await t.token('reg-alice', { email: 'alice@example.org' });
  const before = Date.now();
  const first = await t.request('POST', '/users:register', { token });
  assert.is(first.status, 201);
  assert.is(first.body.sub, 'reg-alice');
  assert.is(first.body.iss, t.issuer.issuer);
  assert.is(first.body.email, 'alice@example.org');
  assert.is(first.body.terms_version, '2025-03');
  assert.not.match(first.body.registration_datetime, /Z$/);
  const registeredAt = Date.parse(`${first.body.registration_datetime}Z`);
  assert.ok(registeredAt >= before - 1000 && registeredAt <= Date.now() + 1000);

  const second = await t.request('POST', '/users:register', { token });
  assertProblem(second, 409, 'ALREADY_REGISTERED');

  const stored = await t.server.context.orm.em.fork().findOneOrFail(User, { iss: t.issuer.issuer, sub: 'reg-alice' });
  assert.is(stored.terms_version, '2025-03');
  assert.is(stored.email, 'alice@example.org');
});

test('GET /users/self: 404 before registration, 200 after', async () => {
  const token = await t.token('self-bob');
  assertProblem(await t.request('GET', '/users/self', { token }), 404, 'NOT_REGISTERED');
  await t.request('POST', '/users:register', { token });
  const res = await t.request('GET', '/users/self', { token });
  assert.is(res.status, 200);
  assert.is(res.body.sub, 'self-bob');
  assert.is(res.body.email, 'self-bob@test.example');
});

test('POST /users/self: registers if needed (201) and then returns the user (200)', async () => {
  const token = await t.token('upsert-carol');
  const first = await t.request('POST', '/users/self', { token });
  assert.is(first.status, 201);
  const again = await t.request('POST', '/users/self', { token });
  assert.is(again.status, 200);
  assert.equal(again.body, first.body);
});

test('registration is keyed by (iss, sub): the same sub at another issuer is another user', async () => {
  const ours = await t.token('same-sub');
  assert.is((await t.request('POST', '/users:register', { token: ours })).status, 201);
  // The other issuer is not trusted: its token is refused before anything is stored.
  stranger.addAccount({ sub: 'same-sub', email: 'x@y.z' });
  const theirs = await stranger.mintAccessToken({ sub: 'same-sub' });
  assertProblem(await t.request('POST', '/users:register', { token: theirs }), 401, 'UNTRUSTED_ISSUER');
  const count = await t.server.context.orm.em.fork().count(User, { sub: 'same-sub' });
  assert.is(count, 1);
});

test('POST /users/self:update refreshes the email from the token; unregistered callers get 403', async () => {
  const old = await t.token('upd-dave', { email: 'old@example.org' });
  await t.request('POST', '/users:register', { token: old });
  const fresh = await t.token('upd-dave', { email: 'new@example.org' });
  const res = await t.request('POST', '/users/self:update', { token: fresh });
  assert.is(res.status, 204);
  assert.is(res.text, '');
  assert.is((await t.request('GET', '/users/self', { token: fresh })).body.email, 'new@example.org');
  assertProblem(await t.request('POST', '/users/self:update', { token: await t.token('upd-nobody') }), 403, 'NOT_REGISTERED');
});

test('GET /users/self:try_admin: 204 for a registered holder of an admin entitlement, 403 otherwise', async () => {
  const admin = await t.admin('try-admin');
  assert.is((await t.request('GET', '/users/self:try_admin', { token: admin })).status, 204);
  const user = await t.user('try-user');
  assertProblem(await t.request('GET', '/users/self:try_admin', { token: user }), 403, 'NOT_ADMIN');
  // The entitlement alone is not enough: an administrator must be registered.
  const unregisteredAdmin = await t.token('try-admin-unregistered', { admin: true });
  assertProblem(await t.request('GET', '/users/self:try_admin', { token: unregisteredAdmin }), 403, 'NOT_REGISTERED');
});

test('no admin entitlement configured means no admin', async () => {
  const t2 = await startTestServer({ adminEntitlement: '' }, 'noadmin');
  try {
    const token = await t2.token('would-be-admin', { admin: true });
    await t2.request('POST', '/users:register', { token });
    assertProblem(await t2.request('GET', '/users/self:try_admin', { token }), 403, 'NOT_ADMIN');
  } finally {
    await t2.close();
  }
});

test('missing token: 401 with WWW-Authenticate: Bearer and no error attribute', async () => {
  const res = await t.request('POST', '/users:register');
  assertProblem(res, 401, 'MISSING_TOKEN');
  assert.is(res.headers.get('www-authenticate'), 'Bearer realm="benchmarks"');
});

test('malformed Authorization header: 401', async () => {
  const res = await t.request('GET', '/users/self', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
  assertProblem(res, 401, 'INVALID_AUTHORIZATION_HEADER');
});

test('expired token: 401 TOKEN_EXPIRED with an invalid_token challenge', async () => {
  const token = await t.token('expired-erin', { ttlSeconds: -120 });
  const res = await t.request('POST', '/users:register', { token });
  assertProblem(res, 401, 'TOKEN_EXPIRED');
  assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer realm="benchmarks", error="invalid_token"/);
  assert.not.ok(res.text.includes(token), 'the token is not echoed');
});

async function craft(claims: Record<string, unknown>, header: Record<string, unknown> = {}): Promise<string> {
  const jwk = await t.issuer.signingKey();
  const key = await importJWK(jwk, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'crafted', iss: t.issuer.issuer, aud: 'benchmarks-api', iat: now, exp: now + 600, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'at+jwt', ...header })
    .sign(key);
}

test('not-yet-valid token (nbf in the future, signed by the trusted key): 401 TOKEN_NOT_YET_VALID', async () => {
  const token = await craft({ nbf: Math.floor(Date.now() / 1000) + 3600 });
  assertProblem(await t.request('GET', '/users/self', { token }), 401, 'TOKEN_NOT_YET_VALID');
});

test('a token signed with the trusted key but claiming another issuer: 401', async () => {
  const token = await craft({ iss: 'https://evil.example.org' });
  assertProblem(await t.request('GET', '/users/self', { token }), 401, 'UNTRUSTED_ISSUER');
});

test('wrongly signed token (same kid, other key): 401 INVALID_TOKEN', async () => {
  const jwk = await t.issuer.signingKey();
  const { generateKeyPair } = await import('jose');
  const { privateKey } = await generateKeyPair('RS256');
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ sub: 'forged', iss: t.issuer.issuer, exp: now + 600 })
    .setProtectedHeader({ alg: 'RS256', kid: jwk.kid })
    .sign(privateKey);
  assertProblem(await t.request('GET', '/users/self', { token }), 401, 'INVALID_TOKEN');
});

test('alg none and HMAC tokens: 401 INVALID_TOKEN', async () => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const payload = b64({ sub: 'none', iss: t.issuer.issuer, exp: Math.floor(Date.now() / 1000) + 600 });
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
  assertProblem(await t.request('GET', '/users/self', { token: none }), 401, 'INVALID_TOKEN');
  const hmac = await new SignJWT({ sub: 'hmac', iss: t.issuer.issuer, exp: Math.floor(Date.now() / 1000) + 600 })
    .setProtectedHeader({ alg: 'HS256' })
    .sign(new TextEncoder().encode('a-shared-secret-that-anyone-could-guess'));
  assertProblem(await t.request('GET', '/users/self', { token: hmac }), 401, 'INVALID_TOKEN');
});

test('wrong audience: 401 INVALID_AUDIENCE when OIDC_AUDIENCE is set; the right one passes', async () => {
  const t2 = await startTestServer({ oidcAudience: 'another-api' }, 'aud');
  try {
    const token = await t2.token('aud-frank');
    assertProblem(await t2.request('POST', '/users:register', { token }), 401, 'INVALID_AUDIENCE');
    const right = await t2.issuer.mintAccessToken({ sub: 'aud-frank', audience: 'another-api' });
    assert.is((await t2.request('POST', '/users:register', { token: right })).status, 201);
  } finally {
    await t2.close();
  }
});

test('authentication comes before validation: anonymous garbage gets 401, not 422', async () => {
  const res = await t.request('POST', '/users/self:update', { rawBody: '{not json' });
  assertProblem(res, 401, 'MISSING_TOKEN');
});

test.run();
