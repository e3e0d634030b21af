/**
 * Hostile input generated from the OpenAPI document the server serves: every operation gets
 * requests with wrong types, huge and tiny numbers, long and non-UTF-8 strings, deep JSON, unknown
 * fields, duplicated parameters, path traversal and SQL / JSON-path injection, from no caller, a
 * user and an administrator. Every request carries at least one part that must be refused, so
 * every write must be refused: none may give a 5xx, every error must be problem+json, and the
 * database must be exactly as before (row counts and a hash of every table).
 *
 * FUZZ_SEED picks another sequence; FUZZ_PER_OPERATION changes how many requests each operation gets.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request as httpRequest, Agent } from 'node:http';
import { startTestServer, type TestServer } from './support/harness.ts';
import {
  changedTables,
  fingerprint,
  inputs,
  pool,
  problemDefect,
  prng,
  seedCatalogue,
  unique,
  uploadResult,
  type Catalogue,
  type Rng,
} from './support/hardening.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261122);
const PER_OPERATION = Number(process.env.FUZZ_PER_OPERATION ?? 80);
const CONCURRENCY = 8;

let t: TestServer;
let c: Catalogue;
let user: string;
let ids: Record<string, string>;
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

test.before(async () => {
  t = await startTestServer({}, 'fuzz');
  const admin = await t.admin('fuzz-admin');
  user = await t.user('fuzz-user');
  c = await seedCatalogue(t, admin, { type: 'object', properties: { score: { type: 'number' } } });
  const result = await uploadResult(t, user, c, { score: 2, machine: { cpu: { count: 8 } }, note: "it's" }, [c.tag]);
  // A second result stays visible (the claim below hides the first one).
  await uploadResult(t, user, c, { score: 3, machine: { cpu: { count: 8 } }, note: "it's" }, [c.tag]);
  const claim = await t.request('POST', `/results/${result}:claim`, { token: admin, body: { message: 'looks wrong' } });
  // Items on review, so that approve / reject paths reach real rows.
  const onReview = await t.request('POST', '/sites', { token: user, body: inputs.site() });
  ids = { benchmark: c.benchmark, site: c.site, flavor: c.flavor, tag: c.tag, result, claim: claim.body.id, review: onReview.body.id };
});
test.after(async () => {
  agent.destroy();
  await t.close();
});

// ---------------------------------------------------------------------------------------------
// The operations, read from the served OpenAPI document.

type Schema = Record<string, any>;
interface Param {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Schema;
}
interface Operation {
  id: string;
  method: string;
  path: string;
  auth: string;
  params: Param[];
  body?: Schema;
}

function deref(schema: unknown, components: Record<string, Schema>): any {
  if (Array.isArray(schema)) return schema.map((s) => deref(s, components));
  if (!schema || typeof schema !== 'object') return schema;
  const ref = (schema as Schema).$ref;
  if (typeof ref === 'string') return deref(components[ref.replace('#/components/schemas/', '')], components);
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, deref(v, components)]));
}

async function readOperations(): Promise<Operation[]> {
  const doc = (await t.request('GET', '/api-spec.json')).body;
  const components = doc.components.schemas as Record<string, Schema>;
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, Schema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        path,
        auth: op['x-auth'],
        params: (op.parameters ?? []).map((p: Schema) => ({ ...p, schema: deref(p.schema, components) })),
        body: op.requestBody ? deref(op.requestBody.content['application/json'].schema, components) : undefined,
      });
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Requests: built raw (node:http), so that the path and the query go out exactly as written.

interface Req {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body?: Buffer;
  /** What was done to it, for the report. */
  labels: string[];
  /** At least one part must be refused. */
  invalid: boolean;
}

interface Res {
  status: number;
  contentType: string | null;
  text: string;
}

