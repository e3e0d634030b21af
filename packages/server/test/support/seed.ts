/**
 * Seeds catalogue rows (and bulk results) straight through the EntityManager, so result tests do
 * not depend on the catalogue's HTTP endpoints. Parents are flushed before children.
 */
import { randomUUID } from 'node:crypto';
import { choosePathsOfNewBenchmark } from '../../src/services/metrics/metric-values.ts';
import { Benchmark, Flavor, Result, ResultTag, Site, Tag } from '../../src/entities/index.ts';
import type { TestServer } from './harness.ts';

export type SeedStatus = 'approved' | 'on_review';

let counter = 0;
/** A name unique within the test database. */
export const uniqueName = (prefix: string) => `${prefix}-${++counter}-${randomUUID().slice(0, 6)}`;

export interface SeededResult {
  benchmark_id: string;
  flavor_id: string;
  site_id: string;
  json: Record<string, unknown>;
  execution_datetime: Date;
  upload_datetime?: Date;
  uploader?: string;
  tags?: string[];
  hidden?: boolean;
}

export async function createSeeder(t: TestServer, ownerSub = 'catalogue-owner') {
  await t.user(ownerSub);
  const owner = { uploader_iss: t.issuer.issuer, uploader_sub: ownerSub };
  const fork = () => t.server.context.orm.em.fork();
  const reviewed = (status: SeedStatus) => ({ status, upload_datetime: new Date(), ...owner });

  async function save<T extends object>(build: (em: ReturnType<typeof fork>) => T): Promise<T> {
    const em = fork();
    const row = build(em);
    await em.flush();
    return row;
  }

  return {
    owner,
    /**
     * A benchmark as the API creates it: its metric paths chosen at once (services/catalogue/benchmarks.ts);
     * `paths: false`, as one written by SQL, left to the next reconcile.
     */
    benchmark: async (
      o: { schema?: Record<string, unknown> | boolean; status?: SeedStatus; image?: string; tag?: string; paths?: boolean } = {},
    ) => {
      const row = await save((em) =>
        em.create(Benchmark, {
          id: randomUUID(),
          container_image: o.image ?? `ghcr.io/test/${uniqueName('bench')}`,
          container_tag: o.tag ?? '1.0',
          json_schema: o.schema ?? {},
          description: 'seeded benchmark',
          url: null,
          ...reviewed(o.status ?? 'approved'),
        }),
      );
      if (o.paths !== false) await choosePathsOfNewBenchmark(fork(), row.id, row.json_schema);
      return row;
    },
    site: (o: { name?: string; address?: string; status?: SeedStatus } = {}) =>
      save((em) =>
        em.create(Site, {
          id: randomUUID(),
          name: o.name ?? uniqueName('site'),
          address: o.address ?? 'Somewhere 1, Earth',
          description: null,
          ...reviewed(o.status ?? 'approved'),
        }),
      ),
    flavor: (siteId: string, o: { name?: string; status?: SeedStatus } = {}) =>
      save((em) =>
        em.create(Flavor, {
          id: randomUUID(),
          site_id: siteId,
          name: o.name ?? uniqueName('flavor'),
          description: '4 vCPU',
          ...reviewed(o.status ?? 'approved'),
        }),
      ),
    tag: (o: { name?: string; status?: SeedStatus } = {}) =>
      save((em) =>
        em.create(Tag, { id: randomUUID(), name: o.name ?? uniqueName('tag'), description: null, ...reviewed(o.status ?? 'approved') }),
      ),
    /** Inserts results directly (uploaded by `uploader`, default the owner); returns their ids in order. */
    async results(rows: SeededResult[]): Promise<string[]> {
      const em = fork();
      const created = rows.map((r) =>
        em.create(Result, {
          id: randomUUID(),
          benchmark_id: r.benchmark_id,
          site_id: r.site_id,
          flavor_id: r.flavor_id,
          json: r.json,
          execution_datetime: r.execution_datetime,
          upload_datetime: r.upload_datetime ?? new Date(),
          uploader_iss: owner.uploader_iss,
          uploader_sub: r.uploader ?? owner.uploader_sub,
          deleted: false,
          hidden: r.hidden ?? false,
        }),
      );
      await em.flush();
      rows.forEach((r, i) => {
        r.tags?.forEach((tag_id) => {
          em.create(ResultTag, { result_id: created[i]!.id, tag_id });
        });
      });
      await em.flush();
      return created.map((r) => r.id);
    },
    /** Runs raw SQL on the test database (for assertions on what is stored). */
    sql: <T = Record<string, unknown>>(sql: string, params: unknown[] = []) => fork().execute<T[]>(sql, params),
  };
}

export type Seeder = Awaited<ReturnType<typeof createSeeder>>;

/** Asserts an application/problem+json error with this status and code. */
/** The shared problem+json assertion, under the name these tests use. */
export { assertProblem as expectProblem } from './problem.ts';

/** Uploads a result through the API. */
export function upload(
  t: TestServer,
  token: string | undefined,
  query: { benchmark_id: string; flavor_id: string; execution_datetime?: string; tags_ids?: string[] },
  body: unknown,
) {
  return t.request('POST', '/results', {
    token,
    query: { execution_datetime: '2024-05-01T12:00:00Z', ...query },
    body,
  });
}
