/**
 * The authorization matrix: every operation of the contract against every kind of caller, with
 * the exact status (and error code) of each cell. Each cell sends valid input prepared for it
 * (a fresh item where the call changes something), so the status reflects authorization only.
 * The operation list comes from the contract: an operation without a row fails the test.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '@benchmarks/sdk/contract';
import { startTestServer, type TestServer } from './support/harness.ts';
import { startIssuer, type RunningIssuer } from '@benchmarks/demo/issuer';
import { expectStatus, inputs, seedCatalogue, unique, uploadResult, type Catalogue } from './support/hardening.ts';

const CALLERS = ['anonymous', 'invalid', 'expired', 'untrusted', 'unregistered', 'user', 'uploader', 'other', 'admin'] as const;
type CallerKind = (typeof CALLERS)[number];
type Expected = Record<CallerKind, number>;

interface Input {
  path: string;
  query?: Record<string, string | string[]>;
  body?: unknown;
}
interface Row {
  expect: Expected;
  /** Valid input for one cell; creates what the call consumes. */
  prepare: () => Promise<Input>;
}

// ---------------------------------------------------------------------------------------------
// The expected statuses, by the rule each operation follows.

const REFUSED_TOKEN = { anonymous: 401, invalid: 401, expired: 401, untrusted: 401 } as const;
/** Anyone: a token, valid or not, is ignored. */
const PUBLIC = (ok: number): Expected => ({
  anonymous: ok,
  invalid: ok,
  expired: ok,
  untrusted: ok,
  unregistered: ok,
  user: ok,
  uploader: ok,
  other: ok,
  admin: ok,
});
/** A valid token; registration not needed. */
const TOKEN = (ok: number, unregistered = ok): Expected => ({
  ...REFUSED_TOKEN,
  unregistered,
  user: ok,
  uploader: ok,
  other: ok,
  admin: ok,
});
/** Anyone; a token, if sent, must be valid. */
const OPTIONAL = (ok: number): Expected => ({ ...TOKEN(ok), anonymous: ok });
/** A registered user. */
const USER = (ok: number): Expected => ({ ...REFUSED_TOKEN, unregistered: 403, user: ok, uploader: ok, other: ok, admin: ok });
/** A registered administrator. */
const ADMIN = (ok: number): Expected => ({ ...REFUSED_TOKEN, unregistered: 403, user: 403, uploader: 403, other: 403, admin: ok });
/** The uploader of the result, or an administrator. */
const OWNER = (ok: number): Expected => ({ ...REFUSED_TOKEN, unregistered: 403, user: 403, uploader: ok, other: 403, admin: ok });

/** The caller's own item (a webhook of the uploader): another user's is not found. */
const SELF = (ok: number): Expected => ({ ...REFUSED_TOKEN, unregistered: 403, user: 404, uploader: ok, other: 404, admin: 404 });

/** The error code a refused cell must carry. */
function expectedCode(caller: CallerKind, status: number, row: string): string | undefined {
  if (status === 401)
    return { anonymous: 'MISSING_TOKEN', invalid: 'INVALID_TOKEN', expired: 'TOKEN_EXPIRED', untrusted: 'UNTRUSTED_ISSUER' }[
      caller as 'anonymous'
    ];
  if (status === 403) {
    if (caller === 'unregistered') return 'NOT_REGISTERED';
    if (WATCH_ROWS.has(row)) return 'NOT_OWNER';
    return OWNER_ROWS.has(row) ? 'NOT_UPLOADER' : 'NOT_ADMIN';
  }
  if (status === 409) return 'ALREADY_REGISTERED';
  if (status === 404) return row.includes('Webhook') ? 'NOT_FOUND' : 'NOT_REGISTERED';
  return undefined;
}
const OWNER_ROWS = new Set(['updateResultTags', 'listResultClaims']);
/** The owner of the watch, or an administrator. */
const WATCH_ROWS = new Set(['getWatch', 'deleteWatch', 'acknowledgeChange', 'dismissChange', 'reopenChange']);

// ---------------------------------------------------------------------------------------------

let t: TestServer;
let stranger: RunningIssuer;
let c: Catalogue;
let tokens: Record<Exclude<CallerKind, 'anonymous' | 'unregistered'>, string>;
let seeded: { result: string; claim: string };

