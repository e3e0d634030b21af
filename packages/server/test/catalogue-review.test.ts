/**
 * What the four reviewed resources share (docs/review.md): submitting on review, approve and reject,
 * updates, deletes blocked by references and their cascade, exact filters, search, sort and pages.
 * The server runs them all through one mechanism (services/catalogue/catalogue.ts, review.ts), so
 * each behaviour is one test here, run for every resource from its descriptor (`RESOURCES`): its
 * operations (the contract's, which give the paths and operationIds), a valid body, what identifies
 * an item, what refers to one and what a cascade does to that. One server and database for the
 * file (support/harness.ts), as for every test file.
 *
 * What only one resource does stays in its own file: benchmarks.test.ts (images, tags, JSON
 * Schemas), sites.test.ts (the flavors a reject takes along or that block it), flavors.test.ts (the
 * site a flavor belongs to), tags.test.ts (REVIEW_TAGS), flavor-prices.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OperationDef } from '@benchmarks/sdk/contract';
import { BENCHMARK_ALIASES, BenchmarkSort, benchmarkOperations as bo } from '@benchmarks/sdk/contract/benchmarks';
import { FlavorSort, flavorOperations as fo } from '@benchmarks/sdk/contract/flavors';
import { SiteSort, siteOperations as so } from '@benchmarks/sdk/contract/sites';
import { TagSort, tagOperations as to } from '@benchmarks/sdk/contract/tags';
import { startTestServer, type TestServer } from './support/harness.ts';
import { assertProblem } from './support/problem.ts';
import { Benchmark, Flavor, Result, ResultTag, Site, Tag } from '../src/entities/index.ts';

let t: TestServer;
let alice: string; // a registered user
let admin: string;
let stranger: string; // a valid token of someone not registered
/** Approved items that the results inserted below refer to unless told otherwise. */
const base = { benchmark: '', site: '', flavor: '' };

type Body = Record<string, any>;
type Query = Record<string, string | number | boolean | (string | number)[] | undefined>;
/** Where a resource's items are created: the site of a flavor (a fresh one per test); nothing for the others. */
interface Scope {
  parent?: string;
}
/** What `refer` made refer to an item: results, and for a site its flavors. */
interface References {
  results: string[];
  /** The members of the 409 REFERENCED body: `count` results, and `flavors` for a site. */
  counts: Record<string, number>;
  /** What the 409 detail names after the results: ' and 2 flavors'. */
  besides: string;
  flavors?: string[];
}

interface Resource {
  type: 'benchmark' | 'site' | 'flavor' | 'tag';
  label: string;
  ops: Record<'list' | 'search' | 'get' | 'create' | 'update' | 'remove' | 'approve' | 'reject', OperationDef>;
  entity: typeof Benchmark | typeof Site | typeof Flavor | typeof Tag;
  sort: { readonly fields: readonly string[]; readonly default: string };
  /** The members of a response, sorted. */
  keys: string[];
  scope(): Promise<Scope>;
  /** A valid creation body whose unique field(s) come from `key`. */
  body(key: string, fields?: Body): Body;
  /** The response's members that a body gives (all but id, status and upload_datetime). */
  view(body: Body, scope: Scope): Body;
  /** The stored rows with the unique field(s) of `body` (an ORM filter). */
  stored(body: Body, scope: Scope): Record<string, unknown>;
  /** The 409 DUPLICATE detail for the unique field(s) of `body`. */
  duplicate(body: Body): string;
  /** How messages name the item of `body`. */
  title(body: Body): string;
  /** Optional fields, given: absent, each is null. */
  optional: Body;
  /** Other values of the optional and other editable fields, for an update. */
  revised: Body;
  /** Other values of the fields that are not unique: a body with them and a taken key is a duplicate. */
  other: Body;
  /** Fields whose surrounding spaces are trimmed. */
  trimmed: string[];
  /** Invalid creation bodies of this resource (those of every resource are in the test), each with a path its errors name. */
  invalid(scope: Scope): [Body, string][];
  /** An update body missing a required field, and that field's path. */
  incomplete: [Body, string];
  /** The fields :search looks in. */
  searched: string[];
  /** Five bodies with ties in the fields that are not unique, for sort and pages. */
  sortSet(prefix: string): Body[];
  /** A sort field's value for `ordered` when it is not the item's member of that name. */
  sortValue?(item: Body, field: string): unknown;
  /** Filters that are deprecated aliases of others (compat-benchmark-aliases.test.ts): not combined with them. */
  aliases?: readonly (readonly [string, string])[];
  /** Sorts an earlier test of this resource checked (the others are generated). */
  sorts: string[];
  /** Makes results (and a site's flavors) refer to an item. */
  refer(item: Body, scope: Scope): Promise<References>;
  /** What a cascade does, as the 409 detail says: 'delete them too'. */
  cascadeHint: string;
  /** Asserts what the cascade did to what referred to the item. */
  afterCascade(item: Body, refs: References, scope: Scope): Promise<void>;
}

const SCHEMA = { type: 'object', properties: { time: { type: 'number' } } };
/** Ids no item has: not UUIDs, in the forms earlier tests used. */
const MALFORMED = ['not-a-uuid', 'bad', 'bad-id', '1', '123', 'xyz', 'zzz', 'nope'];

const em = () => t.server.context.orm.em.fork();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** An operation's path, its `{id}` filled (for a flavor's list, search and create: the site's). */
const at = (op: OperationDef, id = '') => op.path.replace('{id}', id);
const ids = (page: { items: Body[] }) => page.items.map((i) => i.id);
const props = (schema: unknown) => Object.keys((schema as { properties: Record<string, unknown> }).properties);
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The eight operations of a reviewed resource, by their operationIds: listSites … rejectSite. */
function opsOf(operations: Record<string, OperationDef>, name: string): Resource['ops'] {
  const roles = { list: `list${name}s`, search: `search${name}s`, get: `get${name}`, create: `create${name}` };
  const more = { update: `update${name}`, remove: `delete${name}`, approve: `approve${name}`, reject: `reject${name}` };
  const picked = Object.entries({ ...roles, ...more }).map(([role, id]) => [role, operations[id] ?? assert.unreachable(`no ${id}`)]);
  return Object.fromEntries(picked) as Resource['ops'];
}

