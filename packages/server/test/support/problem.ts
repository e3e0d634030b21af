import * as assert from 'uvu/assert';

/**
 * Asserts an RFC 9457 problem+json error with this status and stable code, and the members every
 * error carries (`instance` names the request).
 */
export function assertProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string): void {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/);
  assert.is(res.body.code, code, res.body.detail);
  assert.is(res.body.status, status);
  assert.type(res.body.title, 'string');
  assert.type(res.body.detail, 'string');
  assert.match(res.body.type, /^urn:benchmarks:problem:/);
  // This occurrence: the request's id, as X-Request-Id says and its log lines carry it.
  assert.is(res.body.instance, `urn:benchmarks:request:${res.headers.get('x-request-id')}`);
}
