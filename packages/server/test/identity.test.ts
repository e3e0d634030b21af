/**
 * Identity: the built-in OpenID provider (real oidc-provider, real tokens) and the token verifier.
 * No mocks: every token here is signed by a running provider, or crafted with its own key.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { freePort } from '../src/db/ports.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

import { TokenVerifier } from '../src/auth/verifier.ts';
import { buildConfig } from '../src/config.ts';
import { AppError } from '../src/core/errors.ts';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';

const AUDIENCE = 'benchmarks-api';
const ALICE = { sub: 'alice', email: 'alice@example.org', name: 'Alice', entitlements: ['urn:benchmarks:admin', 'urn:benchmarks:member'] };
const BOB = { sub: 'bob', email: 'bob@example.org', entitlements: ['urn:benchmarks:member'] };

let idp: RunningIssuer;
let other: RunningIssuer;
let verifier: TokenVerifier;
let tmp: string;

test.before(async () => {
  idp = await startIssuer({ accounts: [ALICE, BOB] });
  other = await startIssuer({ accounts: [ALICE] });
  verifier = new TokenVerifier({ issuers: [idp.issuer], audience: AUDIENCE });
  tmp = await mkdtemp(join(tmpdir(), 'identity-test-'));
});

test.after(async () => {
  await Promise.all([idp?.close(), other?.close()]);
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

async function rejects(promise: Promise<unknown>, status: number, code: string): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.instance(err, AppError, `expected an AppError, got ${String(err)}`);
    const e = err as AppError;
    assert.is(e.code, code, `code (detail: ${e.detail})`);
    assert.is(e.status, status, 'status');
    if (status === 401) assert.match(e.headers['WWW-Authenticate'] ?? '', /^Bearer realm="benchmarks", error="invalid_token"/);
    return e;
  }
  assert.unreachable(`expected ${status} ${code}, but the token was accepted`);
  throw new Error('unreachable');
}

const now = () => Math.floor(Date.now() / 1000);
const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A token signed with the provider's own key (same kid), with any claims. */
async function craft(issuer: RunningIssuer, claims: Record<string, unknown>, key?: JWK): Promise<string> {
  const jwk = key ?? (await issuer.signingKey());
  const signingKey = await importJWK(jwk, 'RS256');
  return new SignJWT({ iss: issuer.issuer, sub: 'alice', aud: AUDIENCE, iat: now(), exp: now() + 600, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: (await issuer.signingKey()).kid, typ: 'at+jwt' })
    .sign(signingKey);
}

// ---------------------------------------------------------------------------------------------
// Provider

