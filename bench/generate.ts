/**
 * The seeded, deterministic data set (docs/performance.md): users, the catalogue and results over two years, 0 to 3 tags
 * each; in the origin shape a quarter of the results for each benchmark, the second created through the API by an administrator.
 */
import { BENCHMARKS, ORIGIN_BENCHMARKS, benchmarkSchema, resultDocument, type FlavorSpec } from './catalogue.ts';

/** `default`: 20 benchmarks of every kind, unequally used; `origin`: ORIGIN_BENCHMARKS, equally used. */
export type Shape = 'default' | 'origin';
export type GenerateOptions = typeof GENERATE_DEFAULTS;
export type Catalogue = ReturnType<typeof generateCatalogue>;
export type BenchmarkRow = Catalogue['benchmarks'][number];
type FlavorRow = Catalogue['flavors'][number];

/** Bump when the generated rows change, so reused data directories are reloaded. */
export const GENERATOR_VERSION = 2;

export const GENERATE_DEFAULTS = {
  seed: 20261122,
  results: 1_000_000,
  shape: 'default' as Shape,
  sites: 50,
  flavorsPerSite: 10,
  tags: 30,
  /** Share of results that are hidden: half deleted, half under a claim. */
  hiddenFraction: 0.03,
  /** Executions are spread over [start, end). */
  start: new Date('2024-11-01T00:00:00Z'),
  end: new Date('2026-11-01T00:00:00Z'),
};

/** The issuer of the generated uploaders (they never log in: results are loaded, not uploaded). */
export const DATA_ISSUER = 'https://aai.bench.example.org/oidc/';
const CURATOR = 'curator';
const words = (s: string) => s.split(' ');
const SITE_NAMES = words(
  'CESGA IFCA-LCG2 CESNET-MCC CYFRONET-CLOUD INFN-BARI INFN-CATANIA DESY-HH KIT-SCC SURF-HPC CSC-CPOUTA GRNET-OKEANOS IISAS-FEDCLOUD UPV-GRyCAP LIP-LISBON PSNC-CLOUD IN2P3-CC IJCLAB-CLOUD UNIMELB-NECTAR NCG-INGRID-PT TUBITAK-ULAKBIM BIFI-ZARAGOZA CETA-CIEMAT SCAI-FRAUNHOFER FZJ-JSC GWDG-GOE LRZ-MUC CINECA-ADA BSC-MN EPCC-EDINBURGH STFC-SCD NIKHEF-AMS UIO-NREC NDGF-T1 CSCS-LUGANO UNIGE-BAOBAB IJS-VEGA ARNES-SI SRCE-CROATIA HG-ARCC RO-ISS-BUC IICT-BAS-SOFIA IPB-BELGRADE UKIM-SKOPJE GRENA-TBILISI IIAP-YEREVAN IUCC-TELAVIV CLOUDIFIN-PT EGI-FEDCLOUD-UK WCSS-WROCLAW TARTU-HPC',
);
const CITIES =
  'Santiago de Compostela/Spain|Santander/Spain|Prague/Czech Republic|Krakow/Poland|Bari/Italy|Catania/Italy|Hamburg/Germany|Karlsruhe/Germany|Amsterdam/Netherlands|Espoo/Finland|Athens/Greece|Bratislava/Slovakia|Valencia/Spain|Lisbon/Portugal|Poznan/Poland|Villeurbanne/France|Orsay/France|Melbourne/Australia|Braga/Portugal|Ankara/Turkey'.split(
    '|',
  );
const STREETS =
  'Avenida de Vigo|Avda. de los Castros|Zikova|Nawojki|Via Orabona|Via Santa Sofia|Notkestrasse|Hermann-von-Helmholtz-Platz|Science Park|Keilaranta';
