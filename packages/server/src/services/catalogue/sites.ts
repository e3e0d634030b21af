import type { Static } from '@sinclair/typebox';
import { type SiteInput, SiteSort, SiteUpdate } from '@benchmarks/sdk/contract/sites';
import { readOnlyFields } from '@benchmarks/sdk/contract/catalogue-schemas';
import { Site, type SiteRow } from '../../entities/catalogue.ts';
import { COUNTS, type ReferenceCounts, trimmed, type CatalogueKind } from './catalogue.ts';
import { Where } from '../../db/sql.ts';
import { siteView } from './views.ts';

/** Results at the site: recorded with its id, or on one of its flavors. */
const RESULTS = 'from result where site_id = ? or flavor_id in (select id from flavor where site_id = ?)';

export const sites: CatalogueKind<SiteRow, ReturnType<typeof siteView>> = {
  type: 'site',
  label: 'Site',
  table: 'site',
  entity: Site,
  view: siteView,
  title: (row) => row.name,
  duplicate: (f) => `Site ${f.name} already exists.`,
  sort: SiteSort,
  searchColumns: ['name', 'address', 'description'],
  readOnly: readOnlyFields(SiteUpdate),
  references: {
    // A reject takes the site's flavors on review along; approved ones block it.
    async count(em, id, mode) {
      const flavorStatus = mode === 'reject' ? ` and status = 'approved'` : '';
      const [row] = await em.execute<ReferenceCounts[]>(
        `select r.*, (select count(*)::int from flavor where site_id = ?${flavorStatus}) as flavors
         from (select ${COUNTS} ${RESULTS}) r`,
        [id, id, id],
      );
      return row!;
    },
    async cascade(em, id) {
      await em.execute(`delete ${RESULTS}`, [id, id]);
      await em.execute('delete from flavor where site_id = ?', [id]);
    },
    cascadeHint: 'delete its flavors and their results too',
  },
};

export function siteFields(body: Static<typeof SiteInput>): Partial<SiteRow> {
  return { name: trimmed(body.name, 'name'), address: trimmed(body.address, 'address'), description: body.description ?? null };
}

/** The exact filters of GET /sites. */
export function siteFilters(query: { name?: string; address?: string }): Where {
  const where = new Where();
  if (query.name !== undefined) where.add('name = ?', query.name);
  if (query.address !== undefined) where.add('address = ?', query.address);
  return where;
}