test.before(async () => {
  t = await startTestServer({ maxWebhooksPerUser: '100' }, 'authz');
  stranger = await startIssuer();
  const admin = await t.admin('authz-admin');
  const user = await t.user('authz-user');
  const valid = await t.user('authz-signature-donor');
  const [header, payload] = user.split('.');
  tokens = {
    // A real token of the user whose signature is another token's.
    invalid: `${header}.${payload}.${valid.split('.')[2]}`,
    expired: await t.token('authz-user', { ttlSeconds: -600 }),
    untrusted: await stranger.mintAccessToken({ sub: 'authz-user' }),
    user,
    uploader: await t.user('authz-uploader'),
    other: await t.user('authz-other'),
    admin,
  };
  c = await seedCatalogue(t, admin);
  const result = await uploadResult(t, tokens.uploader, c);
  const claim = await t.request('POST', `/results/${result}:claim`, { token: tokens.other, body: { message: 'wrong numbers' } });
  expectStatus(claim, 201, 'claim');
  seeded = { result, claim: claim.body.id };
});
test.after(async () => {
  await stranger.close();
  await t.close();
});

async function create(path: string, body: unknown, token = c.admin): Promise<string> {
  const res = await t.request('POST', path, { token, body });
  expectStatus(res, 201, `POST ${path}`);
  return res.body.id;
}
const fresh = {
  benchmark: (token?: string) => create('/benchmarks', inputs.benchmark(), token),
  site: (token?: string) => create('/sites', inputs.site(), token),
  flavor: (token?: string) => create(`/sites/${c.site}/flavors`, inputs.flavor(), token),
  tag: (token?: string) => create('/tags', inputs.tag(), token),
  /** Items on review are submitted by a user. */
  onReview: (kind: 'benchmark' | 'site' | 'flavor' | 'tag') => fresh[kind](tokens.user),
  result: () => uploadResult(t, tokens.uploader, c),
  claim: async () => create(`/results/${await fresh.result()}:claim`, { message: 'suspicious' }, tokens.other),
  /** The uploader's, at a documentation address (192.0.2.0/24: public, never answers). */
  webhook: () => create('/users/self/webhooks', { url: 'http://192.0.2.1/hook' }, tokens.uploader),
  /** The uploader's watch of the seeded benchmark. */
  watch: () => create('/watches', { benchmark_id: c.benchmark, metric: 'json.score' }, tokens.uploader),
  /** A change record of the uploader's watch (as its refresh would write one). */
  change: async () => {
    const watch = await fresh.watch();
    const [row] = await t.server.context.orm.em.fork().execute<{ id: string }[]>(
      `insert into change_record (id, watch_id, result_id, site, at, before, after, magnitude, pvalue, direction)
       values (gen_random_uuid(), ?, ?, '{}', now(), '{}', '{}', 0.1, 0.0001, 'regression') returning id`,
      [watch, seeded.result],
    );
    return row!.id;
  },
  /** A delivery of the uploader's webhook, finished (so it may be delivered again). */
  delivery: async () => {
    const hook = await fresh.webhook();
    const [row] = await t.server.context.orm.em.fork().execute<{ id: string }[]>(
      `with e as (insert into alert_event (id, user_iss, user_sub, type, data)
         values (gen_random_uuid(), ?, 'authz-uploader', 'series.stale', '{}') returning id)
       insert into webhook_delivery (id, event_id, endpoint_id, state) select gen_random_uuid(), e.id, ?, 'failed' from e returning id`,
      [t.issuer.issuer, hook],
    );
    return `/users/self/webhooks/${hook}/deliveries/${row!.id}:redeliver`;
  },
};
const at = (path: string) => async (): Promise<Input> => ({ path });

