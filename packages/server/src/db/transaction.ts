/**
 * The one way services run a transaction. PostgreSQL aborts a transaction now and then for reasons
 * that another try usually clears: a deadlock, a serialization failure, a lock wait that timed out.
 * The work is then run once more, in a new transaction; a second such failure propagates and
 * db/errors.ts answers it 503 DATABASE_BUSY with Retry-After. Nothing of a failed attempt is kept
 * (it was rolled back), so `work` must only depend on its arguments and on what it reads through `tx`.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { isTransientDatabaseError } from './errors.ts';

/** How many times the work runs at most. */
export const TRANSACTION_ATTEMPTS = 2;

export async function transaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await em.transactional(work);
    } catch (err) {
      if (attempt >= TRANSACTION_ATTEMPTS || !isTransientDatabaseError(err)) throw err;
      // A few milliseconds apart, so the two sides of a deadlock do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
  }
}