function send(req: Req): Promise<Res> {
  const url = new URL(t.api);
  const qs = req.query.map(([k, v]) => `${k}=${v}`).join('&');
  const path = `${url.pathname}${req.path}${qs ? `?${qs}` : ''}`;
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path,
        agent,
        headers: { accept: 'application/json', ...req.headers, ...(req.body ? { 'content-length': String(req.body.length) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: res.headers['content-type'] ?? null,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    r.end(req.body);
  });
}

const enc = encodeURIComponent;

/** A value that satisfies the schema (used as the part of a request that is not attacked). */
function validValue(schema: Schema, name: string, rng: Rng): unknown {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return validValue(branches.find((b: Schema) => b.type !== 'null') ?? branches[0], name, rng);
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'string':
      if (schema.format === 'uuid') return idFor(name);
      if (schema.format === 'date-time') return '2024-05-01T12:00:00Z';
      if (schema.format === 'date-bound') return '2024-05-01';
      if (schema.format === 'uri') return 'https://example.org/doc';
      if (schema.examples?.[0] !== undefined && typeof schema.examples[0] === 'string') return schema.examples[0];
      return unique('fuzz');
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return [validValue(schema.items ?? {}, name, rng)];
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = validValue(schema.properties[key], key, rng);
      if (!schema.properties && schema.patternProperties) out.score = 1;
      return out;
    }
    default:
      return {};
  }
}

function idFor(name: string): string {
  if (name.startsWith('benchmark')) return ids.benchmark!;
  if (name.startsWith('flavor')) return ids.flavor!;
  if (name.startsWith('site')) return ids.site!;
  if (name.startsWith('tag')) return ids.tag!;
  if (name.startsWith('resource')) return ids.result!;
  return crypto.randomUUID();
}

function pathId(path: string): string {
  if (path.startsWith('/reports/claims/')) return ids.claim!;
  if (path.startsWith('/results/')) return ids.result!;
  if (path.startsWith('/sites/')) return path.includes(':') ? ids.review! : ids.site!;
  if (path.startsWith('/flavors/')) return ids.flavor!;
  if (path.startsWith('/tags/')) return ids.tag!;
  if (path.startsWith('/benchmarks/')) return ids.benchmark!;
  return crypto.randomUUID();
}

function encodeValue(value: unknown): string {
  return enc(typeof value === 'string' ? value : JSON.stringify(value));
}

function baseline(op: Operation, rng: Rng): Req {
  const req: Req = {
    method: op.method,
    path: op.path.replace('{id}', enc(pathId(op.path))),
    query: [],
    headers: {},
    labels: [],
    invalid: false,
  };
  for (const p of op.params.filter((p) => p.in === 'query')) {
    if (!p.required && !rng.chance(0.15)) continue;
    const value = validValue(p.schema, p.name, rng);
    for (const v of Array.isArray(value) ? value : [value]) req.query.push([p.name, encodeValue(v)]);
  }
  if (op.body) {
    req.headers['content-type'] = 'application/json';
    req.body = Buffer.from(JSON.stringify(validValue(op.body, 'body', rng)));
  }
  return req;
}

// ---------------------------------------------------------------------------------------------
// What is done to a request. `invalid` mutations must make any request refused.

