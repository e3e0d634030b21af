import type { tagOperations } from '@benchmarks/sdk/contract/tags';
import type { Handlers } from '../http/handler.ts';
import { createItem, getItem, listItems, updateItem } from '../services/catalogue/catalogue.ts';
import { approveItem, removeItem } from '../services/catalogue/review.ts';
import { tagFields, tagFilters, tags } from '../services/catalogue/tags.ts';
import { tagView } from '../services/catalogue/views.ts';
import { Where } from '../db/sql.ts';

export const tagHandlers: Handlers<typeof tagOperations> = {
  listTags: ({ em, services, query }) => listItems(em, services.catalogue.embeds, tags, tagFilters(query), query),
  searchTags: ({ em, services, query }) => listItems(em, services.catalogue.embeds, tags, new Where(), query),
  getTag: async ({ em, params }) => tagView(await getItem(em, tags, params.id)),
  createTag: ({ caller, body, idempotent, services }) => {
    const fields = tagFields(body);
    const review = services.config.reviewTags;
    return idempotent(async (em) => tagView(await createItem(em, tags, caller, fields, { review })));
  },
  updateTag: async ({ em, params, body }) => tagView(await updateItem(em, tags, params.id, tagFields(body), body)),
  deleteTag: ({ em, params, query }) => removeItem(em, tags, params.id, 'delete', query.cascade),
  approveTag: ({ em, params }) => approveItem(em, tags, params.id),
  rejectTag: ({ em, params }) => removeItem(em, tags, params.id, 'reject'),
};