/** The exact filters of a list: its query's members that the search does not have. */
function filterFields(d: Resource): string[] {
  const search = new Set(props(d.ops.search.query));
  return props(d.ops.list.query).filter((k) => !search.has(k));
}
/** The list's exact filters with an item's values. */
const exact = (d: Resource, item: Body): Query => Object.fromEntries(filterFields(d).map((f) => [f, item[f]]));
/** The fields an update body may echo as read: the update body's members that the creation body does not have. */
function readOnlyFields(d: Resource): string[] {
  const created = new Set(props(d.ops.create.body));
  return props(d.ops.update.body).filter((k) => !created.has(k));
}
/** A value of a read-only field other than the stored one. */
function differing(field: string, value: unknown): unknown {
  if (field === 'id' || field.endsWith('_id')) return randomUUID();
  if (field === 'status') return value === 'approved' ? 'on_review' : 'approved';
  if (field === 'upload_datetime') return '2000-01-01T00:00:00.000';
  return `${value}-other`;
}

function compare(a: unknown, b: unknown): number {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < a.length; i++) {
      const c = compare(a[i], b[i]);
      if (c) return c;
    }
    return 0;
  }
  if (a === b) return 0;
  if (a === null) return 1; // PostgreSQL: nulls last ascending, first descending
  if (b === null) return -1;
  return (a as string) < (b as string) ? -1 : 1;
}

/**
 * The ids of `items` in the order `sortBy` asks for, worked out here: each term in turn, then id
 * ascending (docs: every order ends with id). The values are plain ASCII, ordered alike here and
 * by PostgreSQL.
 */
function ordered(d: Resource, items: Body[], sortBy: string): string[] {
  const terms = sortBy.split(',').map((term) => ({ descending: term.trim().startsWith('-'), field: term.trim().slice(1) }));
  const value = (item: Body, field: string) => d.sortValue?.(item, field) ?? item[field];
  return [...items]
    .sort((x, y) => {
      for (const { field, descending } of terms) {
        const c = compare(value(x, field), value(y, field));
        if (c) return descending ? -c : c;
      }
      return compare(x.id, y.id);
    })
    .map((i) => i.id);
}

async function create(d: Resource, scope: Scope, body: Body, token = admin): Promise<Body> {
  const res = await t.request('POST', at(d.ops.create, scope.parent), { token, body });
  assert.is(res.status, 201, res.text);
  return res.body;
}

/** Creates the items one after the other; `since` is an upload_after that lists them and no earlier one. */
async function createAll(d: Resource, scope: Scope, bodies: Body[]): Promise<{ items: Body[]; since: string }> {
  const since = new Date().toISOString();
  await sleep(2);
  const items = [];
  for (const body of bodies) items.push(await create(d, scope, body));
  return { items, since };
}

async function list(d: Resource, scope: Scope, query: Query): Promise<any> {
  const res = await t.request('GET', at(d.ops.list, scope.parent), { query });
  assert.is(res.status, 200, res.text);
  return res.body;
}

async function search(d: Resource, scope: Scope, query: Query): Promise<any> {
  const res = await t.request('GET', at(d.ops.search, scope.parent), { query });
  assert.is(res.status, 200, res.text);
  return res.body;
}

const count = (d: Resource, where: Record<string, unknown> = {}) => em().count(d.entity as typeof Site, where);

/** The stored upload time (tags show none), as an upload bound. */
async function uploaded(d: Resource, id: string): Promise<string> {
  const row = await em().findOneOrFail(d.entity as typeof Site, { id });
  return row.upload_datetime.toISOString();
}

/** Whether GET /reports/submits lists the item (the newest submits of its type first). */
async function submitted(d: Resource, id: string): Promise<boolean> {
  const res = await t.request('GET', '/reports/submits', {
    token: admin,
    query: { resource_type: d.type, sort_by: '-upload_datetime', per_page: 100 },
  });
  assert.is(res.status, 200, res.text);
  return res.body.items.some((s: any) => s.resource_id === id);
}

/** Results inserted directly (results are another part of the API), referring to the base items unless told. */
async function insertResults(n: number, refs: { benchmark_id?: string; site_id?: string; flavor_id?: string } = {}): Promise<string[]> {
  const fork = em();
  const made: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = randomUUID();
    fork.create(Result, {
      id,
      benchmark_id: refs.benchmark_id ?? base.benchmark,
      site_id: refs.site_id ?? base.site,
      flavor_id: refs.flavor_id ?? base.flavor,
      json: { time: 1 },
      execution_datetime: new Date(),
      upload_datetime: new Date(),
      uploader_iss: t.issuer.issuer,
      uploader_sub: 'root',
    });
    made.push(id);
  }
  await fork.flush();
  return made;
}

const resultsLeft = (results: string[]) => em().count(Result, { id: { $in: results } });

// ---------------------------------------------------------------------------------------------
// The resources

const benchmarks: Resource = {
  type: 'benchmark',
  label: 'Benchmark',
  ops: opsOf(bo, 'Benchmark'),
  entity: Benchmark,
  sort: BenchmarkSort,
  keys: [
    'container_image',
    'container_tag',
    'description',
    'docker_image',
    'docker_tag',
    'id',
    'json_schema',
    'name',
    'status',
    'upload_datetime',
    'url',
  ],
  scope: async () => ({}),
  body: (key, fields = {}) => ({ container_image: key, container_tag: '1', json_schema: SCHEMA, ...fields }),
  view: (b) => ({
    name: `${b.container_image}:${b.container_tag}`,
    container_image: b.container_image,
    container_tag: b.container_tag,
    docker_image: b.container_image,
    docker_tag: b.container_tag,
    json_schema: b.json_schema,
    description: b.description ?? null,
    url: b.url ?? null,
  }),
  stored: (b) => ({ container_image: b.container_image, container_tag: b.container_tag }),
  duplicate: (b) => `Benchmark ${b.container_image}:${b.container_tag} already exists.`,
  title: (b) => `${b.container_image}:${b.container_tag}`,
  optional: { description: 'Ray tracing', url: 'https://example.org/c-ray' },
  revised: { container_tag: '2', json_schema: { type: 'object', required: ['x'] }, description: 'new', url: 'https://example.org/new' },
  other: { json_schema: {}, description: 'another' },
  trimmed: [],
  invalid: () => [
    [{}, '/container_image'],
    [{ container_image: 'a', json_schema: {} }, '/container_tag'],
    [{ container_image: 'a', container_tag: 5, json_schema: {} }, '/container_tag'],
  ],
  incomplete: [{ container_image: 'up-x', json_schema: {} }, '/container_tag'],
  searched: ['container_image', 'container_tag', 'description'],
  sortSet: (p) => [
    { container_image: `${p}-b`, container_tag: '1', json_schema: {}, description: 'same', url: 'https://example.org/1' },
    { container_image: `${p}-a`, container_tag: '2', json_schema: {}, description: 'same', url: 'https://example.org/2' },
    { container_image: `${p}-a`, container_tag: '1', json_schema: {}, description: 'other', url: 'https://example.org/1' },
    { container_image: `${p}-c`, container_tag: '1', json_schema: {}, description: 'same', url: 'https://example.org/2' },
    { container_image: `${p}-c`, container_tag: '2', json_schema: {}, description: 'other', url: 'https://example.org/1' },
  ],
  // `name` sorts by image, then tag.
  sortValue: (item, field) => (field === 'name' ? [item.container_image, item.container_tag] : undefined),
  aliases: BENCHMARK_ALIASES,
  sorts: ['-name', '+description,-container_image', '-description', '+id', '-upload_datetime'],
  refer: async (b) => ({ results: await insertResults(2, { benchmark_id: b.id }), counts: { count: 2 }, besides: '' }),
  cascadeHint: 'delete them too',
  afterCascade: async (_b, refs) => {
    assert.is(await resultsLeft(refs.results), 0, 'its results are deleted');
  },
};