/** `name|number`: CPUs and their GHz, GPUs and their GB. */
const pairs = (s: string) => s.split(';').map((x) => [x.split('|')[0]!, Number(x.split('|')[1])] as const);
const CPU_BRANDS = pairs(
  'Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz|2.5;Intel(R) Xeon(R) Gold 6240 CPU @ 2.60GHz|2.6;Intel(R) Xeon(R) Silver 4214 CPU @ 2.20GHz|2.2;' +
    'Intel(R) Xeon(R) Platinum 8358 CPU @ 2.60GHz|2.6;AMD EPYC 7452 32-Core Processor|2.35;AMD EPYC 7763 64-Core Processor|2.45;' +
    'AMD EPYC 9354 32-Core Processor|3.25;Ampere(R) Altra(R) Q80-30|3.0',
);
const GPUS = pairs('NVIDIA Tesla T4|16;NVIDIA Tesla V100-PCIE-32GB|32;NVIDIA A100-SXM4-40GB|40;NVIDIA L4|24;NVIDIA H100 80GB HBM3|80');
/** Naming schemes of flavors (without a GPU | with one), as different cloud sites name them. */
const FLAVOR_STYLES = words('m1.$s|g1.$s hpc.$vcore-$rram|gpu.$vcore-$rram-$g c$vr$r|g$vr$r.$g standard.$s|$g.$s cm4.$s-$v|cm4.$s.$g');
const SIZES = words('tiny/1/2 small/2/4 medium/4/8 large/8/16 xlarge/16/32 2xlarge/32/64 mem.large/8/64 hpc/64/256').map((s) =>
  s.split('/'),
);
export const TAGS = words(
  'cpu-intensive memory-bound io-bound network-bound gpu baseline regression nightly manual ci production staging ssd nvme hdd ceph 10gbe 25gbe infiniband avx512 arm64 sriov hugepages numa-pinned overcommitted spot preemptible kvm container bare-metal',
);

/** The catalogue of a seed: the same ids and names every time. */
export function generateCatalogue(options: GenerateOptions) {
  const rng = seeded(deriveSeed(options.seed, 'catalogue'));
  const registered = options.start.getTime() - 90 * 86_400_000;
  const users = [CURATOR, ...Array.from({ length: 6 }, (_, i) => `uploader-${String(i + 1).padStart(2, '0')}`)].map((sub, i) => ({
    iss: DATA_ISSUER,
    sub,
    email: `${sub}@bench.example.org`,
    registration_datetime: new Date(registered + i * 3_600_000),
    terms_version: '2024-01',
  }));
  const [at, by] = [(days: number) => new Date(registered + days * 86_400_000), { uploader_iss: DATA_ISSUER, uploader_sub: CURATOR }];
  const reviewed = (offsetDays: number) => ({ id: rng.uuid(), status: 'approved', upload_datetime: at(offsetDays), ...by });
  const origin = options.shape === 'origin';
  // createdBy: who creates it through the API before its results are loaded (its id is then the server's); undefined: SQL.
  const benchmarks = (origin ? ORIGIN_BENCHMARKS : BENCHMARKS).map((def, i) => {
    const [createdBy, container_image, container_tag] = [origin && i < 2 ? (['user', 'admin'] as const)[i] : undefined, def.image, def.tag];
    const { description, url } = def;
    return { ...reviewed(1 + i), createdBy, container_image, container_tag, json_schema: benchmarkSchema(def), description, url, def };
  });
  // Sites with their flavors (a fifth of them with GPUs): names and specs first, then the ids.
  const specs = Array.from({ length: options.sites }, (_, s) => {
    const base = SITE_NAMES[s % SITE_NAMES.length]!;
    const name = s < SITE_NAMES.length ? base : `${base}-${Math.floor(s / SITE_NAMES.length) + 1}`;
    const [city, country] = CITIES[s % CITIES.length]!.split('/');
    const style = FLAVOR_STYLES[s % FLAVOR_STYLES.length]!.split('|');
    const [cpuBrand, ghz] = rng.pick(CPU_BRANDS);
    const diskKind = rng.pick(['nvme', 'ssd', 'ceph-rbd', 'ceph-rbd', 'hdd'] as const);
    const net = rng.pick([10, 10, 25, 40, 100]);
    const used = new Set<string>();
    const flavors = Array.from({ length: options.flavorsPerSite }, (_, f) => {
      const gpuFlavor = f >= options.flavorsPerSite - Math.max(1, Math.round(options.flavorsPerSite / 5));
      const [size, vcpus, ram] = gpuFlavor ? SIZES[3 + (f % 3)]! : SIZES[f % SIZES.length]!;
      const gpu = gpuFlavor ? rng.pick(GPUS) : null;
      const short = (gpu?.[0].split(' ')[1] ?? '').toLowerCase().replace(/[^a-z0-9]/g, '');
      const styled = style[gpu ? 1 : 0]!.replace(/\$([svrg])/g, (_m, k: string) => ({ s: size!, v: vcpus!, r: ram!, g: short })[k]!);
      let flavorName = styled;
      for (let k = 2; used.has(flavorName); k++) flavorName = `${styled}-v${k}`;
      used.add(flavorName);
      const gpuSpec = gpu ? { model: gpu[0], memoryGb: gpu[1], count: rng.pick([1, 1, 2, 4]) } : null;
      const disk = { kind: diskKind, sizeGb: rng.pick([20, 40, 80, 160, 500]) };
      const spec: FlavorSpec = { vcpus: Number(vcpus), ramGb: Number(ram), cpuBrand, ghz, gpu: gpuSpec, disk, networkGbps: net };
      const gpuText = spec.gpu ? `, ${spec.gpu.count}x ${spec.gpu.model}` : '';
      return { name: flavorName, description: `${spec.vcpus} vCPU, ${spec.ramGb} GiB RAM${gpuText}, ${diskKind} disk`, spec };
    });
    const address = `${rng.pick(STREETS.split('|'))} ${rng.int(1, 120)}, ${city}, ${country}`;
    return { name, address, description: `${name} research cloud (${country}), OpenStack, ${net} Gbit/s network`, flavors };
  });
  const rows = specs.map(({ flavors, ...site }, s) => {
    const row = { ...reviewed(20 + s * 0.5), ...site };
    return { row, flavors: flavors.map((f) => ({ ...reviewed(21 + s * 0.5), ...f, site_id: row.id, siteIndex: s })) };
  });
  const tags = Array.from({ length: options.tags }, (_, i) => {
    const base = TAGS[i % TAGS.length]!;
    const name = i < TAGS.length ? base : `${base}-${Math.floor(i / TAGS.length) + 1}`;
    return { ...reviewed(30 + i * 0.1), name, description: `Results labelled ${name}` };
  });
  return { users, benchmarks, sites: rows.map((r) => r.row), flavors: rows.flatMap((r) => r.flavors), tags };
}