const rows: Record<string, Row> = {
  getHealth: { expect: PUBLIC(200), prepare: at('/health') },
  getReady: { expect: PUBLIC(200), prepare: at('/ready') },
  getApiSpec: { expect: PUBLIC(200), prepare: at('/api-spec.json') },
  getAuthConfig: { expect: PUBLIC(200), prepare: at('/auth/config') },

  registerSelf: { expect: TOKEN(409, 201), prepare: at('/users:register') },
  upsertSelf: { expect: TOKEN(200, 201), prepare: at('/users/self') },
  getSelf: { expect: TOKEN(200, 404), prepare: at('/users/self') },
  updateSelf: { expect: USER(204), prepare: at('/users/self:update') },
  tryAdmin: { expect: ADMIN(204), prepare: at('/users/self:try_admin') },

  listBenchmarks: { expect: PUBLIC(200), prepare: at('/benchmarks') },
  searchBenchmarks: { expect: PUBLIC(200), prepare: async () => ({ path: '/benchmarks:search', query: { terms: ['hardening'] } }) },
  getBenchmark: { expect: PUBLIC(200), prepare: async () => ({ path: `/benchmarks/${c.benchmark}` }) },
  createBenchmark: { expect: USER(201), prepare: async () => ({ path: '/benchmarks', body: inputs.benchmark() }) },
  updateBenchmark: {
    expect: ADMIN(200),
    prepare: async () => ({ path: `/benchmarks/${await fresh.benchmark()}`, body: inputs.benchmark() }),
  },
  deleteBenchmark: { expect: ADMIN(204), prepare: async () => ({ path: `/benchmarks/${await fresh.benchmark()}` }) },
  approveBenchmark: { expect: ADMIN(204), prepare: async () => ({ path: `/benchmarks/${await fresh.onReview('benchmark')}:approve` }) },
  rejectBenchmark: { expect: ADMIN(204), prepare: async () => ({ path: `/benchmarks/${await fresh.onReview('benchmark')}:reject` }) },

  listSites: { expect: PUBLIC(200), prepare: at('/sites') },
  searchSites: { expect: PUBLIC(200), prepare: async () => ({ path: '/sites:search', query: { terms: ['site'] } }) },
  getSite: { expect: PUBLIC(200), prepare: async () => ({ path: `/sites/${c.site}` }) },
  createSite: { expect: USER(201), prepare: async () => ({ path: '/sites', body: inputs.site() }) },
  updateSite: { expect: ADMIN(200), prepare: async () => ({ path: `/sites/${await fresh.site()}`, body: inputs.site() }) },
  deleteSite: { expect: ADMIN(204), prepare: async () => ({ path: `/sites/${await fresh.site()}` }) },
  approveSite: { expect: ADMIN(204), prepare: async () => ({ path: `/sites/${await fresh.onReview('site')}:approve` }) },
  rejectSite: { expect: ADMIN(204), prepare: async () => ({ path: `/sites/${await fresh.onReview('site')}:reject` }) },

  listFlavors: { expect: PUBLIC(200), prepare: async () => ({ path: `/sites/${c.site}/flavors` }) },
  searchFlavors: { expect: PUBLIC(200), prepare: async () => ({ path: `/sites/${c.site}/flavors:search`, query: { terms: ['flavor'] } }) },
  createFlavor: { expect: USER(201), prepare: async () => ({ path: `/sites/${c.site}/flavors`, body: inputs.flavor() }) },
  getFlavor: { expect: PUBLIC(200), prepare: async () => ({ path: `/flavors/${c.flavor}` }) },
  getFlavorSite: { expect: PUBLIC(200), prepare: async () => ({ path: `/flavors/${c.flavor}/site` }) },
  updateFlavor: { expect: ADMIN(200), prepare: async () => ({ path: `/flavors/${await fresh.flavor()}`, body: inputs.flavor() }) },
  deleteFlavor: { expect: ADMIN(204), prepare: async () => ({ path: `/flavors/${await fresh.flavor()}` }) },
  approveFlavor: { expect: ADMIN(204), prepare: async () => ({ path: `/flavors/${await fresh.onReview('flavor')}:approve` }) },
  rejectFlavor: { expect: ADMIN(204), prepare: async () => ({ path: `/flavors/${await fresh.onReview('flavor')}:reject` }) },

  listTags: { expect: PUBLIC(200), prepare: at('/tags') },
  searchTags: { expect: PUBLIC(200), prepare: async () => ({ path: '/tags:search', query: { terms: ['tag'] } }) },
  getTag: { expect: PUBLIC(200), prepare: async () => ({ path: `/tags/${c.tag}` }) },
  createTag: { expect: USER(201), prepare: async () => ({ path: '/tags', body: inputs.tag() }) },
  updateTag: { expect: ADMIN(200), prepare: async () => ({ path: `/tags/${await fresh.tag()}`, body: inputs.tag() }) },
  deleteTag: { expect: ADMIN(204), prepare: async () => ({ path: `/tags/${await fresh.tag()}` }) },
  approveTag: { expect: ADMIN(204), prepare: async () => ({ path: `/tags/${await fresh.onReview('tag')}:approve` }) },
  rejectTag: { expect: ADMIN(204), prepare: async () => ({ path: `/tags/${await fresh.onReview('tag')}:reject` }) },

  listSubmits: { expect: ADMIN(200), prepare: at('/reports/submits') },
  listUsers: { expect: ADMIN(200), prepare: at('/users') },
  searchUsers: { expect: ADMIN(200), prepare: async () => ({ path: '/users:search', query: { terms: ['authz'] } }) },
  removeUsers: { expect: ADMIN(204), prepare: async () => ({ path: '/users:remove', query: { sub: unique('nobody') } }) },
  restoreUsers: { expect: ADMIN(204), prepare: async () => ({ path: '/users:restore', query: { sub: unique('nobody') } }) },

  listResults: { expect: PUBLIC(200), prepare: at('/results') },
  searchResults: { expect: PUBLIC(200), prepare: async () => ({ path: '/results:search', query: { terms: ['hardening'] } }) },
  compareResults: {
    expect: PUBLIC(200),
    prepare: async () => ({ path: '/results:compare', query: { benchmark_id: c.benchmark, metric: 'json.score' } }),
  },
  findChanges: {
    expect: OPTIONAL(200),
    prepare: async () => ({ path: '/results:changes', query: { benchmark_id: c.benchmark, metric: 'json.score' } }),
  },
  exportResults: { expect: PUBLIC(200), prepare: async () => ({ path: '/results:export', query: { benchmark_id: c.benchmark } }) },
  getResult: { expect: PUBLIC(200), prepare: async () => ({ path: `/results/${seeded.result}` }) },
  createResult: {
    expect: USER(201),
    prepare: async () => ({
      path: '/results',
      query: { benchmark_id: c.benchmark, flavor_id: c.flavor, execution_datetime: '2024-05-01T12:00:00Z', tags_ids: [c.tag] },
      body: { score: 1 },
    }),
  },
  createResults: {
    expect: USER(201),
    prepare: async () => ({
      path: '/results:batch',
      body: {
        items: [
          {
            benchmark_id: c.benchmark,
            flavor_id: c.flavor,
            execution_datetime: '2024-05-01T12:00:00Z',
            tags_ids: [c.tag],
            json: { score: 1 },
          },
        ],
      },
    }),
  },
  deleteResult: { expect: ADMIN(204), prepare: async () => ({ path: `/results/${await fresh.result()}` }) },
  updateResultTags: {
    expect: OWNER(204),
    prepare: async () => ({ path: `/results/${await fresh.result()}/tags`, body: { tags_ids: [c.tag] } }),
  },
  getResultUploader: { expect: ADMIN(200), prepare: async () => ({ path: `/results/${seeded.result}/uploader` }) },
  listSelfResults: { expect: USER(200), prepare: at('/users/self/results') },

  claimResult: {
    expect: USER(201),
    prepare: async () => ({ path: `/results/${await fresh.result()}:claim`, body: { message: 'not plausible' } }),
  },
  listResultClaims: { expect: OWNER(200), prepare: async () => ({ path: `/results/${seeded.result}/claims` }) },
  listClaims: { expect: ADMIN(200), prepare: at('/reports/claims') },
  getClaim: { expect: ADMIN(200), prepare: async () => ({ path: `/reports/claims/${seeded.claim}` }) },
  approveClaim: { expect: ADMIN(204), prepare: async () => ({ path: `/reports/claims/${await fresh.claim()}:approve` }) },
  rejectClaim: { expect: ADMIN(204), prepare: async () => ({ path: `/reports/claims/${await fresh.claim()}:reject` }) },
  deleteClaim: { expect: ADMIN(204), prepare: async () => ({ path: `/reports/claims/${await fresh.claim()}` }) },
  rejectClaims: { expect: ADMIN(200), prepare: async () => ({ path: '/reports/claims:reject', body: { ids: [await fresh.claim()] } }) },
  listSelfClaims: { expect: USER(200), prepare: at('/users/self/claims') },

  createWatch: {
    expect: USER(201),
    prepare: async () => ({ path: '/watches', body: { benchmark_id: c.benchmark, metric: 'json.score' } }),
  },
  listWatches: { expect: USER(200), prepare: at('/watches') },
  getWatch: { expect: OWNER(200), prepare: async () => ({ path: `/watches/${await fresh.watch()}` }) },
  deleteWatch: { expect: OWNER(204), prepare: async () => ({ path: `/watches/${await fresh.watch()}` }) },
  listChanges: { expect: USER(200), prepare: at('/changes') },
  acknowledgeChange: { expect: OWNER(200), prepare: async () => ({ path: `/changes/${await fresh.change()}:acknowledge` }) },
  dismissChange: { expect: OWNER(200), prepare: async () => ({ path: `/changes/${await fresh.change()}:dismiss` }) },
  reopenChange: { expect: OWNER(200), prepare: async () => ({ path: `/changes/${await fresh.change()}:reopen` }) },

  createWebhook: { expect: USER(201), prepare: async () => ({ path: '/users/self/webhooks', body: { url: 'http://192.0.2.1/hook' } }) },
  listWebhooks: { expect: USER(200), prepare: at('/users/self/webhooks') },
  getWebhook: { expect: SELF(200), prepare: async () => ({ path: `/users/self/webhooks/${await fresh.webhook()}` }) },
  updateWebhook: {
    expect: SELF(200),
    prepare: async () => ({ path: `/users/self/webhooks/${await fresh.webhook()}`, body: { events: ['series.stale'] } }),
  },
  deleteWebhook: { expect: SELF(204), prepare: async () => ({ path: `/users/self/webhooks/${await fresh.webhook()}` }) },
  listWebhookDeliveries: { expect: SELF(200), prepare: async () => ({ path: `/users/self/webhooks/${await fresh.webhook()}/deliveries` }) },
  redeliverWebhook: { expect: SELF(204), prepare: async () => ({ path: await fresh.delivery() }) },
};

