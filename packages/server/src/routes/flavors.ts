import type { flavorOperations } from '@benchmarks/sdk/contract/flavors';
import type { Handlers } from '../http/handler.ts';
import { getItem, listItems, updateItem } from '../services/catalogue/catalogue.ts';
import { approveItem, removeItem } from '../services/catalogue/review.ts';
import { createFlavor, flavorFields, flavorFilters, flavors } from '../services/catalogue/flavors.ts';
import { sites } from '../services/catalogue/sites.ts';
import { flavorView, siteView } from '../services/catalogue/views.ts';

export const flavorHandlers: Handlers<typeof flavorOperations> = {
  listFlavors: async ({ em, services, params, query }) => {
    const { where, siteExists } = flavorFilters(em, params.id, query);
    return listItems(em, services.catalogue.embeds, flavors, where, query, siteExists);
  },
  searchFlavors: async ({ em, services, params, query }) => {
    const { where, siteExists } = flavorFilters(em, params.id, {});
    return listItems(em, services.catalogue.embeds, flavors, where, query, siteExists);
  },
  createFlavor: ({ caller, params, body, idempotent }) =>
    idempotent(async (em) => flavorView(await createFlavor(em, caller, params.id, body))),
  getFlavor: async ({ em, params }) => flavorView(await getItem(em, flavors, params.id)),
  getFlavorSite: async ({ em, params }) => {
    const flavor = await getItem(em, flavors, params.id);
    return siteView(await getItem(em, sites, flavor.site_id));
  },
  updateFlavor: async ({ em, params, body }) => flavorView(await updateItem(em, flavors, params.id, flavorFields(body), body)),
  deleteFlavor: ({ em, params, query }) => removeItem(em, flavors, params.id, 'delete', query.cascade),
  approveFlavor: ({ em, params }) => approveItem(em, flavors, params.id),
  rejectFlavor: ({ em, params }) => removeItem(em, flavors, params.id, 'reject'),
};