const SQL = [
  "' OR '1'='1",
  "'; DROP TABLE result; --",
  '" OR ""="',
  "\\' OR 1=1 --",
  "%' OR 1=1 --",
  '1) OR (1=1',
  '$$; select pg_sleep(10); $$',
  "'||(select pg_sleep(5))||'",
  '? ?? \\? $1',
  "E'\\x00'",
  '*/ union select * from app_user /*',
];
const JSON_PATH = [
  "a == 1' or '1'='1",
  "a') or 1=1 -- == 1",
  '$.a == 1',
  'a[0] == 1',
  'a.* == 1',
  "a.b' == 'x",
  'machine.cpu.count >= 1 or 1=1',
  "note == it's",
  "a == $$ || 'x' $$",
  'a.-1 == 1',
  'a.0 <= 1e308',
  'a == -0',
  `a == ${'9'.repeat(400)}`,
  'a >= 1e-400',
];
const INVALID_FILTERS = ['a ~ 1', 'a', '== 1', 'a..b == 1', 'a ==', ` == 1`, 'a === 1', 'a <> 1', 'a == 1e99999'];
const INVALID_SORTS = [
  '+nope',
  '+id;drop table result',
  '-id)--',
  'id',
  '+',
  '++id',
  `${'+id,'.repeat(9)}+id`,
  '+json.',
  '+json.a..b',
  "+json.a'b)--x,+nope",
];
const NON_UTF8 = ['%FF', '%C3%28', '%ED%A0%80', '%F0%28%8C%BC', '%E2%82', '%C0%AF', '%FF%FE%FD', '%F8%88%80%80%80'];
const TRAVERSAL = [
  '..%2F..%2Fetc%2Fpasswd',
  '..%2f..%2f..%2fetc%2fshadow',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '....%2F%2F....%2F%2Fetc',
  '%252e%252e%252f',
  '..%5C..%5Cwindows%5Cwin.ini',
  '.',
  '..',
];
const BAD_IDS = [
  '0',
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '%5B%5D',
  '%7B%7D',
  'x'.repeat(3000),
  '%00',
  "1'%20OR%20'1'%3D'1",
  '1%3BDROP%20TABLE%20result',
  '%24%7Bjndi%3Aldap%3A%2F%2Fx%7D',
];
const BAD_INTEGERS = ['abc', '1.5', '1e309', '-1', '0', '99999999999999999999', 'NaN', 'Infinity', '', '%00', '1%00'];
const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
/** Hand-made JWTs: claims and headers that try to smuggle something through the verifier. */
const CRAFTED = [
  [
    { alg: 'RS256', kid: 'k' },
    { iss: 'http://x\r\nSet-Cookie: a=b', sub: 'a', exp: 4e9 },
  ],
  [
    { alg: 'RS256', kid: 'k' },
    { iss: `http://é/${'x'.repeat(4000)}`, sub: 'a', exp: 4e9 },
  ],
  [{ alg: 'RS256' }, { iss: 42, sub: ['a'], exp: 'never' }],
  [{ alg: 'none' }, { iss: 'http://127.0.0.1', sub: 'admin', exp: 4e9 }],
  [{ alg: 'HS256' }, { iss: 'http://127.0.0.1', sub: 'admin', exp: 4e9 }],
  [
    { alg: 'RS256', kid: '../../../etc/passwd', jku: 'http://127.0.0.1:1/jwks', x5u: 'http://127.0.0.1:1/x5u' },
    { iss: 'http://127.0.0.1', sub: 'a' },
  ],
  [{ alg: 'RS256', crit: ['exp'], b64: false }, { sub: 'a' }],
  ['not json', 'not json either'],
].map(([header, payload]) => `Bearer ${b64(header)}.${b64(payload)}.${b64('signature')}`);
const BAD_TOKENS = [
  'Bearer',
  'Basic dXNlcjpwYXNz',
  'Bearer a b',
  `Bearer ${'A'.repeat(17_000)}`,
  'bearer %00',
  `Bearer ${'x.'.repeat(50)}`,
  ...CRAFTED,
];

interface Mutation {
  name: string;
  invalid: boolean;
  applies(op: Operation): boolean;
  apply(req: Req, op: Operation, rng: Rng): void;
}

const queryParams = (op: Operation) => op.params.filter((p) => p.in === 'query');
const scalarType = (p: Param) => (p.schema.anyOf ? 'union' : p.schema.type);
const hasPath = (op: Operation) => op.path.includes('{id}');
const isObjectBody = (op: Operation) => op.body?.type === 'object' && op.body.additionalProperties === false;
const setQuery = (req: Req, name: string, values: string[]) => {
  req.query = req.query.filter(([k]) => k !== name);
  for (const v of values) req.query.push([name, v]);
};
/** The request's JSON object body, or a fresh valid one when an earlier mutation broke it. */
const objectBody = (req: Req, op: Operation, rng: Rng): Record<string, unknown> => {
  try {
    const body = JSON.parse(req.body?.toString() ?? '');
    if (body && typeof body === 'object' && !Array.isArray(body) && JSON.stringify(body).length < 100_000) return body;
  } catch {
    // broken by an earlier mutation
  }
  return validValue(op.body!, 'body', rng) as Record<string, unknown>;
};
const setBody = (req: Req, body: string | Buffer, contentType = 'application/json') => {
  req.body = Buffer.isBuffer(body) ? body : Buffer.from(body);
  req.headers['content-type'] = contentType;
};