test('provider: discovery names the loopback issuer and the endpoints the verifier needs', async () => {
  assert.match(idp.issuer, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.is(idp.cliClientId, 'benchmarks-cli');
  const meta = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  assert.is(meta.issuer, idp.issuer);
  assert.ok(meta.jwks_uri);
  assert.ok(meta.userinfo_endpoint);
  assert.ok(meta.device_authorization_endpoint);
  assert.ok((meta.grant_types_supported as string[]).includes('urn:ietf:params:oauth:grant-type:device_code'));
});

test('provider: refuses a non-loopback host', async () => {
  for (const host of ['0.0.0.0', '192.168.1.10', 'example.org', '::']) {
    try {
      await startIssuer({ host });
      assert.unreachable(`host ${host} was accepted`);
    } catch (err) {
      assert.instance(err, Error);
      assert.match((err as Error).message, /loopback/);
    }
  }
});

test('provider: minted JWT access tokens carry the required claims', async () => {
  const token = await idp.mintAccessToken({ sub: 'alice' });
  const [h, p] = token.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url').toString());
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  assert.is(header.alg, 'RS256');
  assert.is(header.kid, (await idp.signingKey()).kid);
  assert.is(payload.iss, idp.issuer);
  assert.is(payload.sub, 'alice');
  assert.is(payload.aud, AUDIENCE);
  assert.is(payload.client_id, 'benchmarks-cli');
  assert.type(payload.exp, 'number');
  assert.type(payload.iat, 'number');
  assert.ok(payload.exp - payload.iat === 3600);
  assert.match(payload.scope, /openid/);
  assert.is(payload.email, ALICE.email);
  assert.equal(payload.eduperson_entitlement, ALICE.entitlements);

  const bare = await idp.mintAccessToken({ sub: 'alice', claims: false });
  const barePayload = JSON.parse(Buffer.from(bare.split('.')[1], 'base64url').toString());
  assert.is(barePayload.email, undefined);
  assert.is(barePayload.eduperson_entitlement, undefined);
});

// ---------------------------------------------------------------------------------------------
// Verifier: accepted tokens

test('verifier: a valid JWT gives the identity with email and entitlements', async () => {
  const token = await idp.mintAccessToken({ sub: 'alice' });
  const identity = await verifier.verify(token);
  assert.equal(identity, { iss: idp.issuer, sub: 'alice', email: ALICE.email, entitlements: ALICE.entitlements });
  // a second call is served from the cache and gives the same answer
  assert.equal(await verifier.verify(token), identity);
});

test('verifier: a JWT without email takes email and entitlements from userinfo', async () => {
  const token = await idp.mintAccessToken({ sub: 'bob', claims: false });
  const identity = await verifier.verify(token);
  assert.equal(identity, { iss: idp.issuer, sub: 'bob', email: BOB.email, entitlements: BOB.entitlements });
});

test('verifier: a JWT of an account without email gives email null (userinfo has none either)', async () => {
  const token = await idp.mintAccessToken({ sub: 'nomail' });
  const identity = await verifier.verify(token);
  assert.equal(identity, { iss: idp.issuer, sub: 'nomail', email: null, entitlements: [] });
});

test('verifier: entitlements are the union of eduperson_entitlement, entitlements and groups', async () => {
  const token = await craft(idp, {
    email: 'carol@example.org',
    eduperson_entitlement: 'urn:a',
    entitlements: ['urn:b', 'urn:a'],
    groups: ['g1'],
  });
  const identity = await verifier.verify(token);
  assert.equal(identity.entitlements, ['urn:a', 'urn:b', 'g1']);
  assert.is(identity.email, 'carol@example.org');
});

test('verifier: an opaque token is checked at userinfo', async () => {
  const token = await idp.mintOpaqueToken('alice');
  assert.not.match(token, /\./);
  const identity = await verifier.verify(token);
  assert.equal(identity, { iss: idp.issuer, sub: 'alice', email: ALICE.email, entitlements: ALICE.entitlements });
});

test('verifier: an opaque token goes only to the issuer configured for opaque tokens, never to another trusted issuer', async () => {
  const both = new TokenVerifier({ issuers: [idp.issuer, other.issuer], audience: AUDIENCE, opaqueIssuer: idp.issuer });
  const before = { idp: idp.userinfoRequests, other: other.userinfoRequests };
  const identity = await both.verify(await idp.mintOpaqueToken('alice'));
  assert.equal(identity, { iss: idp.issuer, sub: 'alice', email: ALICE.email, entitlements: ALICE.entitlements });
  // A token of the other issuer is not sent there either: the configured issuer refuses it.
  await rejects(both.verify(await other.mintOpaqueToken('alice')), 401, 'INVALID_TOKEN');
  assert.is(other.userinfoRequests - before.other, 0, 'no opaque token reached the other issuer');
  assert.is(idp.userinfoRequests - before.idp, 2);
  // JWTs of both issuers are still accepted.
  assert.is((await both.verify(await other.mintAccessToken({ sub: 'alice' }))).iss, other.issuer);
});

test('verifier: several trusted issuers and none configured for opaque tokens: refused with 401, no provider asked', async () => {
  const both = new TokenVerifier({ issuers: [idp.issuer, other.issuer], audience: AUDIENCE });
  assert.is(both.opaqueIssuer, null);
  const before = idp.userinfoRequests + other.userinfoRequests;
  const err = await rejects(both.verify(await idp.mintOpaqueToken('alice')), 401, 'INVALID_TOKEN');
  assert.match(err.detail, /Opaque \(non-JWT\) access tokens are not accepted here.*OIDC_OPAQUE_ISSUER/);
  assert.is(idp.userinfoRequests + other.userinfoRequests, before);
  assert.is(new TokenVerifier({ issuers: [`${idp.issuer}/`] }).opaqueIssuer, `${idp.issuer}/`, 'one trusted issuer checks them by default');
  assert.throws(() => new TokenVerifier({ issuers: [idp.issuer], opaqueIssuer: other.issuer }), /is not one of the trusted issuers/);
  assert.throws(
    () => buildConfig({ oidcIssuer: idp.issuer, oidcOpaqueIssuer: other.issuer }),
    /OIDC_OPAQUE_ISSUER must be one of the trusted issuers/,
  );
  assert.is(
    buildConfig({ oidcIssuer: `${idp.issuer},${other.issuer}`, oidcOpaqueIssuer: `${other.issuer}/` }).oidcOpaqueIssuer,
    `${other.issuer}/`,
  );
});

test('verifier: a refused opaque token is remembered: repeated 20 times, its issuer is asked once', async () => {
  const fresh = new TokenVerifier({ issuers: [idp.issuer], audience: AUDIENCE });
  const bad = 'b3BhcXVlLXRva2VuLW5vYm9keS1pc3N1ZWQtMTIz';
  const before = idp.userinfoRequests;
  for (let i = 0; i < 10; i++) await rejects(fresh.verify(bad), 401, 'INVALID_TOKEN');
  await Promise.all(Array.from({ length: 10 }, () => rejects(fresh.verify(bad), 401, 'INVALID_TOKEN')));
  assert.is(idp.userinfoRequests - before, 1);
  assert.not.ok(fresh.isVerified(bad));
  // Remembered briefly only: with no memory every attempt asks again.
  const forgetful = new TokenVerifier({ issuers: [idp.issuer], audience: AUDIENCE, failureTtlMs: 0 });
  for (let i = 0; i < 3; i++) await rejects(forgetful.verify(bad), 401, 'INVALID_TOKEN');
  assert.is(idp.userinfoRequests - before, 4);
});

test('verifier: without a configured audience any aud is accepted', async () => {
  const lenient = new TokenVerifier({ issuers: [`${idp.issuer}/`] }); // trailing slash tolerated
  const token = await idp.mintAccessToken({ sub: 'alice', audience: 'some-other-api' });
  const identity = await lenient.verify(token);
  assert.is(identity.sub, 'alice');
  assert.is(identity.iss, idp.issuer);
});

// ---------------------------------------------------------------------------------------------
// Verifier: refused tokens

test('verifier: expired token → 401 TOKEN_EXPIRED', async () => {
  const token = await idp.mintAccessToken({ sub: 'alice', ttlSeconds: -3600 });
  await rejects(verifier.verify(token), 401, 'TOKEN_EXPIRED');
  // within the clock tolerance (30 s) it is still accepted
  const justExpired = await craft(idp, { exp: now() - 10, iat: now() - 70 });
  assert.is((await verifier.verify(justExpired)).sub, 'alice');
});

test('verifier: nbf in the future → 401 TOKEN_NOT_YET_VALID', async () => {
  const token = await craft(idp, { nbf: now() + 3600, exp: now() + 7200 });
  await rejects(verifier.verify(token), 401, 'TOKEN_NOT_YET_VALID');
});

test('verifier: signed by another key with the same kid → 401 INVALID_TOKEN', async () => {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const impostor = await exportJWK(privateKey);
  const token = await craft(idp, { email: 'mallory@example.org' }, impostor);
  const err = await rejects(verifier.verify(token), 401, 'INVALID_TOKEN');
  assert.not.ok(err.detail.includes(token) || err.message.includes(token), 'the token must not appear in the error');
});

test('verifier: unknown kid → 401 INVALID_TOKEN', async () => {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const token = await new SignJWT({ iss: idp.issuer, sub: 'alice', aud: AUDIENCE, exp: now() + 600 })
    .setProtectedHeader({ alg: 'RS256', kid: 'no-such-key' })
    .sign(await importJWK(jwk, 'RS256'));
  await rejects(verifier.verify(token), 401, 'INVALID_TOKEN');
});

test('verifier: token of an untrusted issuer → 401 UNTRUSTED_ISSUER', async () => {
  const token = await other.mintAccessToken({ sub: 'alice' });
  const err = await rejects(verifier.verify(token), 401, 'UNTRUSTED_ISSUER');
  assert.is(err.detail, `Tokens from issuer ${other.issuer} are not accepted here.`);
});

test('verifier: wrong audience → 401 INVALID_AUDIENCE', async () => {
  const token = await idp.mintAccessToken({ sub: 'alice', audience: 'some-other-api' });
  await rejects(verifier.verify(token), 401, 'INVALID_AUDIENCE');
});

test('verifier: alg none and HMAC tokens → 401 INVALID_TOKEN', async () => {
  const claims = { iss: idp.issuer, sub: 'alice', aud: AUDIENCE, exp: now() + 600, email: ALICE.email };
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
  await rejects(verifier.verify(none), 401, 'INVALID_TOKEN');
  for (const alg of ['HS256', 'HS384', 'HS512']) {
    const hmac = await new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode('x'.repeat(64)));
    await rejects(verifier.verify(hmac), 401, 'INVALID_TOKEN');
  }
  // an HMAC token "signed" with the provider's public key material (key confusion) is refused too
  const { n } = await idp.signingKey();
  const confused = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', kid: (await idp.signingKey()).kid })
    .sign(new TextEncoder().encode(n));
  await rejects(verifier.verify(confused), 401, 'INVALID_TOKEN');
});

