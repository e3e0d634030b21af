/**
 * The seeded, deterministic generator of the benchmark data set: users, a catalogue (benchmarks with
 * their JSON Schemas, sites, flavors, tags) and results spread over two years, a few percent of them
 * hidden (deleted, or under a claim). The same seed and size always give the same rows.
 *
 * Defaults: 1,000,000 results over 20 benchmarks, 50 sites, 500 flavors, 30 tags, 0-3 tags per result.
 * The origin shape: the same over 4 benchmarks of c-ray's documents, a quarter of the results each,
 * the first created through the API by a user (and approved by an administrator), the second by an
 * administrator.
 */
import {
  BENCHMARKS,
  ORIGIN_BENCHMARKS,
  TAGS,
  benchmarkSchema,
  resultDocument,
  siteSpecs,
  type BenchmarkDef,
  type FlavorSpec,
} from './catalogue.ts';
import { Rng, deriveSeed } from './random.ts';

/** `default`: 20 benchmarks of every kind, unequally used; `origin`: ORIGIN_BENCHMARKS, equally used. */
export type Shape = 'default' | 'origin';

export interface GenerateOptions {
  seed: number;
  results: number;
  shape: Shape;
  sites: number;
  flavorsPerSite: number;
  tags: number;
  /** Share of results that are hidden: half deleted, half under a claim. */
  hiddenFraction: number;
  /** Executions are spread over [start, end). */
  start: Date;
  end: Date;
}

/** Bump when the generated rows change, so reused data directories are reloaded. */
export const GENERATOR_VERSION = 1;

export const GENERATE_DEFAULTS: GenerateOptions = {
  seed: 20261122,
  results: 1_000_000,
  shape: 'default',
  sites: 50,
  flavorsPerSite: 10,
  tags: 30,
  hiddenFraction: 0.03,
  start: new Date('2024-11-01T00:00:00Z'),
  end: new Date('2026-11-01T00:00:00Z'),
};

/** The issuer of the generated uploaders (they never log in: results are loaded, not uploaded). */
export const DATA_ISSUER = 'https://aai.bench.example.org/oidc/';

export interface UserRow {
  iss: string;
  sub: string;
  email: string;
  registration_datetime: Date;
  terms_version: string;
}

interface Reviewed {
  id: string;
  status: 'approved';
  upload_datetime: Date;
  uploader_iss: string;
  uploader_sub: string;
}

export interface BenchmarkRow extends Reviewed {
  /**
   * Who creates it through the API before its results are loaded (its id is then the server's):
   * a user (an administrator approves it) or an administrator. Absent: inserted with SQL.
   */
  createdBy?: 'user' | 'admin';
  container_image: string;
  container_tag: string;
  json_schema: Record<string, unknown>;
  description: string;
  url: string;
  def: BenchmarkDef;
}
export interface SiteRow extends Reviewed {
  name: string;
  address: string;
  description: string;
}
export interface FlavorRow extends Reviewed {
  site_id: string;
  name: string;
  description: string;
  spec: FlavorSpec;
  siteIndex: number;
}
export interface TagRow extends Reviewed {
  name: string;
  description: string;
}

export interface Catalogue {
  users: UserRow[];
  benchmarks: BenchmarkRow[];
  sites: SiteRow[];
  flavors: FlavorRow[];
  tags: TagRow[];
}

export interface GeneratedResult {
  id: string;
  benchmark: BenchmarkRow;
  flavor: FlavorRow;
  json: Record<string, unknown>;
  execution_datetime: Date;
  upload_datetime: Date;
  uploader_sub: string;
  deleted: boolean;
  hidden: boolean;
  tag_ids: string[];
  claim: { id: string; message: string; status: 'on_review' | 'approved'; upload_datetime: Date; uploader_sub: string } | null;
}

const USERS = 6;
const CURATOR = 'curator';
const TERMS_VERSION = '2024-01';