const sites: Resource = {
  type: 'site',
  label: 'Site',
  ops: opsOf(so, 'Site'),
  entity: Site,
  sort: SiteSort,
  keys: ['address', 'description', 'id', 'name', 'status', 'upload_datetime'],
  scope: async () => ({}),
  body: (key, fields = {}) => ({ name: key, address: `${key} street`, ...fields }),
  view: (b) => ({ name: b.name, address: b.address, description: b.description ?? null }),
  stored: (b) => ({ name: b.name }),
  duplicate: (b) => `Site ${b.name} already exists.`,
  title: (b) => b.name,
  optional: { description: 'Galicia' },
  revised: { address: 'New address', description: 'new' },
  other: { address: 'elsewhere', description: 'another' },
  trimmed: ['name', 'address'],
  invalid: () => [
    [{}, '/name'],
    [{ name: 'x' }, '/address'],
    [{ name: 'x', address: 3 }, '/address'],
    [{ name: '   ', address: 'y' }, '/name'],
    [{ name: '', address: 'y' }, '/name'],
    [{ name: 'n'.repeat(201), address: 'y' }, '/name'],
    [{ name: 'x', address: 'a'.repeat(501) }, '/address'],
  ],
  incomplete: [{ name: 'Z' }, '/address'],
  searched: ['name', 'address', 'description'],
  sortSet: (p) => [
    { name: `${p}-c`, address: `${p}-addr-1`, description: 'x' },
    { name: `${p}-a`, address: `${p}-addr-2`, description: 'y' },
    { name: `${p}-b`, address: `${p}-addr-1`, description: 'y' },
    { name: `${p}-d`, address: `${p}-addr-2`, description: 'x' },
    { name: `${p}-e`, address: `${p}-addr-1`, description: 'x' },
  ],
  sorts: ['-address,+name', '+address', '-name'],
  // Results at the site, on its flavors; the flavors refer to it too.
  refer: async (s) => {
    const [f1, f2] = [
      await create(flavors, { parent: s.id }, { name: 'ref-1' }),
      await create(flavors, { parent: s.id }, { name: 'ref-2' }),
    ];
    const results = [
      ...(await insertResults(2, { site_id: s.id, flavor_id: f1!.id })),
      ...(await insertResults(1, { site_id: s.id, flavor_id: f2!.id })),
    ];
    return { results, counts: { count: 3, flavors: 2 }, besides: ' and 2 flavors', flavors: [f1!.id, f2!.id] };
  },
  cascadeHint: 'delete its flavors and their results too',
  afterCascade: async (s, refs) => {
    assert.is(await resultsLeft(refs.results), 0, 'its results are deleted');
    assert.is(await em().count(Flavor, { site_id: s.id }), 0, 'its flavors are deleted');
    for (const f of refs.flavors!) assertProblem(await t.request('GET', at(fo.getFlavor, f)), 404, 'NOT_FOUND');
  },
};

let parents = 0;
const flavors: Resource = {
  type: 'flavor',
  label: 'Flavor',
  ops: opsOf(fo, 'Flavor'),
  entity: Flavor,
  sort: FlavorSort,
  keys: ['currency', 'description', 'id', 'name', 'price_per_hour', 'site_id', 'status', 'upload_datetime'],
  scope: async () => ({ parent: (await create(sites, {}, sites.body(`flavor-parent-${++parents}`))).id }),
  body: (key, fields = {}) => ({ name: key, ...fields }),
  view: (b, scope) => ({
    site_id: scope.parent,
    name: b.name,
    description: b.description ?? null,
    price_per_hour: b.price_per_hour ?? null,
    currency: b.currency ?? null,
  }),
  stored: (b, scope) => ({ name: b.name, site_id: scope.parent }),
  duplicate: (b) => `Flavor ${b.name} already exists at this site.`,
  title: (b) => b.name,
  optional: { description: '1 vCPU' },
  revised: { description: 'new' },
  other: { description: 'another' },
  trimmed: ['name'],
  invalid: (scope) => [
    [{}, '/name'],
    [{ name: 3 }, '/name'],
    [{ name: '  ' }, '/name'],
    [{ name: 'x', site_id: scope.parent }, '/site_id'],
  ],
  incomplete: [{ description: 'x' }, '/name'],
  searched: ['name', 'description'],
  sortSet: (p) => [
    { name: `${p}-c`, description: 'bound' },
    { name: `${p}-a`, description: 'memory' },
    { name: `${p}-b`, description: 'bound' },
    { name: `${p}-d`, description: 'memory' },
    { name: `${p}-e`, description: 'bound' },
  ],
  sorts: ['-name', '+description', '+site_id,-description,+name'],
  refer: async (f, scope) => ({
    results: await insertResults(2, { site_id: scope.parent, flavor_id: f.id }),
    counts: { count: 2 },
    besides: '',
  }),
  cascadeHint: 'delete them too',
  afterCascade: async (_f, refs, scope) => {
    assert.is(await resultsLeft(refs.results), 0, 'its results are deleted');
    assert.is((await t.request('GET', at(so.getSite, scope.parent))).status, 200, 'the site stays');
  },
};