test('verifier: empty and garbage tokens → 401 INVALID_TOKEN', async () => {
  for (const garbage of ['', '   ', 'not a token', 'a.b.c', 'eyJ.eyJ.sig', '....', 'x'.repeat(20_000), 'abc\u0000def']) {
    await rejects(verifier.verify(garbage), 401, 'INVALID_TOKEN');
  }
  // well-formed but unknown opaque token: userinfo says no
  await rejects(verifier.verify('c29tZS1vcGFxdWUtdG9rZW4tdGhhdC1ub2JvZHktaXNzdWVk'), 401, 'INVALID_TOKEN');
  // a JWT without sub
  await rejects(verifier.verify(await craft(idp, { sub: undefined })), 401, 'INVALID_TOKEN');
});

test('verifier: the verification cache keeps answering after the issuer is gone', async () => {
  const idp2 = await startIssuer({ accounts: [ALICE] });
  const cached = new TokenVerifier({ issuers: [idp2.issuer], audience: AUDIENCE });
  const token = await idp2.mintAccessToken({ sub: 'alice' });
  await cached.verify(token);
  await idp2.close();
  assert.is((await cached.verify(token)).sub, 'alice');
});

// ---------------------------------------------------------------------------------------------
// Availability

test('verifier: trusted issuer unreachable → 503 ISSUER_UNAVAILABLE', async () => {
  const port = await freePort();
  const deadIssuer = `http://127.0.0.1:${port}`;
  const dead = new TokenVerifier({ issuers: [deadIssuer], audience: AUDIENCE });
  const { privateKey } = await generateKeyPair('RS256');
  const token = await new SignJWT({ iss: deadIssuer, sub: 'alice', aud: AUDIENCE, exp: now() + 600 })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .sign(privateKey);
  const err = await rejects(dead.verify(token), 503, 'ISSUER_UNAVAILABLE');
  assert.ok(err.detail.includes(deadIssuer), 'the detail names the issuer');
  assert.is(err.headers['Retry-After'], '5');
  // an opaque token when no trusted issuer can be reached: unavailable as well
  await rejects(dead.verify('c29tZS1vcGFxdWUtdG9rZW4'), 503, 'ISSUER_UNAVAILABLE');
});

