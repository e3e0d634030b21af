import type { benchmarkOperations } from '@benchmarks/sdk/contract/benchmarks';
import type { Handlers } from '../http/handler.ts';
import { createItem, getItem, listItems, updateItem } from '../services/catalogue/catalogue.ts';
import { approveItem, removeItem } from '../services/catalogue/review.ts';
import { benchmarkFields, benchmarkFilters, benchmarks, benchmarkView } from '../services/catalogue/benchmarks.ts';
import { Where } from '../db/sql.ts';

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
    const row = await updateItem(em, benchmarks, params.id, await benchmarkFields(body, services.schemas), body);
    // Its suggested metrics may have changed: drop the indexes of the old ones, build the new (in the background).
    if (row.status === 'approved') void services.metrics.reconcile(services.orm.em.fork());
    return benchmarkView(row);
  },
  deleteBenchmark: async ({ em, params, query, services }) => {
    await removeItem(em, benchmarks, params.id, 'delete', query.cascade);
    // Its metric indexes go, and may make room for another benchmark's (in the background).
    void services.metrics.reconcile(services.orm.em.fork());
  },
  approveBenchmark: async ({ em, params, services }) => {
    await approveItem(em, benchmarks, params.id);
    // Its results can now be listed: index its suggested metrics, within the cap (in the background).
    void services.metrics.reconcile(services.orm.em.fork());
  },
  // Only approved benchmarks have metric indexes, and an approved one cannot be rejected (409).
  rejectBenchmark: ({ em, params }) => removeItem(em, benchmarks, params.id, 'reject'),
};