const tags: Resource = {
  type: 'tag',
  label: 'Tag',
  ops: opsOf(to, 'Tag'),
  entity: Tag,
  sort: TagSort,
  keys: ['description', 'id', 'name', 'status'],
  scope: async () => ({}),
  body: (key, fields = {}) => ({ name: key, ...fields }),
  view: (b) => ({ name: b.name, description: b.description ?? null }),
  stored: (b) => ({ name: b.name }),
  duplicate: (b) => `Tag ${b.name} already exists.`,
  title: (b) => b.name,
  optional: { description: 'Uses a GPU' },
  revised: { description: 'new' },
  other: { description: 'another' },
  trimmed: ['name'],
  invalid: () => [
    [{}, '/name'],
    [{ name: null }, '/name'],
    [{ name: '' }, '/name'],
    [{ name: 'x'.repeat(201) }, '/name'],
  ],
  incomplete: [{ description: 'x' }, '/name'],
  searched: ['name', 'description'],
  sortSet: (p) => [
    { name: `${p}-c`, description: 'Compute bound' },
    { name: `${p}-a`, description: 'Memory bound' },
    { name: `${p}-b`, description: 'Compute bound' },
    { name: `${p}-d`, description: 'Memory bound' },
    { name: `${p}-e`, description: 'Compute bound' },
  ],
  sorts: ['-name', '-description'],
  // Results carrying the tag.
  refer: async (tag) => {
    const results = await insertResults(2);
    const fork = em();
    for (const id of results) fork.create(ResultTag, { result_id: id, tag_id: tag.id });
    await fork.flush();
    return { results, counts: { count: 2 }, besides: '' };
  },
  cascadeHint: 'remove the tag from them (the results stay)',
  afterCascade: async (tag, refs) => {
    assert.is(await resultsLeft(refs.results), refs.results.length, 'the results stay');
    assert.is(await em().count(ResultTag, { tag_id: tag.id }), 0, 'without the tag');
  },
};

const RESOURCES = [benchmarks, sites, flavors, tags];
const ALL_SORT_FIELDS = [...new Set(RESOURCES.flatMap((d) => d.sort.fields))];

/** One test per resource: `name` is given the resource's descriptor. */
function each(name: (d: Resource) => string, run: (d: Resource) => Promise<void>): void {
  for (const d of RESOURCES) test(`${d.label}s: ${name(d)}`, () => run(d));
}

test.before(async () => {
  t = await startTestServer({}, 'catalogue-review');
  [alice, admin, stranger] = await Promise.all([t.user('alice'), t.admin('root'), t.token('stranger')]);
  base.benchmark = (await create(benchmarks, {}, benchmarks.body('base/bench', { json_schema: {} }))).id;
  base.site = (await create(sites, {}, sites.body('base-site'))).id;
  base.flavor = (await create(flavors, { parent: base.site }, flavors.body('base-flavor'))).id;
});
test.after(async () => {
  await t.close();
});

// ---------------------------------------------------------------------------------------------
// Create and read

each(
  (d) => `${d.ops.create.operationId}: a user's item is on review, trimmed, with its uploader; read back by id; an admin's is approved`,
  async (d) => {
    const scope = await d.scope();
    const body = d.body('cr-submitted', d.optional);
    const padded = { ...body };
    for (const f of d.trimmed) padded[f] = `  ${body[f]} `;
    const before = Date.now();
    const res = await t.request('POST', at(d.ops.create, scope.parent), { token: alice, body: padded });
    assert.is(res.status, 201, res.text);
    const item = res.body;
    assert.equal(Object.keys(item).sort(), d.keys);
    const expected: Body = { ...d.view(body, scope), id: item.id, status: 'on_review' };
    if (d.keys.includes('upload_datetime')) {
      assert.not.match(item.upload_datetime, /Z$/, 'UTC without a zone designator');
      const uploadedAt = Date.parse(`${item.upload_datetime}Z`);
      assert.ok(uploadedAt >= before - 1000 && uploadedAt <= Date.now() + 1000, item.upload_datetime);
      expected.upload_datetime = item.upload_datetime;
    }
    assert.equal(item, expected);

    const read = await t.request('GET', at(d.ops.get, item.id));
    assert.is(read.status, 200);
    assert.equal(read.body, item);
    assert.not.match(read.text, /@test\.example/, 'no email in public responses');
    const stored = await em().findOneOrFail(d.entity as typeof Site, { id: item.id });
    assert.equal([stored.uploader_iss, stored.uploader_sub], [t.issuer.issuer, 'alice']);
    assert.ok(stored.upload_datetime instanceof Date);

    const byAdmin = await create(d, scope, d.body('cr-by-admin'));
    assert.is(byAdmin.status, 'approved');
    for (const f of Object.keys(d.optional)) assert.is(byAdmin[f], null, `${f} absent: null`);
    assert.equal(ids(await list(d, scope, exact(d, byAdmin))), [byAdmin.id], 'listed at once');
  },
);

each(
  (d) =>
    `${d.ops.create.operationId}: 401, 403 unregistered, 422 for invalid bodies (none stored), 409 DUPLICATE for a taken key (also racing)`,
  async (d) => {
    const scope = await d.scope();
    const path = at(d.ops.create, scope.parent);
    const before = await count(d);
    const valid = d.body('cr-refused');
    assertProblem(await t.request('POST', path, { body: valid }), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('POST', path, { token: stranger, body: valid }), 403, 'NOT_REGISTERED');
    const invalid: [Body, string][] = [
      ...d.invalid(scope),
      [{ ...valid, extra: true }, '/extra'],
      [{ ...valid, id: randomUUID() }, '/id'],
      [{ ...valid, status: 'approved' }, '/status'],
      [{ ...valid, description: 5 }, '/description'],
      [{ ...valid, description: 'd'.repeat(2001) }, '/description'],
    ];
    for (const [body, field] of invalid) {
      const res = await t.request('POST', path, { token: alice, body });
      assertProblem(res, 422, 'INVALID_BODY');
      assert.ok(
        res.body.errors.some((e: any) => e.path === field),
        `${JSON.stringify(body).slice(0, 80)} → ${JSON.stringify(res.body.errors)}`,
      );
    }
    assert.is(await count(d), before, 'nothing stored');

    const taken = d.body('cr-taken');
    await create(d, scope, taken);
    const dup = await t.request('POST', path, { token: alice, body: d.body('cr-taken', d.other) });
    assertProblem(dup, 409, 'DUPLICATE');
    assert.is(dup.body.detail, d.duplicate(taken));
    assert.is(await count(d, d.stored(taken, scope)), 1);

    const racing = d.body('cr-racing');
    const race = await Promise.all([0, 1, 2].map(() => t.request('POST', path, { token: alice, body: racing })));
    assert.equal(race.map((r) => r.status).sort(), [201, 409, 409]);
    for (const r of race.filter((r) => r.status === 409)) assertProblem(r, 409, 'DUPLICATE');
    assert.is(await count(d, d.stored(racing, scope)), 1);
  },
);