test('verifier: cached keys keep working after the issuer is closed', async () => {
  const idp3 = await startIssuer({ accounts: [ALICE] });
  const noCache = new TokenVerifier({ issuers: [idp3.issuer], audience: AUDIENCE, cacheTtlMs: 0 });
  const first = await idp3.mintAccessToken({ sub: 'alice' });
  const second = await idp3.mintAccessToken({ sub: 'alice', ttlSeconds: 1800 });
  const expired = await idp3.mintAccessToken({ sub: 'alice', ttlSeconds: -3600 });
  await noCache.verify(first);
  await idp3.close();
  const identity = await noCache.verify(second);
  assert.equal(identity, { iss: idp3.issuer, sub: 'alice', email: ALICE.email, entitlements: ALICE.entitlements });
  // still a real check, not a blanket yes
  await rejects(noCache.verify(expired), 401, 'TOKEN_EXPIRED');
  // an unknown kid right after a key set fetch is simply refused (jose does not refetch within its cooldown)
  const { privateKey } = await generateKeyPair('RS256');
  const unknownKid = await new SignJWT({ iss: idp3.issuer, sub: 'alice', aud: AUDIENCE, exp: now() + 600 })
    .setProtectedHeader({ alg: 'RS256', kid: 'rotated-key' })
    .sign(privateKey);
  await rejects(noCache.verify(unknownKid), 401, 'INVALID_TOKEN');
});