/** The catalogue of a seed: the same ids and names every time. */
export function generateCatalogue(options: GenerateOptions): Catalogue {
  const rng = new Rng(deriveSeed(options.seed, 'catalogue'));
  const registered = new Date(options.start.getTime() - 90 * 86_400_000);
  const users: UserRow[] = [CURATOR, ...Array.from({ length: USERS }, (_, i) => `uploader-${String(i + 1).padStart(2, '0')}`)].map(
    (sub, i) => ({
      iss: DATA_ISSUER,
      sub,
      email: `${sub}@bench.example.org`,
      registration_datetime: new Date(registered.getTime() + i * 3_600_000),
      terms_version: TERMS_VERSION,
    }),
  );
  const reviewed = (offsetDays: number): Omit<Reviewed, 'id'> => ({
    status: 'approved',
    upload_datetime: new Date(registered.getTime() + offsetDays * 86_400_000),
    uploader_iss: DATA_ISSUER,
    uploader_sub: CURATOR,
  });
  const origin = options.shape === 'origin';
  const benchmarks: BenchmarkRow[] = (origin ? ORIGIN_BENCHMARKS : BENCHMARKS).map((def, i) => ({
    id: rng.uuid(),
    ...(origin && i < 2 ? { createdBy: i === 0 ? ('user' as const) : ('admin' as const) } : {}),
    container_image: def.image,
    container_tag: def.tag,
    json_schema: benchmarkSchema(def),
    description: def.description,
    url: def.url,
    def,
    ...reviewed(1 + i),
  }));
  const sites: SiteRow[] = [];
  const flavors: FlavorRow[] = [];
  siteSpecs(rng, options.sites, options.flavorsPerSite).forEach((spec, s) => {
    const site: SiteRow = {
      id: rng.uuid(),
      name: spec.name,
      address: spec.address,
      description: spec.description,
      ...reviewed(20 + s * 0.5),
    };
    sites.push(site);
    for (const f of spec.flavors) {
      flavors.push({
        id: rng.uuid(),
        site_id: site.id,
        name: f.name,
        description: f.description,
        spec: f.spec,
        siteIndex: s,
        ...reviewed(21 + s * 0.5),
      });
    }
  });
  const tags: TagRow[] = Array.from({ length: options.tags }, (_, i) => {
    const base = TAGS[i % TAGS.length]!;
    const name = i < TAGS.length ? base : `${base}-${Math.floor(i / TAGS.length) + 1}`;
    return { id: rng.uuid(), name, description: `Results labelled ${name}`, ...reviewed(30 + i * 0.1) };
  });
  return { users, benchmarks, sites, flavors, tags };
}

const TAG_COUNT_WEIGHTS = [35, 35, 20, 10];
const CLAIM_MESSAGES = [
  'The flavor was overcommitted during this run; the numbers are not representative.',
  'Wrong benchmark arguments: the run used the default scene size.',
  'Duplicate of an earlier upload.',
  'The host was being drained for maintenance while this ran.',
];

/**
 * The results, in execution order (as a service receives them, so the table's physical order follows
 * time). Each call starts over from the seed.
 */