each(
  (d) => `${d.ops.get.operationId}: 404 for an unknown and for malformed ids`,
  async (d) => {
    assertProblem(await t.request('GET', at(d.ops.get, randomUUID())), 404, 'NOT_FOUND');
    for (const id of MALFORMED) assertProblem(await t.request('GET', at(d.ops.get, id)), 404, 'NOT_FOUND');
  },
);

// ---------------------------------------------------------------------------------------------
// Review

each(
  (d) =>
    `${d.ops.approve.operationId}: on review, an item is listed and found only with status=on_review, and submitted; approved, it is listed; approve or reject again is 409`,
  async (d) => {
    const scope = await d.scope();
    const item = await create(d, scope, d.body('rv-pending'), alice);
    const listed = async (status?: string) => ids(await list(d, scope, { ...exact(d, item), status }));
    const found = async (status?: string) => ids(await search(d, scope, { terms: 'rv-pending', status }));
    assert.equal(await listed(), []);
    assert.equal(await listed('on_review'), [item.id]);
    assert.equal(await found(), []);
    assert.equal(await found('on_review'), [item.id]);
    assert.ok(await submitted(d, item.id), 'in GET /reports/submits');

    const res = await t.request('POST', at(d.ops.approve, item.id), { token: admin });
    assert.is(res.status, 204, res.text);
    assert.is(res.text, '');
    const approved = { ...item, status: 'approved' };
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, approved);
    assert.equal(await listed(), [item.id]);
    assert.equal(await listed('on_review'), []);
    assert.equal(await found(), [item.id]);
    assert.not.ok(await submitted(d, item.id), 'no longer submitted');

    assertProblem(await t.request('POST', at(d.ops.approve, item.id), { token: admin }), 409, 'ALREADY_APPROVED');
    assertProblem(await t.request('POST', at(d.ops.reject, item.id), { token: admin }), 409, 'ALREADY_APPROVED');
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, approved, 'a failed reject changes nothing');
  },
);

each(
  (d) => `${d.ops.reject.operationId}: deletes an item on review, which leaves the submits; its key is free again`,
  async (d) => {
    const scope = await d.scope();
    const body = d.body('rv-rejected');
    const item = await create(d, scope, body, alice);
    assert.ok(await submitted(d, item.id));
    const res = await t.request('POST', at(d.ops.reject, item.id), { token: admin });
    assert.is(res.status, 204, res.text);
    assert.is(res.text, '');
    assertProblem(await t.request('GET', at(d.ops.get, item.id)), 404, 'NOT_FOUND');
    assert.is(await count(d, { id: item.id }), 0);
    assert.not.ok(await submitted(d, item.id), 'no longer submitted');
    await create(d, scope, body, alice);
  },
);

each(
  (d) => `${d.ops.reject.operationId}: an item on review that results refer to stays (409 REFERENCED with the counts)`,
  async (d) => {
    const scope = await d.scope();
    const body = d.body('rv-referenced');
    const item = await create(d, scope, body, alice);
    const refs = await d.refer(item, scope);
    const refused = await t.request('POST', at(d.ops.reject, item.id), { token: admin });
    assertProblem(refused, 409, 'REFERENCED');
    for (const [member, n] of Object.entries(refs.counts)) assert.is(refused.body[member], n, member);
    assert.is(
      refused.body.detail,
      `${d.label} ${d.title(body)} is referenced by ${plural(refs.results.length, 'result')}${refs.besides}; ` +
        'an administrator may delete it with DELETE and ?cascade=true instead.',
    );
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, item);
    assert.is(await resultsLeft(refs.results), refs.results.length);
  },
);

each(
  (d) => `${d.ops.approve.operationId}: racing approvals give one 204 and one 409; a reject racing an approve never gives 500`,
  async (d) => {
    const scope = await d.scope();
    const a = await create(d, scope, d.body('rv-race-1'), alice);
    const approvals = await Promise.all([0, 1].map(() => t.request('POST', at(d.ops.approve, a.id), { token: admin })));
    assert.equal(approvals.map((r) => r.status).sort(), [204, 409]);
    const b = await create(d, scope, d.body('rv-race-2'), alice);
    const mixed = await Promise.all([d.ops.approve, d.ops.reject].map((op) => t.request('POST', at(op, b.id), { token: admin })));
    const statuses = mixed.map((r) => r.status);
    assert.ok(statuses.includes(204) && statuses.every((s) => s === 204 || s === 404 || s === 409), String(statuses));
  },
);

each(
  (d) =>
    `${d.ops.approve.operationId} and ${d.ops.reject.operationId}: 401, 403 for a user and for an unregistered caller, 404 for unknown and malformed ids`,
  async (d) => {
    const scope = await d.scope();
    const item = await create(d, scope, d.body('rv-guarded'), alice);
    for (const op of [d.ops.approve, d.ops.reject]) {
      assertProblem(await t.request('POST', at(op, item.id)), 401, 'MISSING_TOKEN');
      assertProblem(await t.request('POST', at(op, item.id), { token: alice }), 403, 'NOT_ADMIN');
      assertProblem(await t.request('POST', at(op, item.id), { token: stranger }), 403, 'NOT_REGISTERED');
      assertProblem(await t.request('POST', at(op, randomUUID()), { token: admin }), 404, 'NOT_FOUND');
      for (const id of MALFORMED) assertProblem(await t.request('POST', at(op, id), { token: admin }), 404, 'NOT_FOUND');
    }
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, item, 'still on review');
  },
);

// ---------------------------------------------------------------------------------------------
// Update

