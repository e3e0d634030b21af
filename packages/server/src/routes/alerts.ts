import type { alertOperations } from '@benchmarks/sdk/contract/alerts';
import type { Handlers } from '../http/handler.ts';
import { reply } from '../core/reply.ts';
import { publicOrigin } from '../http/origin.ts';
import { createWatch, deleteWatch, getWatch, listWatches, watchView } from '../services/alerts/watches.ts';
import { decide, refreshWatch } from '../services/alerts/records.ts';
import { atomFeed, listRecords } from '../services/alerts/feed.ts';

type Note = { note?: string } | undefined;

export const alertHandlers: Handlers<typeof alertOperations> = {
  createWatch: async ({ em, caller, body, services }) => {
    const watch = await createWatch(em, caller, body, services.config.maxWatchesPerUser);
    // Its records at once: the creator sees the series' change points without waiting for a write.
    await refreshWatch(em, watch, services.changes.segmenter);
    return watchView(watch);
  },
  listWatches: ({ em, caller, query }) => listWatches(em, caller, query),
  getWatch: async ({ em, caller, params }) => watchView(await getWatch(em, caller, params.id)),
  deleteWatch: ({ em, caller, params }) => deleteWatch(em, caller, params.id),
  listChanges: async ({ em, caller, query, koa, services }) => {
    const page = await listRecords(em, caller, query);
    if (query.format !== 'atom') return page;
    const origin = publicOrigin(koa, services);
    return reply(200, atomFeed(page.items, `${origin}${koa.originalUrl}`, origin), {
      'Content-Type': 'application/atom+xml; charset=utf-8',
    });
  },
  acknowledgeChange: ({ em, caller, params, body }) => decide(em, caller, params.id, 'acknowledged', (body as Note)?.note),
  dismissChange: ({ em, caller, params, body }) => decide(em, caller, params.id, 'dismissed', (body as Note)?.note),
  reopenChange: ({ em, caller, params, body }) => decide(em, caller, params.id, 'open', (body as Note)?.note),
};
