/**
 * The one way services run a transaction. One aborted for a reason another try usually clears (a
 * deadlock, a serialization failure, a lock timeout) runs once more; a second such failure is a 503
 * DATABASE_BUSY (db/errors.ts). `work` must depend only on its arguments and what it reads through `tx`.
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