each(
  (d) =>
    `${d.ops.update.operationId}: an admin replaces the editable fields (absent optional ones become null); id, status, upload time and uploader stay`,
  async (d) => {
    const scope = await d.scope();
    const item = await create(d, scope, d.body('up-before', d.optional), alice);
    const path = at(d.ops.update, item.id);
    for (const body of [d.body('up-after', d.revised), d.body('up-again')]) {
      const res = await t.request('PUT', path, { token: admin, body });
      assert.is(res.status, 200, res.text);
      assert.equal(res.body, { ...item, ...d.view(body, scope) });
      assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, res.body);
    }
    const now = (await t.request('GET', at(d.ops.get, item.id))).body;
    for (const f of Object.keys(d.optional)) assert.is(now[f], null, `${f} absent: null`);
    const stored = await em().findOneOrFail(d.entity as typeof Site, { id: item.id });
    assert.is(stored.uploader_sub, 'alice');

    // The read-only fields may be echoed as read.
    const echoed = Object.fromEntries(readOnlyFields(d).map((f) => [f, now[f]]));
    const again = await t.request('PUT', path, { token: admin, body: { ...d.body('up-again'), ...echoed } });
    assert.is(again.status, 200, again.text);
    assert.equal(again.body, now);
  },
);

each(
  (d) =>
    `${d.ops.update.operationId}: 409 DUPLICATE on a taken key; 401, 403, 404; 422 for a missing field, a read-only field changed, an unknown field; nothing changes`,
  async (d) => {
    const scope = await d.scope();
    const item = await create(d, scope, d.body('up-mine'), alice);
    const path = at(d.ops.update, item.id);
    const taken = d.body('up-taken');
    await create(d, scope, taken);
    const clash = await t.request('PUT', path, { token: admin, body: taken });
    assertProblem(clash, 409, 'DUPLICATE');
    assert.is(clash.body.detail, d.duplicate(taken));
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, item, 'unchanged');

    const body = d.body('up-other');
    assertProblem(await t.request('PUT', path, { body }), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('PUT', path, { token: alice, body }), 403, 'NOT_ADMIN');
    assertProblem(await t.request('PUT', path, { token: stranger, body }), 403, 'NOT_REGISTERED');
    assertProblem(await t.request('PUT', at(d.ops.update, randomUUID()), { token: admin, body }), 404, 'NOT_FOUND');
    for (const id of MALFORMED) assertProblem(await t.request('PUT', at(d.ops.update, id), { token: admin, body }), 404, 'NOT_FOUND');

    const [incomplete, missing] = d.incomplete;
    const refused: [Body, string[] | string][] = [
      [incomplete, missing],
      ...readOnlyFields(d).map((f): [Body, string[]] => [{ ...body, [f]: differing(f, item[f]) }, [`/${f}`]]),
      [{ ...body, uploader: 'x' }, '/uploader'],
      [{ ...body, flavors: [] }, '/flavors'],
    ];
    for (const [wrong, paths] of refused) {
      const res = await t.request('PUT', path, { token: admin, body: wrong });
      assertProblem(res, 422, 'INVALID_BODY');
      const named = res.body.errors.map((e: any) => e.path);
      if (Array.isArray(paths)) assert.equal(named, paths, JSON.stringify(wrong));
      else assert.ok(named.includes(paths), `${JSON.stringify(wrong)} → ${JSON.stringify(named)}`);
    }
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, item, 'still unchanged');
  },
);

// ---------------------------------------------------------------------------------------------
// Delete

each(
  (d) =>
    `${d.ops.remove.operationId}: 409 REFERENCED with the counts while results refer to it (also cascade=false); cascade=true: ${d.cascadeHint}`,
  async (d) => {
    const scope = await d.scope();
    const body = d.body('del-used');
    const item = await create(d, scope, body);
    const refs = await d.refer(item, scope);
    const detail =
      `${d.label} ${d.title(body)} is referenced by ${plural(refs.results.length, 'result')}${refs.besides}; ` +
      `add ?cascade=true to ${d.cascadeHint}.`;
    for (const query of [{}, { cascade: false }, { cascade: 'false' }]) {
      const refused = await t.request('DELETE', at(d.ops.remove, item.id), { token: admin, query });
      assertProblem(refused, 409, 'REFERENCED');
      for (const [member, n] of Object.entries(refs.counts)) assert.is(refused.body[member], n, member);
      assert.is(refused.body.detail, detail);
    }
    assert.equal((await t.request('GET', at(d.ops.get, item.id))).body, item, 'kept');
    assert.is(await resultsLeft(refs.results), refs.results.length, 'nothing deleted');

    const res = await t.request('DELETE', at(d.ops.remove, item.id), { token: admin, query: { cascade: true } });
    assert.is(res.status, 204, res.text);
    assert.is(res.text, '');
    assertProblem(await t.request('GET', at(d.ops.get, item.id)), 404, 'NOT_FOUND');
    await d.afterCascade(item, refs, scope);
  },
);

each(
  (d) => `${d.ops.remove.operationId}: results deleted meanwhile still refer to it; 409 REFERENCED says how many of them are deleted`,
  async (d) => {
    const scope = await d.scope();
    const item = await create(d, scope, d.body('del-deleted'));
    const refs = await d.refer(item, scope);
    const n = refs.results.length;
    const detail = async () => {
      const refused = await t.request('DELETE', at(d.ops.remove, item.id), { token: admin });
      assertProblem(refused, 409, 'REFERENCED');
      assert.is(refused.body.count, n);
      return refused.body.detail as string;
    };
    assert.match(await detail(), ` is referenced by ${n} results${refs.besides}; add `);
    for (const id of refs.results.slice(0, -1)) assert.is((await t.request('DELETE', `/results/${id}`, { token: admin })).status, 204);
    assert.match(await detail(), ` is referenced by ${n} results (${n - 1} of them deleted)${refs.besides}; add ?cascade=true`);
    assert.is((await t.request('DELETE', `/results/${refs.results.at(-1)}`, { token: admin })).status, 204);
    assert.match(await detail(), ` is referenced by ${n} results (${n} of them deleted)${refs.besides};`);
  },
);

