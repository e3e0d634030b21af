/**
 * Logs (pino, src/core/logger.ts): one JSON object per line with `level`, `time` and `msg`; the
 * levels; keys and free text that could carry a credential or an email address redacted; the request
 * id on every line logged while a request is handled and in every problem+json answer (`instance`);
 * an incoming X-Request-Id kept only when it is a plain token; lines still buffered by the
 * asynchronous destination written out when the process exits; the access line of each request
 * (level, probes, query string with credentials and people's data redacted, worker id).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { createLogger, type LogLevel } from '../src/core/logger.ts';
import { accessLog, loggedQuery } from '../src/http/access-log.ts';
import { withFields } from '../src/core/log-fields.ts';
import { buildConfig } from '../src/config.ts';
import { requestScope } from '../src/http/request-scope.ts';
import { startTestServer, type HttpResponse, type TestServer } from './support/harness.ts';

type Line = Record<string, unknown>;

function capture(level: LogLevel = 'debug') {
  const raw: string[] = [];
  const lines: Line[] = [];
  const logger = createLogger(level, (line) => {
    raw.push(line);
    lines.push(JSON.parse(line) as Line);
  });
  return { logger, raw, lines };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

test('one JSON object per line: level by name, ISO time, the fields, msg', () => {
  const { logger, raw, lines } = capture('info');
  logger.debug('not at info');
  logger.info('started', { port: 8080 });
  logger.warn('slow', { ms: 12 });
  logger.error('failed');
  assert.is(raw.length, 3);
  for (const line of raw) assert.ok(line.endsWith('}\n') && !line.slice(0, -1).includes('\n'), line);
  assert.equal(
    lines.map((l) => l.level),
    ['info', 'warn', 'error'],
  );
  const time = String(lines[0]!.time);
  assert.is(new Date(time).toISOString(), time, 'ISO 8601 time');
  assert.equal(lines[0], { level: 'info', time, port: 8080, msg: 'started' });
  assert.equal(lines[2], { level: 'error', time: lines[2]!.time, msg: 'failed' });
});

test('levels: each writes its own lines and those above it; silent writes none', () => {
  const expected: [LogLevel, string[]][] = [
    ['debug', ['debug', 'info', 'warn', 'error']],
    ['info', ['info', 'warn', 'error']],
    ['warn', ['warn', 'error']],
    ['error', ['error']],
    ['silent', []],
  ];
  for (const [level, written] of expected) {
    const { logger, lines } = capture(level);
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    assert.equal(
      lines.map((l) => l.level),
      written,
      level,
    );
  }
});

test('credentials and email addresses never reach a line: keys redacted two levels deep, free text scrubbed', () => {
  const { logger, raw, lines } = capture();
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg';
  logger.info('refused', {
    authorization: `Bearer ${jwt}`,
    token: 'opaque-secret-1',
    email: 'alice@example.org',
    user: { email: 'bob@example.org', name: 'Bob' },
    req: { headers: { authorization: 'Basic c2VjcmV0OnBhc3N3b3Jk', accept: 'application/json' } },
    error: `insert into "app_user" ("sub", "email") values ('carol', 'carol@example.org') - duplicate key value`,
    detail: `refused Bearer ${jwt}`,
    note: `token ${jwt} seen`,
  });
  logger.warn('mail from dave@example.org');
  const text = raw.join('');
  for (const secret of [
    jwt,
    'opaque-secret-1',
    'alice@example.org',
    'bob@example.org',
    'c2VjcmV0OnBhc3N3b3Jk',
    'carol@example.org',
    'dave@example.org',
  ]) {
    assert.not.ok(text.includes(secret), `${secret} is not in the log`);
  }
  const line = lines[0]!;
  assert.is(line.authorization, '[redacted]');
  assert.is(line.token, '[redacted]');
  assert.is(line.email, '[redacted]');
  assert.equal(line.user, { email: '[redacted]', name: 'Bob' }, 'what is not secret stays');
  assert.equal(line.req, { headers: { authorization: '[redacted]', accept: 'application/json' } });
  assert.is(line.error, `insert into "app_user" ("sub", "email") values ('carol', '[email]') - duplicate key value`);
  assert.is(line.detail, 'refused Bearer [redacted]');
  assert.is(line.note, 'token [token] seen');
  assert.is(lines[1]!.msg, 'mail from [email]');
});

test('every line logged while a request is handled carries its id, across awaits and concurrent requests', async () => {
  const { logger, lines } = capture();
  const koa = new Koa();
  // As the app does (src/app.ts): the access log gives the id, the request scope carries it.
  koa.use(accessLog(logger));
  koa.use(requestScope(logger, async () => 0));
  koa.use(async (ctx) => {
    logger.info('handling');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await Promise.all(
      [1, 2].map(async (n) => {
        await new Promise((resolve) => setImmediate(resolve));
        logger.info('inside', { n });
      }),
    );
    ctx.body = 'ok';
  });
  const server = createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const answers = await Promise.all([fetch(url), fetch(url), fetch(url)]);
    const ids = answers.map((res) => res.headers.get('x-request-id') ?? '');
    for (const id of ids) assert.match(id, UUID);
    assert.is(new Set(ids).size, 3, 'one id per request');
    logger.info('between requests');
    for (const id of ids) {
      const own = lines.filter((l) => l.requestId === id).map((l) => l.msg);
      assert.equal(own.sort(), ['handling', 'inside', 'inside', 'request'], `the lines of request ${id}`);
    }
    assert.is(lines.filter((l) => l.msg === 'handling' || l.msg === 'inside').length, 9);
    assert.is(lines.find((l) => l.msg === 'between requests')!.requestId, undefined, 'no id outside a request');
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A Koa app behind the access log, as src/app.ts mounts it; `answer` sets each request's status. */
async function accessLogged(
  logger: ReturnType<typeof createLogger>,
  level: 'info' | 'debug' | undefined,
  answer: (path: string) => number,
) {
  const koa = new Koa();
  koa.use(accessLog(logger, level ? { level } : {}));
  koa.use(async (ctx) => {
    ctx.status = answer(ctx.path);
    ctx.body = ctx.status === 503 ? { code: 'DATABASE_UNAVAILABLE' } : { ok: true };
  });
  const server = createServer(koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    get: async (path: string) => {
      const res = await fetch(`${base}${path}`);
      await res.arrayBuffer();
      return res;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

test('access log at info: one line per request with method, path, query, status, ms, request id and worker; probes at debug', async () => {
  const { logger, lines } = capture('info');
  const app = await accessLogged(withFields(logger, { worker: 3 }), 'info', (path) =>
    path.endsWith('/gone') ? 404 : path.endsWith('/busy') ? 503 : 200,
  );
  try {
    const res = await app.get('/api/v1/results?sort_by=%2Bjson.score&filters=machine.cpu.count+%3E%3D+4&tags_ids=a&tags_ids=b');
    await app.get('/api/v1/health');
    await app.get('/api/v1/ready');
    await app.get('/api/v1/sites/gone');
    await app.get('/api/v1/results/busy');
    assert.equal(lines[0], {
      level: 'info',
      time: lines[0]!.time,
      worker: 3,
      requestId: res.headers.get('x-request-id'),
      method: 'GET',
      path: '/api/v1/results',
      query: 'sort_by=%2Bjson.score&filters=machine.cpu.count+%3E%3D+4&tags_ids=a&tags_ids=b',
      status: 200,
      ms: lines[0]!.ms,
      msg: 'request',
    });
    assert.ok(typeof lines[0]!.ms === 'number' && (lines[0]!.ms as number) >= 0);
    assert.equal(
      lines.map((l) => [l.level, l.path, l.status, l.msg]),
      [
        ['info', '/api/v1/results', 200, 'request'],
        ['info', '/api/v1/sites/gone', 404, 'request'],
        ['warn', '/api/v1/results/busy', 503, 'request refused: service unavailable'],
      ],
      'successful probes are not at info',
    );
    assert.is(lines[2]!.code, 'DATABASE_UNAVAILABLE');
    assert.not.ok('query' in lines[1]!, 'no query string: no query field');
  } finally {
    await app.close();
  }
});

test('access log at debug (ACCESS_LOG=false, and the default of the middleware): no line at info, every line at debug', async () => {
  for (const level of ['debug', undefined] as const) {
    const atInfo = capture('info');
    const atDebug = capture('debug');
    for (const { logger } of [atInfo, atDebug]) {
      const app = await accessLogged(logger, level, () => 200);
      try {
        await app.get('/api/v1/sites?page=2');
        await app.get('/api/v1/health');
      } finally {
        await app.close();
      }
    }
    assert.equal(atInfo.lines, [], String(level));
    assert.equal(
      atDebug.lines.map((l) => [l.level, l.path, l.query]),
      [
        ['debug', '/api/v1/sites', 'page=2'],
        ['debug', '/api/v1/health', undefined],
      ],
    );
  }
});

test('ACCESS_LOG: true by default; false, no, 0 turn the info lines off; anything else is one clear error', () => {
  const base = { oidcIssuer: 'http://127.0.0.1:1' };
  assert.is(buildConfig(base).accessLog, true);
  for (const off of ['false', 'no', '0', 'off']) assert.is(buildConfig({ ...base, accessLog: off }).accessLog, false, off);
  assert.is(buildConfig({ ...base, accessLog: 'yes' }).accessLog, true);
  assert.throws(() => buildConfig({ ...base, accessLog: 'loud' }), /ACCESS_LOG must be true or false, not 'loud'/);
});

test('access log query: filters, sorts and ids kept as sent; credentials, emails, opaque tokens and the user directory redacted', () => {
  const uuid = '0b5e5c1e-8f0e-4c2a-9d3b-6f1a2b3c4d5e';
  assert.is(loggedQuery('/api/v1/results', ''), undefined);
  assert.is(
    loggedQuery('/api/v1/results', `filters=json.a.b+%3E+4&filters=type%20%3D%3D%20AMD&sort_by=+json.x&tags_ids=${uuid}&terms=`),
    `filters=json.a.b+%3E+4&filters=type%20%3D%3D%20AMD&sort_by=+json.x&tags_ids=${uuid}&terms=`,
    'as sent: an unencoded + stays visible',
  );
  assert.is(
    loggedQuery('/api/v1/results', 'access_token=abc&Token=x&email=a%40b.example&page=1&code=xyz'),
    'access_token=[redacted]&Token=[redacted]&email=[redacted]&page=1&code=[redacted]',
  );
  const opaque = 'Zk3qT9vXb2LmN8pR4sW7yA1cE5gH0jK6oU-_dF';
  assert.is(
    loggedQuery('/api/v1/results', `filters=token+%3D%3D+${opaque}&page=1`),
    'filters=[redacted]&page=1',
    'an opaque token in a filter',
  );
  assert.is(loggedQuery('/api/v1/results', `${opaque}&page=1`), '[redacted]&page=1', 'or as a bare name');
  assert.is(
    loggedQuery('/api/v1/results', 'filters=json.average_examples_per_second_of_the_run+%3E+4'),
    'filters=json.average_examples_per_second_of_the_run+%3E+4',
    'a long name without digits is no token',
  );
  assert.is(
    loggedQuery('/api/v1/users', 'sub=alice&iss=https%3A%2F%2Fidp&page=2&per_page=10&sort_by=%2Bsub'),
    'sub=[redacted]&iss=[redacted]&page=2&per_page=10&sort_by=%2Bsub',
  );
  assert.is(loggedQuery('/api/v1/users:search', 'terms=alice&terms[]=bob'), 'terms=[redacted]&terms[]=[redacted]');
  assert.is(loggedQuery('/api/v1/users:remove', 'alice'), '[redacted]');
  assert.is(loggedQuery('/api/v1/results', `x=${'a.'.repeat(300)}`)?.length, 501, 'cut at 500 characters');
});

test('lines still buffered when the process exits are written out, the last one included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'logging-'));
  try {
    const script = join(dir, 'log-and-exit.mts');
    writeFileSync(
      script,
      `import { createLogger } from ${JSON.stringify(new URL('../src/core/logger.ts', import.meta.url).href)};\n` +
        `const logger = createLogger('info');\n` +
        `for (let i = 0; i < 20000; i++) logger.info('line', { i, padding: 'x'.repeat(100) });\n` +
        `logger.error('cannot start: the port is in use');\n` +
        `process.exit(1);\n`,
    );
    const register = new URL('../../../scripts/dev/register.js', import.meta.url).href;
    const child = spawn(process.execPath, ['--import', register, script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.is(code, 1);
    const lines = stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    assert.is(lines.length, 20001, 'every line written before the exit');
    assert.is(lines[19999]!.i, 19999);
    assert.equal([lines[20000]!.level, lines[20000]!.msg], ['error', 'cannot start: the port is in use']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

let t: TestServer;
const server = capture('debug');

test('a server: a 500 is logged with the request id that its problem+json names as instance', async () => {
  t = await startTestServer({ logLevel: 'debug' }, 'logging', { logger: server.logger });
  const token = await t.user('logging-user');
  const em = t.server.context.orm.em.fork();
  await em.execute('alter table app_user rename to app_user_gone');
  let res: HttpResponse;
  try {
    res = await t.request('GET', '/users/self', { token });
  } finally {
    await em.execute('alter table app_user_gone rename to app_user');
  }
  assert.is(res.status, 500, res.text);
  const id = res.headers.get('x-request-id') ?? '';
  assert.match(id, UUID);
  assert.is(res.body.instance, `urn:benchmarks:request:${id}`);
  const failed = server.lines.find((l) => l.msg === 'request failed');
  assert.ok(failed, 'the 500 was logged');
  assert.is(failed!.requestId, id, 'logged deep inside the request, with its id');
  assert.match(String(failed!.error), /app_user/);
});

test('a server: every problem+json answer names its request as instance, parser refusals included', async () => {
  for (const [method, path, options] of [
    ['GET', '/no/such/route', {}],
    ['GET', '/users/self', {}],
    ['GET', '/results', { query: { per_page: 1000 } }],
    ['POST', '/sites', { token: await t.user('logging-user'), rawBody: '{"name":' }],
  ] as const) {
    const res = await t.request(method, path, options);
    assert.ok(res.status >= 400, `${method} ${path}: ${res.status}`);
    const id = res.headers.get('x-request-id');
    assert.match(id ?? '', UUID);
    assert.is(res.body.instance, `urn:benchmarks:request:${id}`, `${method} ${path}`);
  }
  const tooLong = await fetch(`${t.api}/sites?x=${'a'.repeat(20_000)}`);
  assert.is(tooLong.status, 431);
  const id = tooLong.headers.get('x-request-id');
  assert.match(id ?? '', UUID);
  assert.is(((await tooLong.json()) as { instance: string }).instance, `urn:benchmarks:request:${id}`);
});

/** A GET with a raw X-Request-Id header (fetch refuses some values a client may send). */
function getWithRequestId(url: string, value: string): Promise<{ status: number; id: string; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers: { 'x-request-id': value } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-request-id']), body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a server: the access line of a list names its query; a token misplaced in the query is not logged', async () => {
  const opaque = await t.issuer.mintOpaqueToken('logging-opaque');
  const res = await t.request('GET', '/results', {
    query: { sort_by: '+execution_datetime', filters: 'machine.cpu.count >= 4', access_token: opaque },
  });
  const id = res.headers.get('x-request-id');
  const line = server.lines.find((l) => l.requestId === id && l.msg === 'request');
  assert.ok(line, 'the request was logged');
  assert.equal([line!.method, line!.path, line!.status], ['GET', '/api/v1/results', res.status]);
  assert.is(line!.query, 'sort_by=%2Bexecution_datetime&filters=machine.cpu.count+%3E%3D+4&access_token=[redacted]');
  assert.not.ok(JSON.stringify(server.lines).includes(opaque), 'the token is nowhere in the log');
});

test('a server: an incoming X-Request-Id is kept when it is a plain token of at most 64 characters, else replaced', async () => {
  const given = 'trace-42.abc_DEF';
  const kept = await getWithRequestId(`${t.api}/no/such/route`, given);
  assert.is(kept.status, 404);
  assert.is(kept.id, given);
  assert.is(kept.body.instance, `urn:benchmarks:request:${given}`);
  assert.ok(
    server.lines.some((l) => l.requestId === given && l.msg === 'request'),
    'its log line carries it',
  );
  const longest = 'a'.repeat(64);
  assert.is((await getWithRequestId(`${t.api}/health`, longest)).id, longest);
  for (const unsafe of ['a'.repeat(65), 'two words', '{"msg":"forged"}', 'a/../b', 'id;drop', '']) {
    const res = await getWithRequestId(`${t.api}/no/such/route`, unsafe);
    assert.match(res.id, UUID, `${JSON.stringify(unsafe)} is replaced`);
    assert.is(res.body.instance, `urn:benchmarks:request:${res.id}`);
  }
});

test.after(async () => {
  await t?.close();
});

test.run();
