import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static } from '@sinclair/typebox';
import { type FlavorInput, FlavorSort, FlavorUpdate } from '@benchmarks/sdk/contract/flavors';
import { readOnlyFields } from '@benchmarks/sdk/contract/catalogue-schemas';
import { Flavor, type FlavorRow } from '../../entities/catalogue.ts';
import type { Caller } from '../../core/caller.ts';
import { createItem, getItem, resultReferences, trimmed, type CatalogueKind } from './catalogue.ts';
import { sites } from './sites.ts';
import { Where } from '../../db/sql.ts';
import { AppError } from '../../core/errors.ts';
import { flavorView } from './views.ts';

export const flavors: CatalogueKind<FlavorRow, ReturnType<typeof flavorView>> = {
  type: 'flavor',
  label: 'Flavor',
  table: 'flavor',
  entity: Flavor,
  view: flavorView,
  title: (row) => row.name,
  duplicate: (f) => `Flavor ${f.name} already exists at this site.`,
  sort: FlavorSort,
  searchColumns: ['name', 'description'],
  readOnly: readOnlyFields(FlavorUpdate),
  references: resultReferences('flavor_id'),
};

export function flavorFields(body: Static<typeof FlavorInput>): Partial<FlavorRow> {
  return { name: trimmed(body.name, 'name'), description: body.description ?? null, ...flavorPrice(body) };
}

/** The price and its currency, given together or not at all (422 naming the one missing). */
function flavorPrice(body: Static<typeof FlavorInput>): Pick<FlavorRow, 'price_per_hour' | 'currency'> {
  const price = body.price_per_hour ?? null;
  const currency = body.currency ?? null;
  if ((price === null) !== (currency === null)) {
    const missing = price === null ? 'price_per_hour' : 'currency';
    const given = price === null ? 'currency' : 'price_per_hour';
    throw new AppError(422, 'INVALID_BODY', `price_per_hour and currency go together: ${given} was given without ${missing}.`, {
      errors: [{ in: 'body', path: `/${missing}`, message: `is required with ${given}` }],
    });
  }
  return { price_per_hour: price, currency };
}

/** Adds a flavor to a site of any status; 404 when the site does not exist. */
export async function createFlavor(em: EntityManager, caller: Caller, siteId: string, body: Static<typeof FlavorInput>) {
  await getItem(em, sites, siteId);
  return createItem(em, flavors, caller, { ...flavorFields(body), site_id: siteId });
}

/**
 * The flavors of a site, with the exact name filter, and the check that the site exists (404) for
 * listItems to run only when the page is empty: a flavor listed proves its site exists (foreign key),
 * so most lists are one statement.
 */
export function flavorFilters(
  em: EntityManager,
  siteId: string,
  query: { name?: string },
): { where: Where; siteExists: () => Promise<unknown> } {
  const where = new Where().add('site_id = ?', siteId);
  if (query.name !== undefined) where.add('name = ?', query.name);
  return { where, siteExists: () => getItem(em, sites, siteId) };
}
