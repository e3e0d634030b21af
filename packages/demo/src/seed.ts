import { randomUUID } from 'node:crypto';
import { Benchmark, Flavor, Result, ResultTag, Site, Tag, User, type RunningServer } from '@benchmarks/server';

type EntityManager = ReturnType<RunningServer['context']['orm']['em']['fork']>;

export const CRAY_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'https://benchmarks.example.org/schemas/c-ray-1.2.json',
  title: 'c-ray ray-tracing benchmark result',
  type: 'object',
  required: ['machine', 'result', 'test', 'units'],
  properties: {
    arguments: { const: '-s 1600x1200 -r 8 -i sphfract -o output.ppm', description: 'Command line of the run.' },
    machine: {
      type: 'object',
      required: ['cpu'],
      properties: {
        cpu: {
          type: 'object',
          required: ['count'],
          properties: {
            arch: { type: 'string', suggestToUser: true },
            bits: { type: 'integer' },
            brand_raw: { type: 'string', suggestToUser: true },
            count: { type: 'integer', minimum: 1, suggestToUser: true },
            hz_actual_friendly: { type: 'string' },
          },
        },
      },
    },
    result: {
      type: 'object',
      required: ['all_results', 'score'],
      properties: {
        all_results: { type: 'string' },
        score: { type: 'number', minimum: 0, suggestToUser: true, 'x-better': 'lower', description: 'Seconds to render: lower is better.' },
      },
    },
    test: { const: 'c-ray' },
    units: { const: 'Seconds' },
  },
} as const;

const SITES = [
  { name: 'CESGA', address: 'Avenida de Vigo s/n, Santiago de Compostela, Spain', description: 'Galician supercomputing centre cloud' },
  { name: 'IFCA-LCG2', address: 'Avda. de los Castros s/n, Santander, Spain', description: 'IFCA OpenStack cloud' },
  { name: 'CESNET-MCC', address: 'Zikova 4, Prague, Czech Republic', description: 'CESNET MetaCentrum cloud' },
];
/** Flavors with an hourly price (one site prices in its own currency: compare ranks by price within one). */
const FLAVORS: Record<string, { name: string; cpus: number; brand: string; price: [number, string] }[]> = {
  CESGA: [
    { name: 'standard.small', cpus: 2, brand: 'Intel(R) Xeon(R) CPU E5-2680 v3 @ 2.50GHz', price: [0.05, 'EUR'] },
    { name: 'hpc.8core-16ram', cpus: 8, brand: 'Intel(R) Xeon(R) Gold 6240 CPU @ 2.60GHz', price: [0.4, 'EUR'] },
  ],
  'IFCA-LCG2': [
    { name: 'm1.small', cpus: 1, brand: 'AMD EPYC 7452 32-Core Processor', price: [0.02, 'EUR'] },
    { name: 'cm4.large', cpus: 4, brand: 'AMD EPYC 7452 32-Core Processor', price: [0.12, 'EUR'] },
  ],
  'CESNET-MCC': [{ name: 'svc1.s', cpus: 4, brand: 'Intel(R) Xeon(R) Silver 4214 CPU @ 2.20GHz', price: [2.5, 'CZK'] }],
};
/** Runs per flavor: more than compare's default min_samples (5), so the demo's flavors are ranked. */
const RUNS_PER_FLAVOR = 6;
/**
 * One flavor has a longer history whose 8 latest runs are a quarter slower (a regression, lower
 * being better): GET /results:changes finds the step. 16 + 4 × 6 = 40 results, as before.
 */
const STEPPED = { flavor: 'hpc.8core-16ram', runs: 16, latest: 8, slower: 1.25 };
const TAGS = [
  { name: 'cpu-intensive', description: 'Bound by CPU throughput' },
  { name: 'baseline', description: 'Reference run with default settings' },
  { name: 'gpu', description: 'Uses a GPU' },
];

/** The row of `app_setting` that records the demo's decision to seed a database or not. */
export const SEED_SETTING = 'demo_catalogue';

/** What `seedOnce` did: seeded now, found the catalogue holding data, or found the decision made before. */
export type SeedOutcome = 'seeded' | 'held data' | 'decided before';

/**
 * Seeds the sample catalogue once in the life of a database: at the first demo start (with seeding
 * on) that finds its catalogue empty. The decision is recorded in `app_setting` in the same
 * transaction (run this in one), whatever it is, so a catalogue seeded and then emptied, or one
 * that held data of its own, is never seeded afterwards. Two demos starting together on one
 * database: the second waits on the first's row, then finds the decision made.
 */
