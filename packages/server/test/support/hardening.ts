/**
 * Helpers of the hardening tests (fuzz, authorization, faults, concurrency, secrets): a seeded
 * PRNG, a problem+json checker, a database fingerprint and a catalogue seeded through the API.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { TestServer } from './harness.ts';

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    chance: (p: number) => next() < p,
  };
}
export type Rng = ReturnType<typeof prng>;

/** Why a response is not a valid problem+json error (null when it is one). */
export function problemDefect(status: number, contentType: string | null, text: string): string | null {
  if (!/^application\/problem\+json\b/.test(contentType ?? '')) return `content-type ${contentType}`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text);
  } catch {
    return `body is not JSON: ${text.slice(0, 100)}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body is not an object';
  if (typeof body.type !== 'string' || !body.type.startsWith('urn:benchmarks:problem:')) return `type ${String(body.type)}`;
  if (typeof body.title !== 'string' || body.title === '') return 'title missing';
  if (body.status !== status) return `status member ${String(body.status)} differs from HTTP ${status}`;
  if (typeof body.detail !== 'string' || body.detail === '') return 'detail missing';
  if (typeof body.code !== 'string' || !/^[A-Z][A-Z0-9_]*$/.test(body.code)) return `code ${String(body.code)}`;
  if (body.errors !== undefined) {
    if (!Array.isArray(body.errors)) return 'errors is not an array';
    for (const e of body.errors as Record<string, unknown>[]) {
      if (typeof e?.in !== 'string' || typeof e.path !== 'string' || typeof e.message !== 'string')
        return `malformed errors item ${JSON.stringify(e)}`;
    }
  }
  if (/\n\s+at |SELECT |INSERT |UPDATE |DELETE FROM /i.test(text) && status >= 500) return 'a 5xx leaks a stack or SQL';
  return null;
}

/**
 * Tables that hold the service's bookkeeping, not data: every request (refused ones included)
 * charges its client's rate limit buckets, shared by the processes through this table.
 */
const BOOKKEEPING = new Set(['rate_bucket']);

/**
 * Row count and content hash of every table of the database but the bookkeeping ones: equal
 * fingerprints mean nothing was written (the hash covers every column of every row).
 */
export async function fingerprint(databaseUrl: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by 1",
    );
    const out: Record<string, string> = {};
    for (const { name } of tables.rows) {
      if (BOOKKEEPING.has(name)) continue;
      const q = client.escapeIdentifier(name);
      const r = await client.query<{ n: number; h: string }>(
        `select count(*)::int as n, coalesce(md5(string_agg(t::text, E'\\n' order by t::text)), '-') as h from ${q} t`,
      );
      out[name] = `${r.rows[0]!.n}:${r.rows[0]!.h}`;
    }
    return out;
  } finally {
    await client.end();
  }
}

/** The tables whose fingerprint differs. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => before[k] !== after[k]);
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

export const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** Throws with the response when the status is not the expected one. */
export function expectStatus(res: { status: number; text: string }, status: number, what: string): void {
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text.slice(0, 300)}`);
}

/** Creation bodies that pass validation, with unique names. */
export const inputs = {
  benchmark: (schema: unknown = {}) => ({
    container_image: `ghcr.io/hardening/${unique('bench').toLowerCase()}`,
    container_tag: '1.0',
    json_schema: schema,
    description: 'seeded by the hardening tests',
  }),
  site: () => ({ name: unique('site'), address: 'Hardening street 1' }),
  flavor: () => ({ name: unique('flavor'), description: '4 vCPU' }),
  tag: () => ({ name: unique('tag') }),
};

export interface Catalogue {
  admin: string;
  benchmark: string;
  site: string;
  flavor: string;
  tag: string;
}

/** An approved benchmark, site, flavor and tag, created by an administrator through the API. */
export async function seedCatalogue(t: TestServer, admin: string, schema: unknown = {}): Promise<Catalogue> {
  const post = async (path: string, body: unknown) => {
    const res = await t.request('POST', path, { token: admin, body });
    expectStatus(res, 201, `POST ${path}`);
    return res.body.id as string;
  };
  const benchmark = await post('/benchmarks', inputs.benchmark(schema));
  const site = await post('/sites', inputs.site());
  const flavor = await post(`/sites/${site}/flavors`, inputs.flavor());
  const tag = await post('/tags', inputs.tag());
  return { admin, benchmark, site, flavor, tag };
}

/** Uploads a result through the API; returns its id. */
export async function uploadResult(
  t: TestServer,
  token: string,
  c: Catalogue,
  json: unknown = { score: 1 },
  tags: string[] = [],
): Promise<string> {
  const res = await t.request('POST', '/results', {
    token,
    query: { benchmark_id: c.benchmark, flavor_id: c.flavor, execution_datetime: '2024-05-01T12:00:00Z', tags_ids: tags },
    body: json,
  });
  expectStatus(res, 201, 'POST /results');
  return res.body.id as string;
}
