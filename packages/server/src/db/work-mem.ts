/**
 * Statements of a list read from the metric values, planned with settings local to a transaction:
 * - `work_mem` sized to the sets of result ids they check rows against, which PostgreSQL hashes only
 *   when they fit in hash_mem and otherwise scans for every row (services/metrics/metric-lookup.ts);
 * - no parallel workers: for a bounded range they cost more to start than they save (a top-N sort
 *   of 30,000 entries: 16 ms with two, 7 ms without), and under load they take others' cores.
 */
import type { EntityManager } from '@mikro-orm/postgresql';

/** Runs `work` in a transaction planned without parallel workers and with `workMemKb` of work_mem (0: the server's). */
export async function withWorkMem<T>(em: EntityManager, workMemKb: number, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.transactional(async (tx) => {
    if (workMemKb > 0) {
      await tx.execute("select set_config('max_parallel_workers_per_gather', '0', true), set_config('work_mem', ?, true)", [
        `${Math.round(workMemKb)}kB`,
      ]);
    } else await tx.execute("select set_config('max_parallel_workers_per_gather', '0', true)");
    return work(tx);
  });
}
