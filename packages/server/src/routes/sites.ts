import type { siteOperations } from '@benchmarks/sdk/contract/sites';
import type { Handlers } from '../http/handler.ts';
import { createItem, getItem, listItems, updateItem } from '../services/catalogue/catalogue.ts';
import { approveItem, removeItem } from '../services/catalogue/review.ts';
import { siteFields, siteFilters, sites } from '../services/catalogue/sites.ts';
import { siteView } from '../services/catalogue/views.ts';
import { Where } from '../db/sql.ts';

export const siteHandlers: Handlers<typeof siteOperations> = {
  listSites: ({ em, services, query }) => listItems(em, services.catalogue.embeds, sites, siteFilters(query), query),
  searchSites: ({ em, services, query }) => listItems(em, services.catalogue.embeds, sites, new Where(), query),
  getSite: async ({ em, params }) => siteView(await getItem(em, sites, params.id)),
  createSite: ({ caller, body, idempotent }) => {
    const fields = siteFields(body);
    return idempotent(async (em) => siteView(await createItem(em, sites, caller, fields)));
  },
  updateSite: async ({ em, params, body }) => siteView(await updateItem(em, sites, params.id, siteFields(body), body)),
  deleteSite: ({ em, params, query }) => removeItem(em, sites, params.id, 'delete', query.cascade),
  approveSite: ({ em, params }) => approveItem(em, sites, params.id),
  rejectSite: ({ em, params }) => removeItem(em, sites, params.id, 'reject'),
};
