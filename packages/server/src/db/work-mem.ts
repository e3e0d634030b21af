/**
 * Statements that must be planned with more `work_mem` than the server's: those checking rows
 * against sets of result ids, which PostgreSQL hashes only when their estimate fits in hash_mem
 * (work_mem × hash_mem_multiplier) and otherwise scans again for every row
 * (services/results/metric-lookup.ts). The setting is local to a transaction of their own: the
 * pooled connection keeps its own, and no other statement plans with it.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Runs `work` in a transaction planned with `workMemKb` of work_mem; 0: as it is, on `em`. */
export async function withWorkMem<T>(em: EntityManager, workMemKb: number, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  if (workMemKb <= 0) return work(em);
  return em.transactional(async (tx) => {
    await tx.execute("select set_config('work_mem', ?, true)", [`${Math.round(workMemKb)}kB`]);
    return work(tx);
  });
}