function nested(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A value the parameter's schema refuses, or null when the schema refuses nothing of the kind. */
function badValueFor(p: Param, rng: Rng): string[] | null {
  const s = p.schema;
  if (s.type === 'integer') return [rng.pick(BAD_INTEGERS)];
  if (s.type === 'boolean') return [rng.pick(['maybe', '2', 'yes%00', 'TRUE%20', '%FF'])];
  if (s.type === 'array') {
    if (p.name === 'filters')
      return rng.chance(0.5) ? [enc(rng.pick(INVALID_FILTERS))] : Array.from({ length: (s.maxItems ?? 20) + 1 }, () => enc('a == 1'));
    if (s.items?.format === 'uuid')
      return rng.chance(0.5) ? [rng.pick(BAD_IDS)] : Array.from({ length: (s.maxItems ?? 20) + 1 }, () => crypto.randomUUID());
    if (s.maxItems) return Array.from({ length: s.maxItems + 1 }, (_, i) => `t${i}`);
    return null;
  }
  if (p.name === 'sort_by') return [enc(rng.pick(INVALID_SORTS))];
  if (s.anyOf || s.enum || 'const' in s) return [rng.pick(['nope', 'APPROVED', 'approved%00', '1', '', "approved'--"])];
  if (s.format === 'uuid') return [rng.pick(BAD_IDS)];
  if (s.format === 'date-bound' || s.format === 'date-time') {
    return [
      enc(
        rng.pick(['yesterday', '2024-13-45', '2024-02-30T25:00:00Z', '+275760-09-13', '1e309', '2024-05-01 12:00', "2024-05-01' OR 1=1--"]),
      ),
    ];
  }
  if (s.type === 'string' && s.maxLength !== undefined) return ['x'.repeat(s.maxLength + 1)];
  return null;
}

const mutations: Mutation[] = [
  {
    name: 'path traversal in the id',
    invalid: true,
    applies: hasPath,
    apply: (req, op, rng) => {
      req.path = op.path.replace('{id}', rng.pick(TRAVERSAL));
    },
  },
  {
    name: 'non-UTF-8 id',
    invalid: true,
    applies: hasPath,
    apply: (req, op, rng) => {
      req.path = op.path.replace('{id}', rng.pick(NON_UTF8));
    },
  },
  {
    name: 'malformed or injected id',
    invalid: true,
    applies: hasPath,
    apply: (req, op, rng) => {
      req.path = op.path.replace('{id}', rng.pick(BAD_IDS));
    },
  },
  {
    name: 'unknown id',
    invalid: true,
    applies: hasPath,
    apply: (req, op) => {
      req.path = op.path.replace('{id}', crypto.randomUUID());
    },
  },
  {
    name: 'unknown query parameter',
    invalid: true,
    applies: () => true,
    apply: (req, _op, rng) =>
      void req.query.push([
        rng.pick([
          '__proto__',
          'constructor',
          'filter',
          '%24where',
          'verbose',
          'sort',
          'page%5Bsize%5D',
          'a%00b',
          '%FF',
          'x'.repeat(100),
          'tags_ids%5B0%5D',
        ]),
        'x',
      ]),
  },
  {
    name: 'wrong type or out-of-range query value',
    invalid: true,
    applies: (op) => queryParams(op).some((p) => badValueFor(p, prng(1)) !== null),
    apply: (req, op, rng) => {
      const p = rng.pick(queryParams(op).filter((q) => badValueFor(q, prng(1)) !== null));
      setQuery(req, p.name, badValueFor(p, rng)!);
    },
  },
  {
    name: 'duplicated scalar parameter',
    invalid: true,
    applies: (op) => queryParams(op).some((p) => scalarType(p) !== 'array'),
    apply: (req, op, rng) => {
      const p = rng.pick(queryParams(op).filter((q) => scalarType(q) !== 'array'));
      const a = encodeValue(validValue(p.schema, p.name, rng));
      const b =
        p.schema.type === 'integer'
          ? String(Number(decodeURIComponent(a)) + 1)
          : p.schema.format === 'uuid'
            ? crypto.randomUUID()
            : `${a}x`;
      setQuery(req, p.name, rng.chance(0.5) ? [a, b] : [a, a, b]);
    },
  },
  {
    name: 'non-UTF-8 query value',
    invalid: false,
    applies: (op) => queryParams(op).some((p) => p.schema.type === 'string' && !p.schema.format && !p.schema.enum),
    apply: (req, op, rng) => {
      const p = rng.pick(queryParams(op).filter((q) => q.schema.type === 'string' && !q.schema.format && !q.schema.enum));
      setQuery(req, p.name, [`a${rng.pick(NON_UTF8)}b`]);
    },
  },
  {
    name: 'SQL injection in a text parameter',
    invalid: false,
    applies: (op) =>
      queryParams(op).some(
        (p) => (p.schema.type === 'string' && !p.schema.format && !p.schema.enum && p.name !== 'sort_by') || p.name === 'terms',
      ),
    apply: (req, op, rng) => {
      const p = rng.pick(
        queryParams(op).filter(
          (q) => (q.schema.type === 'string' && !q.schema.format && !q.schema.enum && q.name !== 'sort_by') || q.name === 'terms',
        ),
      );
      setQuery(req, p.name, [enc(rng.pick(SQL))]);
    },
  },
  {
    name: 'JSON-path and SQL injection in filters',
    invalid: false,
    applies: (op) => queryParams(op).some((p) => p.name === 'filters'),
    apply: (req, _op, rng) => setQuery(req, 'filters', [enc(rng.pick(JSON_PATH)), ...(rng.chance(0.3) ? [enc(rng.pick(JSON_PATH))] : [])]),
  },
  {
    name: 'injection in sort_by',
    invalid: true,
    applies: (op) => queryParams(op).some((p) => p.name === 'sort_by'),
    apply: (req, _op, rng) => setQuery(req, 'sort_by', [enc(rng.pick(INVALID_SORTS))]),
  },
  {
    name: 'JSON sort on an injected path',
    invalid: false,
    applies: (op) => queryParams(op).some((p) => p.name === 'filters'),
    apply: (req, _op, rng) =>
      setQuery(req, 'sort_by', [
        enc(rng.pick(["-json.a'b", '+json.$$', '-json.machine.cpu.count', '+json.0.1', '-json.a;drop', '+json.\\'])),
      ]),
  },
  {
    name: 'huge and tiny page numbers',
    invalid: true,
    applies: (op) => queryParams(op).some((p) => p.name === 'page'),
    apply: (req, _op, rng) =>
      setQuery(req, rng.pick(['page', 'per_page']), [
        rng.pick(['0', '-1', '1e309', '9007199254740993', '101', '1000001', '1.0000001', '-0.5', '1e-400']),
      ]),
  },
  {
    name: 'malformed JSON body',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req, _op, rng) =>
      setBody(req, rng.pick(['{"a":', "{'a':1}", '[1,2', '{"a":1}}', 'NaN', '{"a":01}', '{"a":"\\x"}', '\u0000', '{"a":1,}', '{"a" 1}'])),
  },
  {
    name: 'body of another JSON type',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req, _op, rng) => setBody(req, rng.pick(['[]', '"text"', '42', 'null', 'true', '[{"a":1}]', '-0', '1e309'])),
  },
  {
    name: 'deep JSON',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req, _op, rng) => {
      const depth = rng.pick([65, 1000, 10_000]);
      setBody(req, rng.chance(0.5) ? nested(depth) : '['.repeat(depth) + ']'.repeat(depth));
    },
  },
  {
    name: 'unknown body field',
    invalid: true,
    applies: isObjectBody,
    apply: (req, op, rng) => {
      const body = objectBody(req, op, rng);
      body[rng.pick(['isAdmin', 'status', 'id', 'uploader_sub', 'x'.repeat(300), '$where'])] = rng.pick([true, 'approved', 1, null, {}]);
      setBody(req, JSON.stringify(body));
    },
  },
  {
    name: 'prototype pollution in the body',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req, _op, rng) =>
      setBody(req, rng.pick(['{"__proto__":{"isAdmin":true}}', '{"a":{"__proto__":{"x":1}}}', '{"a":[{"b":1,"__proto__":null}]}'])),
  },
  {
    name: 'body field of a wrong type',
    invalid: true,
    applies: (op) => isObjectBody(op) && Object.keys(op.body!.properties ?? {}).length > 0,
    apply: (req, op, rng) => {
      const body = objectBody(req, op, rng);
      const key = rng.pick(Object.keys(op.body!.properties));
      const schema = op.body!.properties[key];
      const wrong =
        schema.type === 'array'
          ? rng.pick(['x', 1, { a: 1 }, [1, 2], ['nope']])
          : schema.type === 'string'
            ? rng.pick([1, 1e308, -0, true, [], { a: 1 }])
            : // biome-ignore lint/correctness/noPrecisionLoss: deliberate: an integer beyond 2^53 among the wrong-typed values sent
              rng.pick([[], { a: 1 }, 12345678901234567890, true]);
      body[key] = key === 'json_schema' ? rng.pick([1, 'x', [], null]) : wrong;
      setBody(req, JSON.stringify(body));
    },
  },
  {
    name: 'body string over its maximum length',
    invalid: true,
    applies: (op) => isObjectBody(op) && Object.values(op.body!.properties ?? {}).some((s: any) => s.maxLength),
    apply: (req, op, rng) => {
      const body = objectBody(req, op, rng);
      const [key, schema] = rng.pick(Object.entries(op.body!.properties as Record<string, Schema>).filter(([, s]) => s.maxLength));
      body[key] = rng.pick(['x', 'é', '😀', '\u202e']).repeat(schema.maxLength + 1);
      setBody(req, JSON.stringify(body));
    },
  },
  {
    name: 'NUL or unpaired surrogate in a body string',
    invalid: true,
    applies: (op) => isObjectBody(op) || op.body?.patternProperties !== undefined,
    apply: (req, op, rng) => {
      const bad = rng.pick(['a\\u0000b', '\\ud800', 'x\\udfffy', '\\u0000']);
      if (!isObjectBody(op)) return setBody(req, `{"score":1,"k":{"deep":["${bad}"]}}`);
      const body = objectBody(req, op, rng);
      const [key, schema] = rng.pick(Object.entries(op.body!.properties as Record<string, Schema>));
      const value = key === 'json_schema' ? { description: '@' } : schema.type === 'array' ? ['@'] : '@';
      setBody(req, JSON.stringify({ ...body, [key]: value }).replace('"@"', `"${bad}"`));
    },
  },
  {
    name: 'body that is not JSON',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req, _op, rng) => {
      const [type, body] = rng.pick([
        ['text/plain', 'name=x'],
        ['application/x-www-form-urlencoded', 'name=x&address=y'],
        ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--'],
        ['application/xml', '<a>1</a>'],
        ['application/json; charset=utf-16', '{"a":1}'],
        ['application/json; charset=x-unknown', '{"a":1}'],
      ] as const);
      setBody(req, body, type);
    },
  },
  {
    name: 'empty body',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req) => {
      delete req.body;
      req.headers['content-type'] = 'application/json';
    },
  },
  {
    name: 'body over the size limit',
    invalid: true,
    applies: (op) => !!op.body,
    apply: (req) => setBody(req, `{"a":"${'x'.repeat(1024 * 1024 + 10)}"}`),
  },
  {
    name: 'non-UTF-8 bytes and odd numbers in the body',
    invalid: false,
    applies: (op) => !!op.body,
    apply: (req, _op, rng) => {
      const text = JSON.stringify(objectBody(req, _op, rng));
      const odd = rng.pick(['\xff\xfe', '\xed\xa0\x80', '\xc0\xaf']);
      const at = text.lastIndexOf('"');
      const bytes =
        at > 0
          ? Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(odd, 'latin1'), Buffer.from(text.slice(at))])
          : Buffer.from(text);
      setBody(req, bytes);
    },
  },
  {
    name: 'garbage Authorization header',
    invalid: false,
    applies: () => true,
    apply: (req, _op, rng) => {
      req.headers.authorization = rng.pick(BAD_TOKENS);
    },
  },
];