const TAG_COUNT_WEIGHTS = [35, 35, 20, 10];
const CLAIM_MESSAGES = [
  'The flavor was overcommitted during this run; the numbers are not representative.',
  'Wrong benchmark arguments: the run used the default scene size.',
  'Duplicate of an earlier upload.',
  'The host was being drained for maintenance while this ran.',
];

/** The flavors a benchmark runs on: those with GPUs for a GPU benchmark, the others otherwise. */
const flavorsOf = (catalogue: Catalogue, gpu: boolean) => catalogue.flavors.filter((f) => !!f.spec.gpu === gpu);
const isGpu = (b: BenchmarkRow) => b.def.category === 'gpu';
const document = (b: BenchmarkRow, f: FlavorRow, rng: Rng, age: number) =>
  resultDocument(b.def, { rng, flavor: f.spec, siteIndex: f.siteIndex, age });

/** The results, in execution order (so the table's physical order follows time). Each call starts over from the seed. */
export function* generateResults(catalogue: Catalogue, options: GenerateOptions) {
  const rng = seeded(deriveSeed(options.seed, `results:${options.results}`));
  const benchmarkWeights = catalogue.benchmarks.map((b) => b.def.weight);
  const totalBenchmarkWeight = benchmarkWeights.reduce((a, b) => a + b, 0);
  // Some sites are busier than others.
  const siteWeights = catalogue.sites.map(() => 1 + 4 * rng.next());
  const pools = [true, false].map((gpu) => {
    const flavors = flavorsOf(catalogue, gpu);
    const weights = flavors.map((f) => siteWeights[f.siteIndex]!);
    return { flavors, weights, total: weights.reduce((a, b) => a + b, 0) };
  });
  const uploaders = catalogue.users.slice(1).map((u) => u.sub);
  const start = options.start.getTime();
  const [span, origin] = [options.end.getTime() - start, options.shape === 'origin'];
  for (let i = 0; i < options.results; i++) {
    const index = origin ? i % catalogue.benchmarks.length : rng.weighted(benchmarkWeights, totalBenchmarkWeight);
    const benchmark = catalogue.benchmarks[index]!;
    const pool = pools[isGpu(benchmark) ? 0 : 1]!;
    const flavor = pool.flavors[rng.weighted(pool.weights, pool.total)]!;
    const executed = start + Math.floor(((i + rng.next()) * span) / options.results);
    const json = document(benchmark, flavor, rng, (executed - start) / span);
    const uploaded = executed + Math.floor(((json.environment as { duration_s: number }).duration_s + rng.float(5, 7200)) * 1000);
    const hiddenRoll = rng.next();
    const deleted = hiddenRoll < options.hiddenFraction / 2;
    const claimed = !deleted && hiddenRoll < options.hiddenFraction;
    const tagCount = rng.weighted(TAG_COUNT_WEIGHTS, 100);
    const tag_ids = tagCount ? rng.sample(catalogue.tags, tagCount).map((t) => t.id) : [];
    const uploader_sub = rng.pick(uploaders);
    yield {
      id: rng.uuid(),
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
  for (const key of path.split('.')) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, unknown>)[key] : undefined;
  return cur;
}

/** A quantile of a benchmark's headline metric, estimated from 400 documents generated on its flavors (a stream of its own). */
export function metricQuantile(catalogue: Catalogue, options: GenerateOptions, benchmark: BenchmarkRow, q: number): number {
  const rng = seeded(deriveSeed(options.seed, `sample:${benchmark.def.key}`));
  const flavors = flavorsOf(catalogue, isGpu(benchmark));
  const values = Array.from({ length: 400 }, () => {
    const flavor = rng.pick(flavors);
    return valueAt(document(benchmark, flavor, rng, rng.next()), benchmark.def.metric) as number;
  }).sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.floor(q * values.length))]!;
}