// ---------------------------------------------------------------------------------------------
// Key persistence

test('provider: keyFile persists the signing key (0600) and reuses it on restart', async () => {
  const keyFile = join(tmp, 'nested', 'issuer-key.json');
  const first = await startIssuer({ keyFile, accounts: [ALICE] });
  const kid = (await first.signingKey()).kid;
  const port = Number(new URL(first.issuer).port);
  const token = await first.mintAccessToken({ sub: 'alice' });
  await first.close();
  assert.is((await stat(keyFile)).mode & 0o777, 0o600);

  const second = await startIssuer({ keyFile, port, accounts: [ALICE] });
  try {
    assert.is((await second.signingKey()).kid, kid);
    assert.is(second.issuer, `http://127.0.0.1:${port}`);
    // a token issued before the restart is still valid for a fresh verifier
    const fresh = new TokenVerifier({ issuers: [second.issuer], audience: AUDIENCE });
    assert.is((await fresh.verify(token)).sub, 'alice');
  } finally {
    await second.close();
  }

  const third = await startIssuer({ keyFile: join(tmp, 'other-key.json') });
  try {
    assert.is.not((await third.signingKey()).kid, kid);
  } finally {
    await third.close();
  }
});

// ---------------------------------------------------------------------------------------------
// Device flow

test('device flow: the CLI client gets a JWT access token and a refresh token', async () => {
  idp.addAccount({ sub: 'dave', email: 'dave@example.org', entitlements: ['urn:benchmarks:member'] });
  const meta = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
  const form = (params: Record<string, string>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params),
  });

  const authorization = await fetch(
    meta.device_authorization_endpoint,
    form({ client_id: idp.cliClientId, scope: 'openid email profile offline_access eduperson_entitlement' }),
  );
  assert.is(authorization.status, 200);
  const device = (await authorization.json()) as Record<string, string>;
  assert.ok(device.device_code && device.user_code && device.verification_uri_complete);

  const poll = () =>
    fetch(
      meta.token_endpoint,
      form({
        client_id: idp.cliClientId,
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: device.device_code,
      }),
    );

  const pending = await poll();
  assert.is(pending.status, 400);
  assert.is(((await pending.json()) as Record<string, string>).error, 'authorization_pending');

  await idp.approveDevice(device.verification_uri_complete, 'dave');

  const granted = await poll();
  assert.is(granted.status, 200);
  const tokens = (await granted.json()) as Record<string, string>;
  assert.is(tokens.token_type, 'Bearer');
  assert.ok(tokens.refresh_token, 'a refresh token is issued for offline_access');
  assert.is(tokens.access_token.split('.').length, 3, 'the access token is a JWT');

  const identity = await verifier.verify(tokens.access_token);
  assert.equal(identity, { iss: idp.issuer, sub: 'dave', email: 'dave@example.org', entitlements: ['urn:benchmarks:member'] });

  // the refresh token gives a new JWT access token for the same audience
  const refreshed = await fetch(
    meta.token_endpoint,
    form({
      client_id: idp.cliClientId,
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
    }),
  );
  assert.is(refreshed.status, 200);
  const next = (await refreshed.json()) as Record<string, string>;
  assert.is.not(next.access_token, tokens.access_token);
  assert.is((await verifier.verify(next.access_token)).sub, 'dave');

  // the device code is single use (and reusing it revokes the grant, as oidc-provider does)
  const again = await poll();
  assert.is(again.status, 400);
});

test('device flow: approving with user_code given separately, and an unknown code fails', async () => {
  const meta = (await (await fetch(`${idp.issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
  const res = await fetch(meta.device_authorization_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: idp.cliClientId, scope: 'openid email' }),
  });
  const device = (await res.json()) as Record<string, string>;
  await idp.approveDevice(device.verification_uri, 'erin', device.user_code);
  try {
    await idp.approveDevice(`${idp.issuer}/device?user_code=BCDF-GHJK`, 'erin');
    assert.unreachable('an unknown user code was approved');
  } catch (err) {
    assert.instance(err, Error);
    assert.not.instance(err, assert.Assertion);
    assert.match((err as Error).message, /Device approval failed/);
  }
});

test.run();
