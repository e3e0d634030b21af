import type { benchmarkOperations } from '@benchmarks/sdk/contract/benchmarks';
import type { Handlers } from '../http/handler.ts';
import { getItem, listItems } from '../services/catalogue/catalogue.ts';
import { removeItem } from '../services/catalogue/review.ts';
import {
  approveBenchmark,
  benchmarkFields,
  benchmarkFilters,
  benchmarks,
  createBenchmark,
  deleteBenchmark,
  updateBenchmark,
} from '../services/catalogue/benchmarks.ts';
import { benchmarkView } from '../services/catalogue/views.ts';
import { Where } from '../db/sql.ts';

export const benchmarkHandlers: Handlers<typeof benchmarkOperations> = {
  listBenchmarks: ({ em, services, query }) => listItems(em, services.catalogue.embeds, benchmarks, benchmarkFilters(query), query),
  searchBenchmarks: ({ em, services, query }) => listItems(em, services.catalogue.embeds, benchmarks, new Where(), query),
  getBenchmark: async ({ em, params }) => benchmarkView(await getItem(em, benchmarks, params.id)),
  createBenchmark: async ({ caller, body, services, idempotent }) => {
    // The schema is checked (in a worker) before the transaction: no connection is held meanwhile.
    const fields = await benchmarkFields(body, services.schemas);
    return idempotent(async (em) => benchmarkView(await createBenchmark(em, caller, fields)));
  },
  updateBenchmark: async ({ em, params, body, services }) => benchmarkView(await updateBenchmark(em, services, params.id, body)),
  deleteBenchmark: ({ em, params, query }) => deleteBenchmark(em, params.id, query.cascade),
  approveBenchmark: ({ em, params }) => approveBenchmark(em, params.id),
  // An approved benchmark cannot be rejected (409).
  rejectBenchmark: ({ em, params }) => removeItem(em, benchmarks, params.id, 'reject'),
};