export function* generateResults(catalogue: Catalogue, options: GenerateOptions): Generator<GeneratedResult> {
  const rng = new Rng(deriveSeed(options.seed, `results:${options.results}`));
  const benchmarkWeights = catalogue.benchmarks.map((b) => b.def.weight);
  const totalBenchmarkWeight = benchmarkWeights.reduce((a, b) => a + b, 0);
  // Some sites are busier than others.
  const siteWeights = catalogue.sites.map(() => 1 + 4 * rng.next());
  const gpuFlavors = catalogue.flavors.filter((f) => f.spec.gpu);
  const cpuFlavors = catalogue.flavors.filter((f) => !f.spec.gpu);
  const flavorWeights = (list: FlavorRow[]) => list.map((f) => siteWeights[f.siteIndex]!);
  const gpuWeights = flavorWeights(gpuFlavors);
  const cpuWeights = flavorWeights(cpuFlavors);
  const gpuTotal = gpuWeights.reduce((a, b) => a + b, 0);
  const cpuTotal = cpuWeights.reduce((a, b) => a + b, 0);
  const uploaders = catalogue.users.slice(1).map((u) => u.sub);
  const start = options.start.getTime();
  const span = options.end.getTime() - start;
  const n = options.results;
  for (let i = 0; i < n; i++) {
    const benchmark =
      options.shape === 'origin'
        ? catalogue.benchmarks[i % catalogue.benchmarks.length]!
        : catalogue.benchmarks[rng.weighted(benchmarkWeights, totalBenchmarkWeight)]!;
    const gpu = benchmark.def.category === 'gpu';
    const flavor = gpu ? gpuFlavors[rng.weighted(gpuWeights, gpuTotal)]! : cpuFlavors[rng.weighted(cpuWeights, cpuTotal)]!;
    const executed = start + Math.floor(((i + rng.next()) * span) / n);
    const json = resultDocument(benchmark.def, { rng, flavor: flavor.spec, siteIndex: flavor.siteIndex, age: (executed - start) / span });
    const uploaded = executed + Math.floor(((json.environment as { duration_s: number }).duration_s + rng.float(5, 7200)) * 1000);
    const hiddenRoll = rng.next();
    const deleted = hiddenRoll < options.hiddenFraction / 2;
    const claimed = !deleted && hiddenRoll < options.hiddenFraction;
    const tagCount = rng.weighted(TAG_COUNT_WEIGHTS, 100);
    const tag_ids = tagCount ? rng.sample(catalogue.tags, tagCount).map((t) => t.id) : [];
    const uploader_sub = rng.pick(uploaders);
    const id = rng.uuid();
    yield {
      id,
      benchmark,
      flavor,
      json,
      execution_datetime: new Date(executed),
      upload_datetime: new Date(uploaded),
      uploader_sub,
      deleted,
      hidden: deleted || claimed,
      tag_ids,
      claim: claimed
        ? {
            id: rng.uuid(),
            message: rng.pick(CLAIM_MESSAGES),
            status: rng.chance(0.5) ? 'on_review' : 'approved',
            upload_datetime: new Date(uploaded + rng.int(1, 30) * 86_400_000),
            uploader_sub: rng.pick(uploaders.filter((u) => u !== uploader_sub)),
          }
        : null,
    };
  }
}

/** The value at a dotted path of a document. */
export function valueAt(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const key of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

/**
 * A quantile of a benchmark's headline metric, estimated from a sample of documents generated on
 * its flavors (a separate stream: it does not disturb the data set).
 */
export function metricQuantile(catalogue: Catalogue, options: GenerateOptions, benchmark: BenchmarkRow, q: number, sample = 400): number {
  const rng = new Rng(deriveSeed(options.seed, `sample:${benchmark.def.key}`));
  const gpu = benchmark.def.category === 'gpu';
  const flavors = catalogue.flavors.filter((f) => Boolean(f.spec.gpu) === gpu);
  const values: number[] = [];
  for (let i = 0; i < sample; i++) {
    const flavor = rng.pick(flavors);
    const doc = resultDocument(benchmark.def, { rng, flavor: flavor.spec, siteIndex: flavor.siteIndex, age: rng.next() });
    values.push(valueAt(doc, benchmark.def.metric) as number);
  }
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
}

/** A fresh result document for the ingest scenario (not part of the loaded data). */
export function ingestDocuments(
  catalogue: Catalogue,
  options: GenerateOptions,
  count: number,
): { benchmark: BenchmarkRow; flavor: FlavorRow; json: Record<string, unknown>; tag_ids: string[] }[] {
  const rng = new Rng(deriveSeed(options.seed, 'ingest'));
  return Array.from({ length: count }, (_, i) => {
    const benchmark = catalogue.benchmarks[i % catalogue.benchmarks.length]!;
    const gpu = benchmark.def.category === 'gpu';
    const flavor = rng.pick(catalogue.flavors.filter((f) => Boolean(f.spec.gpu) === gpu));
    const json = resultDocument(benchmark.def, { rng, flavor: flavor.spec, siteIndex: flavor.siteIndex, age: 1 });
    const tagCount = rng.weighted(TAG_COUNT_WEIGHTS, 100);
    return { benchmark, flavor, json, tag_ids: rng.sample(catalogue.tags, tagCount).map((t) => t.id) };
  });
}