each(
  (d) =>
    `${d.ops.remove.operationId}: an unreferenced item of either status goes; 401, 403, 404; 422 for unknown parameters and a cascade not boolean`,
  async (d) => {
    const scope = await d.scope();
    const approved = await create(d, scope, d.body('del-free-1'));
    const pending = await create(d, scope, d.body('del-free-2'), alice);
    const path = at(d.ops.remove, approved.id);
    assertProblem(await t.request('DELETE', path), 401, 'MISSING_TOKEN');
    assertProblem(await t.request('DELETE', path, { token: alice }), 403, 'NOT_ADMIN');
    assertProblem(await t.request('DELETE', path, { token: stranger }), 403, 'NOT_REGISTERED');
    for (const query of [{ force: 1 }, { recursive: true }, { cascade: 'maybe' }]) {
      assertProblem(await t.request('DELETE', path, { token: admin, query }), 422, 'INVALID_QUERY');
    }
    for (const item of [approved, pending]) {
      const res = await t.request('DELETE', at(d.ops.remove, item.id), { token: admin });
      assert.is(res.status, 204, res.text);
      assert.is(res.text, '');
      assertProblem(await t.request('GET', at(d.ops.get, item.id)), 404, 'NOT_FOUND');
    }
    assertProblem(await t.request('DELETE', path, { token: admin }), 404, 'NOT_FOUND');
    assertProblem(await t.request('DELETE', at(d.ops.remove, randomUUID()), { token: admin }), 404, 'NOT_FOUND');
    for (const id of MALFORMED) assertProblem(await t.request('DELETE', at(d.ops.remove, id), { token: admin }), 404, 'NOT_FOUND');
  },
);

// ---------------------------------------------------------------------------------------------
// Lists and search

each(
  (d) => `${d.ops.list.operationId}: exact filters (${filterFields(d).join(', ')}): case-sensitive, not prefixes, together`,
  async (d) => {
    const scope = await d.scope();
    const p = 'filtered';
    const { items, since } = await createAll(d, scope, d.sortSet(p));
    const filters = filterFields(d);
    const matching = (query: Query) =>
      ordered(
        d,
        items.filter((i) => Object.entries(query).every(([f, v]) => i[f] === v)),
        d.sort.default,
      );
    const check = async (query: Query) => {
      assert.equal(ids(await list(d, scope, { ...query, upload_after: since })), matching(query), JSON.stringify(query));
      // Values of this test's items alone: the filter alone lists them.
      if (Object.values(query).every((v) => String(v).includes(p))) {
        assert.equal(ids(await list(d, scope, query)), matching(query), `${JSON.stringify(query)} alone`);
      }
    };
    for (const f of filters) {
      for (const v of new Set(items.map((i) => String(i[f])))) {
        const swapped = [...v].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('');
        for (const w of [v, swapped, v.slice(0, -1), `${v}x`]) await check({ [f]: w });
        assert.ok(matching({ [f]: v }).length > 0 && (swapped === v || matching({ [f]: swapped }).length === 0));
      }
    }
    const [first] = items;
    for (const other of items) {
      for (const f of filters) {
        for (const g of filters) {
          const aliased = d.aliases?.some((pair) => pair.includes(f) && pair.includes(g));
          if (f !== g && !aliased) await check({ [f]: first![f], [g]: other[g] });
        }
      }
      await check(exact(d, other));
      assert.equal(matching(exact(d, other)), [other.id]);
    }
  },
);

each(
  (d) => `${d.ops.list.operationId} and ${d.ops.search.operationId}: strict upload_before and upload_after bounds`,
  async (d) => {
    const scope = await d.scope();
    const a = await create(d, scope, d.body('bounds-a'));
    await sleep(5);
    const b = await create(d, scope, d.body('bounds-b'));
    const [ta, tb] = [await uploaded(d, a.id), await uploaded(d, b.id)];
    if (d.keys.includes('upload_datetime')) assert.equal([`${a.upload_datetime}Z`, `${b.upload_datetime}Z`], [ta, tb]);
    const cases: [Query, Body[]][] = [
      [{ upload_after: ta }, [b]],
      [{ upload_before: tb }, [a]],
      [{ upload_after: tb }, []],
      [{ upload_before: ta }, []],
      [{ upload_after: ta, upload_before: tb }, []],
      [{ upload_before: '2000-01-01' }, []],
      [{ upload_after: '2000-01-01' }, [a, b]],
      [{ upload_before: '2999-01-01' }, [a, b]],
    ];
    for (const [bounds, expected] of cases) {
      const label = JSON.stringify(bounds);
      assert.equal(ids(await search(d, scope, { terms: 'bounds-', ...bounds })), ordered(d, expected, d.sort.default), label);
      for (const x of [a, b]) {
        assert.equal(ids(await list(d, scope, { ...exact(d, x), ...bounds })), expected.includes(x) ? [x.id] : [], `${x.name} ${label}`);
      }
    }
  },
);

each(
  (d) => `${d.ops.search.operationId}: every term must occur in one of ${d.searched.join(', ')}, case-insensitively; % and _ are literal`,
  async (d) => {
    const scope = await d.scope();
    const p = 'look';
    const marker = (f: string, i: number) => `${p}${i}-${f.replace(/_/g, '-')}`;
    const bodies = [0, 1].map((i) =>
      d.body('unused', {
        ...Object.fromEntries(d.searched.map((f) => [f, marker(f, i)])),
        description: i === 0 ? `${marker('description', 0)} 100% literal_` : marker('description', 1),
      }),
    );
    const x = await create(d, scope, bodies[0]!);
    const y = await create(d, scope, bodies[1]!);
    const found = async (terms: string[]) => ids(await search(d, scope, { terms }));
    for (const f of d.searched) {
      assert.equal(await found([marker(f, 0).toUpperCase()]), [x.id], f);
      assert.equal(await found([marker(f, 1)]), [y.id], f);
      for (const g of d.searched) {
        if (g === f) continue;
        assert.equal(await found([marker(f, 0), marker(g, 0).toUpperCase()]), [x.id], `${f} and ${g}`);
        assert.equal(await found([marker(f, 0), marker(g, 1)]), [], `${f} and ${g}: every term must match`);
      }
    }
    const both = ordered(d, [x, y], d.sort.default);
    assert.equal(await found([p.toUpperCase()]), both);
    assert.equal(await found([p, 'nowhere']), []);
    assert.equal(await found(['%', p]), [x.id], '% matches literally');
    assert.equal(await found(['l_teral', p]), [], '_ matches literally');
    assert.equal(await found(['literal_', p]), [x.id]);
    assert.equal(await found(['', p]), both, 'an empty term is no term');
    const all = await search(d, scope, { terms: '' });
    assert.is(all.total, (await list(d, scope, {})).total, 'terms= alone: the whole list');
    const arrayStyle = await search(d, scope, { 'terms[]': [p, marker(d.searched[0]!, 1)] });
    assert.equal(ids(arrayStyle), [y.id], 'terms[]=');
  },
);