// ---------------------------------------------------------------------------------------------

interface Failure {
  op: string;
  request: string;
  problem: string;
}

function describe(req: Req): string {
  const qs = req.query.map(([k, v]) => `${k}=${v}`).join('&');
  const body = req.body
    ? ` body(${req.headers['content-type']}) ${req.body.subarray(0, 120).toString('latin1')}${req.body.length > 120 ? '…' : ''}`
    : '';
  return `${req.method} ${req.path.slice(0, 120)}${qs ? `?${qs.slice(0, 200)}` : ''} [${req.labels.join('; ')}]${body}`;
}

function generate(op: Operation, rng: Rng, tokens: (string | undefined)[], i: number): Req {
  const req = baseline(op, rng);
  const token = tokens[i % tokens.length];
  if (token) req.headers.authorization = `Bearer ${token}`;
  const applicable = mutations.filter((m) => m.applies(op));
  const isWrite = op.method !== 'GET';
  // The first mutation always refuses the request for a write, and cycles through every kind.
  const primaries = isWrite ? applicable.filter((m) => m.invalid) : applicable;
  const chosen = [primaries[i % primaries.length]!];
  const extra = rng.int(3);
  for (let k = 0; k < extra; k++) {
    const m = rng.pick(applicable);
    // A second body or path mutation would undo the first one's refusal: keep to other parts.
    if (isWrite && /body|id$|traversal/.test(m.name) && /body|id$|traversal/.test(chosen[0]!.name)) continue;
    chosen.push(m);
  }
  for (const m of chosen) {
    m.apply(req, op, rng);
    req.labels.push(m.name);
    req.invalid ||= m.invalid;
  }
  // The primary mutation must still hold after the others (e.g. a later setQuery on another name).
  if (isWrite) chosen[0]!.apply(req, op, rng);
  return req;
}