test('every operation of the contract has a row in the matrix, and no row names a missing operation', () => {
  const contract = Object.keys(operations).sort();
  assert.equal(
    contract.filter((id) => !rows[id]),
    [],
    'operations without a row',
  );
  assert.equal(
    Object.keys(rows)
      .filter((id) => !(id in operations))
      .sort(),
    [],
    'rows without an operation',
  );
  assert.ok(contract.length >= 60);
});

test('every operation × every caller: the exact status and code of each cell', async () => {
  const mismatches: string[] = [];
  const lines: string[] = [];
  let cells = 0;
  for (const [id, row] of Object.entries(rows)) {
    const def = operations[id as keyof typeof operations];
    if (!def) continue;
    const got: string[] = [];
    for (const caller of CALLERS) {
      const input = await row.prepare();
      const token = caller === 'anonymous' ? undefined : caller === 'unregistered' ? await t.token(unique('authz-new')) : tokens[caller];
      const res = await t.request(def.method, input.path, { token, query: input.query, body: input.body });
      cells++;
      const status = row.expect[caller];
      const code = expectedCode(caller, status, id);
      got.push(String(res.status));
      if (res.status !== status || (code && res.body?.code !== code)) {
        mismatches.push(`${id} × ${caller}: expected ${status}${code ? ` ${code}` : ''}, got ${res.status} ${res.body?.code ?? ''}`);
      }
      if (res.status === 401 && !/^Bearer/.test(res.headers.get('www-authenticate') ?? ''))
        mismatches.push(`${id} × ${caller}: 401 without WWW-Authenticate`);
    }
    lines.push(`${id.padEnd(20)} ${got.map((s) => s.padStart(4)).join(' ')}`);
  }
  console.log(`authorization matrix: ${Object.keys(rows).length} operations × ${CALLERS.length} callers = ${cells} cells`);
  console.log(`${''.padEnd(20)} ${CALLERS.map((k) => k.slice(0, 4).padStart(4)).join(' ')}\n${lines.join('\n')}`);
  assert.equal(mismatches, []);
});

test.run();