export async function seedOnce(tx: EntityManager, owner: { iss: string; sub: string }): Promise<SeedOutcome> {
  const claimed = await tx.execute(
    `insert into app_setting (name, value) values (?, 'deciding') on conflict (name) do nothing returning name`,
    [SEED_SETTING],
  );
  if (claimed.length === 0) return 'decided before';
  const [held] = await tx.execute(
    `select exists (select 1 from benchmark) or exists (select 1 from site) or exists (select 1 from tag) as held`,
  );
  const outcome: SeedOutcome = held?.held ? 'held data' : 'seeded';
  if (outcome === 'seeded' && !(await seedDemo(tx, owner))) throw new Error('The demo catalogue was not seeded into an empty catalogue.');
  await tx.execute(`update app_setting set value = ?, set_datetime = now() where name = ?`, [outcome, SEED_SETTING]);
  return outcome;
}

/** Seeds a small realistic catalogue (when no benchmark exists), uploaded by `owner`; `seedOnce` decides when. */
export async function seedDemo(em: EntityManager, owner: { iss: string; sub: string }): Promise<boolean> {
  if ((await em.count(Benchmark, {})) > 0) return false;
  if (!(await em.findOne(User, { iss: owner.iss, sub: owner.sub }))) throw new Error('The demo owner must be registered before seeding.');
  const now = new Date();
  const reviewed = { status: 'approved', upload_datetime: now, uploader_iss: owner.iss, uploader_sub: owner.sub };
  const benchmark = em.create(Benchmark, {
    id: randomUUID(),
    container_image: 'ghcr.io/benchmarks-demo/c-ray',
    container_tag: '1.2',
    json_schema: CRAY_SCHEMA,
    description: 'c-ray 1.1 ray-tracing benchmark (Phoronix Test Suite): seconds to render a 1600x1200 scene.',
    url: 'https://openbenchmarking.org/test/pts/c-ray',
    ...reviewed,
  });
  const tags = TAGS.map((t) => em.create(Tag, { id: randomUUID(), ...t, ...reviewed }));
  // Entities hold plain foreign keys, so the unit of work cannot order inserts: flush parents first.
  await em.flush();
  const resultTags: { result_id: string; tag_id: string }[] = [];
  let n = 0;
  for (const s of SITES) {
    const site = em.create(Site, { id: randomUUID(), ...s, ...reviewed });
    await em.flush();
    for (const f of FLAVORS[s.name]!) {
      const flavor = em.create(Flavor, {
        id: randomUUID(),
        site_id: site.id,
        name: f.name,
        description: `${f.cpus} vCPU`,
        price_per_hour: f.price[0],
        currency: f.price[1],
        ...reviewed,
      });
      await em.flush();
      const stepped = f.name === STEPPED.flavor;
      for (let run = 0; run < (stepped ? STEPPED.runs : RUNS_PER_FLAVOR); run++) {
        n++;
        // Lower runs are later (execution_datetime below).
        const step = stepped && run < STEPPED.latest ? STEPPED.slower : 1;
        const score = Math.round((2400 / Math.sqrt(f.cpus)) * (0.9 + ((n * 37) % 20) / 100) * step * 100) / 100;
        const result = em.create(Result, {
          id: randomUUID(),
          benchmark_id: benchmark.id,
          site_id: site.id,
          flavor_id: flavor.id,
          json: {
            arguments: '-s 1600x1200 -r 8 -i sphfract -o output.ppm',
            machine: { cpu: { arch: 'X86_64', bits: 64, brand_raw: f.brand, count: f.cpus, hz_actual_friendly: '2.4000 GHz' } },
            result: { all_results: `${score} ${score + 3.1} ${score - 2.4}`, score },
            test: 'c-ray',
            units: 'Seconds',
          },
          execution_datetime: new Date(now.getTime() - (n * 36 + run) * 3_600_000),
          upload_datetime: now,
          uploader_iss: owner.iss,
          uploader_sub: owner.sub,
          deleted: false,
          hidden: false,
        });
        resultTags.push({ result_id: result.id, tag_id: tags[0]!.id });
        if (run === 0) resultTags.push({ result_id: result.id, tag_id: tags[1]!.id });
      }
    }
  }
  await em.flush();
  for (const rt of resultTags) em.create(ResultTag, rt);
  await em.flush();
  return true;
}
