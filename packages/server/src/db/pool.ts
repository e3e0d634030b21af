import type { EntityManager } from '@mikro-orm/postgresql';

/** The part of knex's pool (tarn) read here. */
interface PoolGauge {
  max: number;
  numUsed(): number;
  numPendingAcquires(): number;
}

/**
 * Whether the application pool is at most half busy: connections handed out and requests waiting
 * for one leave at least half of it free. A list may then read its page and its total in parallel,
 * on two connections; on a busy pool it reads them one after the other, on one.
 */
export function poolIsQuiet(em: EntityManager): boolean {
  // knex types its client `any`: this names the one member read.
  const { pool }: { pool?: PoolGauge } = em.getConnection().getKnex().client;
  if (!pool) return true; // created on first use
  return pool.numUsed() + pool.numPendingAcquires() <= pool.max / 2;
}