/** Fresh result documents for the ingest scenarios (not part of the loaded data), over every benchmark in turn. */
export function ingestDocuments(catalogue: Catalogue, options: GenerateOptions, count: number) {
  const rng = seeded(deriveSeed(options.seed, 'ingest'));
  return Array.from({ length: count }, (_, i) => {
    const benchmark = catalogue.benchmarks[i % catalogue.benchmarks.length]!;
    const flavor = rng.pick(flavorsOf(catalogue, isGpu(benchmark)));
    const json = document(benchmark, flavor, rng, 1);
    return { benchmark, flavor, json, tag_ids: rng.sample(catalogue.tags, rng.weighted(TAG_COUNT_WEIGHTS, 100)).map((t) => t.id) };
  });
}

// ------------------------------------------- Random numbers (mulberry32, seeded): a seed gives the same data on every machine and run.
/** A seed derived from a base seed and a label, so independent streams do not overlap. */
export function deriveSeed(seed: number, label: string): number {
  let h = (seed ^ 0x9e3779b9) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

const HEX = '0123456789abcdef';
export type Rng = ReturnType<typeof seeded>;

export function seeded(seed: number) {
  let a = seed >>> 0;
  /** mulberry32: a float in [0, 1). */
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const hex = (length: number) => Array.from({ length }, () => HEX[Math.floor(next() * 16)]).join('');
  return {
    next,
    hex,
    /** An integer in [min, max]; a float in [min, max). */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    float: (min: number, max: number) => min + next() * (max - min),
    round: (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits,
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    /** An index chosen with the given (non-negative) weights. */
    weighted(weights: readonly number[], total = weights.reduce((x, y) => x + y, 0)): number {
      let x = next() * total;
      for (let i = 0; i < weights.length; i++) {
        x -= weights[i]!;
        if (x < 0) return i;
      }
      return weights.length - 1;
    },
    /** `count` distinct items. */
    sample<T>(items: readonly T[], count: number): T[] {
      const copy = [...items];
      return Array.from({ length: Math.min(count, copy.length) }, () => copy.splice(Math.floor(next() * copy.length), 1)[0]!);
    },
    /** Multiplicative noise around 1 (normal, Box-Muller): `value * noise(0.05)` varies by about 5 %. */
    noise(relative: number): number {
      const u = 1 - next();
      return Math.max(0.05, 1 + relative * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next()));
    },
    /** A version 4 UUID made of this generator's bits. */
    uuid(): string {
      const h = hex(32);
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${HEX[8 + Math.floor(next() * 4)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
    },
  };
}