each(
  (d) =>
    `${d.ops.list.operationId} and ${d.ops.search.operationId}: sort_by each field both ways and in pairs, ties broken by id; default ${d.sort.default}`,
  async (d) => {
    const scope = await d.scope();
    const p = 'sorted';
    const { items, since } = await createAll(d, scope, d.sortSet(p));
    const fields = d.sort.fields;
    const singles = fields.flatMap((f) => [`+${f}`, `-${f}`]);
    const pairs = fields.flatMap((f) => fields.filter((g) => g !== f).flatMap((g) => [`+${f},-${g}`, `-${f},+${g}`]));
    const lists: [string, (q: Query) => Promise<any>, string[]][] = [
      [d.ops.list.operationId, (q) => list(d, scope, { upload_after: since, ...q }), [...singles, ...d.sorts]],
      [d.ops.search.operationId, (q) => search(d, scope, { terms: p, ...q }), [...singles, ...pairs, ...d.sorts]],
    ];
    const byId = items.map((i) => i.id).sort();
    for (const [name, get, sorts] of lists) {
      const byDefault = ids(await get({}));
      assert.equal(byDefault, ordered(d, items, d.sort.default), `${name}: default`);
      assert.equal(byDefault, ordered(d, items, '+name'), `${name}: by name`);
      for (const sort_by of sorts) assert.equal(ids(await get({ sort_by })), ordered(d, items, sort_by), `${name} ${sort_by}`);
      assert.equal(ids(await get({ sort_by: '+status' })), byId, `${name}: all approved, so by id`);
      assert.equal(ids(await get({ sort_by: '-status' })), byId, `${name}: ties by id ascending, also descending`);
      assert.equal(ids(await get({ sort_by: ' name' })), ordered(d, items, '+name'), `${name}: a + decoded as a space`);
      if (fields.includes('upload_datetime')) {
        assert.equal(ids(await get({ sort_by: '-upload_datetime' })), items.map((i) => i.id).reverse(), `${name}: newest first`);
      }
    }
  },
);

each(
  (d) => `${d.ops.list.operationId} and ${d.ops.search.operationId}: pages, in the default order and sorted`,
  async (d) => {
    const scope = await d.scope();
    const p = 'paged';
    const { items, since } = await createAll(d, scope, d.sortSet(p));
    const lists: [string, (q: Query) => Promise<any>][] = [
      [d.ops.list.operationId, (q) => list(d, scope, { upload_after: since, ...q })],
      [d.ops.search.operationId, (q) => search(d, scope, { terms: p, ...q })],
    ];
    for (const [name, get] of lists) {
      for (const sort_by of [undefined, '-name']) {
        const order = ordered(d, items, sort_by ?? d.sort.default);
        const page = async (n: number, per_page = 2) => {
          const body = await get({ per_page, page: n, sort_by });
          return { ...body, items: ids(body), next_cursor: typeof body.next_cursor === 'string' ? 'a cursor' : body.next_cursor };
        };
        const label = `${name} ${sort_by ?? 'default'}`;
        const common = { pages: 3, per_page: 2, total: 5 };
        assert.equal(
          await page(1),
          {
            ...common,
            items: order.slice(0, 2),
            page: 1,
            has_next: true,
            has_prev: false,
            next_num: 2,
            prev_num: null,
            next_cursor: 'a cursor',
          },
          label,
        );
        assert.equal(
          await page(2),
          {
            ...common,
            items: order.slice(2, 4),
            page: 2,
            has_next: true,
            has_prev: true,
            next_num: 3,
            prev_num: 1,
            next_cursor: 'a cursor',
          },
          label,
        );
        assert.equal(
          await page(3),
          { ...common, items: order.slice(4), page: 3, has_next: false, has_prev: true, next_num: null, prev_num: 2, next_cursor: null },
          label,
        );
        const past = await page(9);
        assert.equal([past.items, past.total, past.pages, past.has_next, past.next_num], [[], 5, 3, false, null], label);
        const p1 = await page(1, 3);
        assert.equal(
          [p1.items, p1.total, p1.pages, p1.has_next, p1.next_num, p1.has_prev, p1.prev_num],
          [order.slice(0, 3), 5, 2, true, 2, false, null],
        );
        const p2 = await page(2, 3);
        assert.equal(
          [p2.items, p2.total, p2.pages, p2.has_next, p2.next_num, p2.has_prev, p2.prev_num],
          [order.slice(3), 5, 2, false, null, true, 1],
        );
      }
    }
    const none = {
      items: [],
      has_next: false,
      has_prev: false,
      next_num: null,
      prev_num: null,
      page: 1,
      pages: 0,
      per_page: 100,
      total: 0,
      next_cursor: null,
    };
    assert.equal(await search(d, scope, { terms: 'no-such-item' }), none);
    assert.equal(await list(d, scope, { upload_after: '2999-01-01' }), none);
  },
);

each(
  (d) => `${d.ops.list.operationId} and ${d.ops.search.operationId}: 422 for unknown parameters, bad sorts, pages, dates and status`,
  async (d) => {
    const scope = await d.scope();
    const listPath = at(d.ops.list, scope.parent);
    const searchPath = at(d.ops.search, scope.parent);
    const unsortable = [...new Set([...d.keys, ...ALL_SORT_FIELDS])].filter((f) => !d.sort.fields.includes(f));
    const cases: [string, Query, string][] = [[listPath, { terms: 'x' }, 'INVALID_QUERY']];
    for (const f of filterFields(d)) cases.push([searchPath, { [f]: 'x' }, 'INVALID_QUERY']);
    for (const path of [listPath, searchPath]) {
      for (const name of ['nam', 'filter', 'tag', 'bogus']) cases.push([path, { [name]: 'x' }, 'INVALID_QUERY']);
      for (const sort_by of ['+nope', '-nope', 'name', '*name', ...unsortable.map((f) => `+${f}`)])
        cases.push([path, { sort_by }, 'INVALID_SORT']);
      for (const query of [
        { per_page: 0 },
        { per_page: 101 },
        { page: 0 },
        { upload_before: 'yesterday' },
        { upload_after: '2024-13-45' },
        { status: 'rejected' },
      ]) {
        cases.push([path, query, 'INVALID_QUERY']);
      }
    }
    for (const [path, query, code] of cases) {
      const res = await t.request('GET', path, { query });
      assert.is(res.status, 422, `${path} ${JSON.stringify(query)}: ${res.text}`);
      assertProblem(res, 422, code);
    }
    for (const path of [listPath, searchPath]) {
      assert.is((await t.request('GET', path, { query: { per_page: 100, sort_by: ' name' } })).status, 200);
    }
  },
);

test.run();
