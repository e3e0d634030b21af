/**
 * The data the documents' examples name: the demo's sample catalogue (its ids for `$BENCH`,
 * `$SITE`, ...), and the catalogue of the CLI guide's examples (`ghcr.io/org/bench:1.0`,
 * `CESGA/c4.large`, the flavors of its `compare` sample, ...), created through the API.
 */
import { type Client, ConflictError, createClient, type UploadItem } from '@benchmarks/sdk';
import type { DocEnv } from './doc-context.ts';

/** A result of the demo's c-ray benchmark (its schema's required members). */
export function crayResult(cpus: number, score: number): Record<string, unknown> {
  return {
    arguments: '-s 1600x1200 -r 8 -i sphfract -o output.ppm',
    machine: {
      cpu: { arch: 'X86_64', bits: 64, brand_raw: 'AMD EPYC 7452 32-Core Processor', count: cpus, hz_actual_friendly: '2.4000 GHz' },
    },
    result: { all_results: `${score} ${score + 3.1} ${score - 2.4}`, score },
    test: 'c-ray',
    units: 'Seconds',
  };
}

/** Registers the demo user (its token is `$TOKEN`), as the README's quick start does first. */
export async function registerUser(env: DocEnv): Promise<void> {
  const user = createClient({ baseUrl: env.demo.url, token: env.demo.userToken });
  try {
    await user.self.upsert();
  } finally {
    await user.close();
  }
}

export interface DemoIds {
  bench: string;
  site: string;
  flavor: string;
  tag: string;
  /** A result carrying a tag. */
  result: string;
}

/** The ids of the demo's sample catalogue, also as `$BENCH`, `$SITE` (CESGA), `$FLAVOR`, `$TAG` (gpu), `$RESULT`. */
export async function demoIds(env: DocEnv): Promise<DemoIds> {
  const a = env.admin;
  const bench = (await a.benchmarks.list({ container_image: 'ghcr.io/benchmarks-demo/c-ray' })).items[0]?.id;
  const site = (await a.sites.list({ name: 'CESGA' })).items[0]?.id;
  const flavor = site && (await a.flavors.list(site, { name: 'hpc.8core-16ram' })).items[0]?.id;
  const tag = (await a.tags.list({ name: 'gpu' })).items[0]?.id;
  const result = (await a.results.list({ per_page: 100 })).items.find((r) => r.tags.length > 0)?.id;
  if (!bench || !site || !flavor || !tag || !result) throw new Error('the demo catalogue lacks what the examples use');
  Object.assign(env.vars, { BENCH: bench, SITE: site, FLAVOR: flavor, TAG: tag, RESULT: result });
  return { bench, site, flavor, tag, result };
}

/** Upload items of the demo's benchmark on one flavor, executed before now. */
export function crayItems(ids: DemoIds, count: number): UploadItem[] {
  return Array.from({ length: count }, (_, i) => ({
    benchmark_id: ids.bench,
    flavor_id: ids.flavor,
    execution_datetime: new Date(Date.UTC(2025, 0, 31, 10, i)).toISOString(),
    json: crayResult(8, 900 + i),
  }));
}

// The CLI guide's catalogue.

/** The schema of `ghcr.io/org/bench:1.0`: `result.score` (higher is better) and the members the examples filter on. */
export const BENCH_SCHEMA = {
  type: 'object',
  properties: {
    score: { type: 'number' },
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer' } } } } },
    result: { type: 'object', properties: { score: { type: 'number', suggestToUser: true }, seconds: { type: 'number' } } },
  },
};

/**
 * The flavors of the guide's `compare` sample, each with results whose medians are those the sample
 * shows, the two middle ones overlapping (they share rank 2) and the last one too small to be ranked.
 */
const COMPARED = [
  { site: 'CESGA', flavor: 'hpc.8core-16ram', price: 2, cpus: 8, n: 40, median: 104.9, step: 0.25 },
  { site: 'IFCA', flavor: 'cpu.medium', price: 0.9, cpus: 4, n: 25, median: 57.04, step: 0.25 },
  { site: 'CESGA', flavor: 'hpc.2core-4ram', price: 0.5, cpus: 2, n: 20, median: 54.41, step: 0.4 },
  { site: 'IFCA', flavor: 'cpu.small', price: undefined, cpus: 1, n: 3, median: 31, step: 1 },
];

export const benchResult = (cpus: number, score: number) => ({
  machine: { cpu: { count: cpus } },
  result: { score, seconds: Math.round(100_000 / score) / 100 },
});

