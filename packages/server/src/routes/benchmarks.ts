import type { benchmarkOperations } from '@benchmarks/sdk/contract/benchmarks';
import type { Handlers } from '../http/handler.ts';
import { createItem, getItem, listItems, updateItem } from '../services/catalogue.ts';
import { approveItem, removeItem } from '../services/review.ts';
import { benchmarkFields, benchmarkFilters, benchmarks, benchmarkView } from '../services/benchmarks.ts';
import { Where } from '../services/sql.ts';

export const benchmarkHandlers: Handlers<typeof benchmarkOperations> = {
  listBenchmarks: ({ em, services, query }) => listItems(em, services.embeds, benchmarks, benchmarkFilters(query), query),
  searchBenchmarks: ({ em, services, query }) => listItems(em, services.embeds, benchmarks, new Where(), query),
  getBenchmark: async ({ em, params }) => benchmarkView(await getItem(em, benchmarks, params.id)),
  createBenchmark: async ({ caller, body, services, idempotent }) => {
    // The schema is checked (in a worker) before the transaction: no connection is held meanwhile.
    const fields = await benchmarkFields(body, services.schemas);
    return idempotent(async (em) => benchmarkView(await createItem(em, benchmarks, caller, fields)));
  },
  updateBenchmark: async ({ em, params, body, services }) => {
    const row = await updateItem(em, benchmarks, params.id, await benchmarkFields(body, services.schemas));
    // Its suggested metrics may have changed: index the new ones (in the background).
    if (row.status === 'approved') void services.metrics.ensure(services.orm.em.fork(), row);
    return benchmarkView(row);
  },
  deleteBenchmark: ({ em, params, query }) => removeItem(em, benchmarks, params.id, 'delete', query.cascade),
  approveBenchmark: async ({ em, params, services }) => {
    await approveItem(em, benchmarks, params.id);
    // Its results can now be listed: index its suggested metrics (in the background).
    void services.metrics.ensure(services.orm.em.fork(), await getItem(em, benchmarks, params.id));
  },
  rejectBenchmark: ({ em, params }) => removeItem(em, benchmarks, params.id, 'reject'),
};
