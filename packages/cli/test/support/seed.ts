/** Seeds the catalogue through the API as an administrator (whose uploads are approved at once). */
import type { TestServer } from '../../../server/test/support/harness.ts';

export interface Catalogue {
  admin: string;
  benchmark: { id: string; name: string };
  site: { id: string; name: string };
  flavor: { id: string; name: string };
  tag: { id: string; name: string };
}

export const SCHEMA = {
  type: 'object',
  required: ['score'],
  properties: { score: { type: 'number' }, machine: { type: 'object' } },
  suggestToUser: true,
};

async function created(t: TestServer, token: string, path: string, body: unknown) {
  const res = await t.request('POST', path, { token, body });
  if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${res.text}`);
  return res.body;
}

export async function seedCatalogue(t: TestServer, prefix = 'cli'): Promise<Catalogue> {
  const admin = await t.admin(`${prefix}-admin`);
  const benchmark = await created(t, admin, '/benchmarks', {
    container_image: `ghcr.io/${prefix}/bench`,
    container_tag: '1.0',
    json_schema: SCHEMA,
    url: 'https://example.org/bench',
  });
  const site = await created(t, admin, '/sites', { name: `Site ${prefix}`, address: 'Santiago de Compostela, Spain' });
  const flavor = await created(t, admin, `/sites/${site.id}/flavors`, { name: 'c4.large', description: '4 vCPU, 16 GiB' });
  const tag = await created(t, admin, '/tags', { name: `${prefix}-nightly` });
  return { admin, benchmark, site, flavor, tag };
}

/** Uploads one result through the API. */
export async function seedResult(
  t: TestServer,
  token: string,
  c: Catalogue,
  json: unknown,
  executed = '2025-01-01T10:00:00Z',
  tags: string[] = [],
) {
  const res = await t.request('POST', '/results', {
    token,
    body: json,
    query: { benchmark_id: c.benchmark.id, flavor_id: c.flavor.id, execution_datetime: executed, tags_ids: tags },
  });
  if (res.status !== 201) throw new Error(`POST /results: ${res.status} ${res.text}`);
  return res.body;
}