async function approved<T extends { id: string; status: string }>(
  find: () => Promise<T | undefined>,
  create: () => Promise<T>,
  approve: (id: string) => Promise<unknown>,
): Promise<T> {
  let item = await find();
  if (!item) {
    try {
      item = await create();
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  item ??= await find();
  if (!item) throw new Error('created, then not found');
  if (item.status !== 'approved') await approve(item.id);
  return item;
}

const benchmark = (a: Client, image: string, tag: string, schema: unknown) =>
  approved(
    async () =>
      (await a.benchmarks.list({ container_image: image, container_tag: tag })).items[0] ??
      (await a.benchmarks.list({ container_image: image, container_tag: tag, status: 'on_review' })).items[0],
    () => a.benchmarks.create({ container_image: image, container_tag: tag, json_schema: schema as Record<string, unknown> }),
    (id) => a.benchmarks.approve(id),
  );
const site = (a: Client, name: string) =>
  approved(
    async () => (await a.sites.list({ name })).items[0] ?? (await a.sites.list({ name, status: 'on_review' })).items[0],
    () => a.sites.create({ name, address: 'Santiago de Compostela, Spain' }),
    (id) => a.sites.approve(id),
  );
const flavor = (a: Client, siteId: string, name: string, price?: number) =>
  approved(
    async () => (await a.flavors.list(siteId, { name })).items[0] ?? (await a.flavors.list(siteId, { name, status: 'on_review' })).items[0],
    () => a.flavors.create(siteId, { name, ...(price === undefined ? {} : { price_per_hour: price, currency: 'EUR' }) }),
    (id) => a.flavors.approve(id),
  );
export const tag = (a: Client, name: string) =>
  approved(
    async () => (await a.tags.list({ name })).items[0] ?? (await a.tags.list({ name, status: 'on_review' })).items[0],
    () => a.tags.create({ name }),
    (id) => a.tags.approve(id),
  );

/**
 * Makes sure the catalogue the CLI guide's examples name exists (creating what an earlier example
 * deleted or renamed), and sets `$RESULT`, a result of `ghcr.io/org/bench:1.0`.
 */
export async function cliCatalogue(env: DocEnv): Promise<void> {
  const a = env.admin;
  const bench = await benchmark(a, 'ghcr.io/org/bench', '1.0', BENCH_SCHEMA);
  const old = await benchmark(a, 'ghcr.io/org/old', '0.1', {});
  const sites = { CESGA: await site(a, 'CESGA'), IFCA: await site(a, 'IFCA') };
  const c4 = await flavor(a, sites.CESGA.id, 'c4.large');
  for (const name of ['nightly', 'typo-tag']) await tag(a, name);
  const items: UploadItem[] = [];
  for (const c of COMPARED) {
    const f = await flavor(a, sites[c.site as keyof typeof sites].id, c.flavor, c.price);
    if ((await a.results.list({ benchmark_id: bench.id, flavor_id: f.id, per_page: 1 })).total >= c.n) continue;
    for (let i = 0; i < c.n; i++) {
      const score = Math.round((c.median + (i - (c.n - 1) / 2) * c.step) * 100) / 100;
      items.push({
        benchmark_id: bench.id,
        flavor_id: f.id,
        execution_datetime: new Date(Date.UTC(2025, 1, 1, 0, i)).toISOString(),
        json: benchResult(c.cpus, score),
      });
    }
  }
  if ((await a.results.list({ benchmark_id: old.id, per_page: 1 })).total === 0) {
    items.push({ benchmark_id: old.id, flavor_id: c4.id, execution_datetime: '2024-06-01T10:00:00Z', json: {} });
  }
  if (items.length) await a.results.createMany(items);
  env.vars.RESULT = (await a.results.list({ benchmark_id: bench.id, per_page: 1 })).items[0]!.id;
}

/** Hides the results of `CESGA/c4.large` (the guide's uploads go there), so that `compare` shows the sample's flavors. */
export async function hideUploads(env: DocEnv): Promise<void> {
  const a = env.admin;
  const cesga = (await a.sites.list({ name: 'CESGA' })).items[0]!;
  const c4 = (await a.flavors.list(cesga.id, { name: 'c4.large' })).items[0]!;
  for await (const r of a.results.list({ flavor_id: c4.id })) await a.results.delete(r.id);
}

/** What the administration examples review: two sites and a tag on review, two claims. */
export async function reviewQueue(env: DocEnv): Promise<void> {
  const user = createClient({ baseUrl: env.demo.url, token: env.demo.userToken });
  try {
    await user.self.upsert();
    const s1 = await user.sites.create({ name: 'Site on review', address: 'Santander, Spain' });
    const s2 = await user.sites.create({ name: 'Another site on review', address: 'Prague, Czech Republic' });
    const t = await user.tags.create({ name: 'tag-on-review' });
    const results = (await user.results.list({ per_page: 2 })).items;
    const c1 = await user.results.claim(results[0]!.id, 'This run had a noisy neighbour.');
    const c2 = await user.results.claim(results[1]!.id, 'The wrong flavor was recorded.');
    Object.assign(env.vars, {
      SITE_ON_REVIEW: s1.id,
      SITE_ON_REVIEW_2: s2.id,
      TAG_ON_REVIEW: t.id,
      CLAIM: c1.id,
      CLAIM_2: c2.id,
      CLAIMED_RESULT: results[0]!.id,
      ISS: env.demo.issuer,
    });
  } finally {
    await user.close();
  }
}