test('hostile requests generated from the OpenAPI document: no 5xx, problem+json errors, nothing written', async () => {
  const ops = await readOperations();
  assert.ok(ops.length >= 60, `the document lists every operation (${ops.length})`);
  const rng = prng(SEED);
  const admin = c.admin;
  const tokens = [undefined, user, admin];
  const failures: Failure[] = [];
  let sent = 0;
  let refused = 0;
  const byStatus = new Map<number, number>();
  const started = Date.now();

  for (const op of ops) {
    const requests = Array.from({ length: PER_OPERATION }, (_, i) => generate(op, rng, tokens, i));
    const before = await fingerprint(t.databaseUrl);
    await pool(requests, CONCURRENCY, async (req) => {
      let res: Res;
      try {
        res = await send(req);
      } catch (err) {
        failures.push({ op: op.id, request: describe(req), problem: `no answer: ${(err as Error).message}` });
        return;
      }
      sent++;
      byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
      if (res.status >= 500) failures.push({ op: op.id, request: describe(req), problem: `${res.status} ${res.text.slice(0, 300)}` });
      if (res.status >= 400) {
        refused++;
        const defect = problemDefect(res.status, res.contentType, res.text);
        if (defect) failures.push({ op: op.id, request: describe(req), problem: `${res.status}: ${defect}` });
      } else if (op.method !== 'GET') {
        failures.push({
          op: op.id,
          request: describe(req),
          problem: `a refused write was accepted: ${res.status} ${res.text.slice(0, 200)}`,
        });
      }
    });
    const changed = changedTables(before, await fingerprint(t.databaseUrl));
    if (changed.length)
      failures.push({ op: op.id, request: `${requests.length} requests`, problem: `tables changed: ${changed.join(', ')}` });
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const statuses = [...byStatus]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}×${n}`)
    .join(' ');
  console.log(
    `fuzz: seed ${SEED}, ${ops.length} operations, ${sent} requests (${refused} refused) in ${seconds}s; statuses ${statuses}; ${failures.length} failures`,
  );
  for (const f of failures.slice(0, 25)) console.log(`  ${f.op}: ${f.problem}\n    ${f.request}`);
  assert.is(failures.length, 0, `${failures.length} failures (first above)`);
  assert.ok(sent >= ops.length * PER_OPERATION, 'every request was answered');
});

test('SQL and JSON-path injection match nothing and change nothing; the plain filter still matches', async () => {
  const before = await fingerprint(t.databaseUrl);
  const total = async (query: Record<string, string | string[]>, path = '/results') => {
    const res = await t.request('GET', path, { query });
    assert.is(res.status, 200, `${path} ${JSON.stringify(query)}: ${res.text}`);
    return res.body.total as number;
  };
  assert.is(await total({ filters: 'machine.cpu.count == 8' }), 1, 'the plain filter matches the visible seeded result');
  assert.is(await total({ filters: "note == it's" }), 1, 'a quote in a value is just a character');
  for (const filter of JSON_PATH.filter((f) => !f.startsWith('note'))) {
    // Either a well-formed filter that matches nothing, or a malformed one refused as such.
    const res = await t.request('GET', '/results', { query: { filters: filter } });
    if (res.status === 422) assert.is(res.body.code, 'INVALID_FILTER', filter);
    else assert.equal([res.status, res.body.total], [200, 0], filter);
  }
  for (const term of SQL) {
    assert.is(await total({ terms: term }, '/results:search'), 0, term);
    assert.is(await total({ terms: term }, '/sites:search'), 0, term);
    assert.is(await total({ name: term }, '/sites'), 0, term);
    assert.is(await total({ container_image: term }, '/benchmarks'), 0, term);
  }
  assert.equal(changedTables(before, await fingerprint(t.databaseUrl)), []);
});

test('accepted writes of odd but valid values are stored verbatim, one row each', async () => {
  const odd = [
    ...SQL,
    '\u202eevil',
    '😀 emoji',
    'é'.repeat(200),
    '%00 literally',
    '\\u0000 literally',
    'a?b??c',
    '<script>alert(1)</script>',
  ];
  const before = Number((await t.request('GET', '/sites', { query: { per_page: 1 } })).body.total);
  let created = 0;
  for (const [i, text] of odd.entries()) {
    const name = `${`${text}`.slice(0, 190)} ${i}`;
    const res = await t.request('POST', '/sites', { token: c.admin, body: { name, address: text.slice(0, 500), description: text } });
    assert.is(res.status, 201, `${JSON.stringify(text)}: ${res.text}`);
    created++;
    const got = await t.request('GET', `/sites/${res.body.id}`);
    assert.equal([got.body.name, got.body.address, got.body.description], [name, text.slice(0, 500), text], 'stored as sent');
  }
  const after = Number((await t.request('GET', '/sites', { query: { per_page: 1 } })).body.total);
  assert.is(after - before, created, 'exactly one row per accepted write');

  const json = {
    "'; drop table result; --": 1,
    // biome-ignore lint/correctness/noPrecisionLoss: deliberate: an integer beyond 2^53 among the edge numbers that must round-trip
    nested: { '$.a': [1e308, -0, 123456789012345678901234567890, 5e-324] },
    text: SQL,
    unicode: '😀\u202e',
  };
  const id = await uploadResult(t, user, c, { score: 1, ...json });
  const got = await t.request('GET', `/results/${id}`);
  assert.equal(got.body.json, JSON.parse(JSON.stringify({ score: 1, ...json })), 'the result JSON round-trips');
});

test.run();
