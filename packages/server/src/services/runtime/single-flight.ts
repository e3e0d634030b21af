/**
 * One computation per key at a time (single-flight): while the answer for a key is being computed,
 * requests for the same key await that computation instead of starting their own. The remembered
 * comparisons and totals (services/compare/compare-cache.ts, services/results/total-cache.ts) put it behind their
 * misses, so that the requests arriving together after a write (which forgets everything) cost one
 * statement, not one each.
 *
 * - A computation's error goes to the requests that awaited it, and to no later one: the key is
 *   free again as soon as it settles.
 * - The computation runs in the request that started it (its statements, its admission place, its
 *   cancellation). When that request's client goes away (`signal`) and the computation fails, the
 *   others do not get the failure: they start it again, one of them leading.
 * - A request that awaits another's computation stops awaiting when its own client goes away.
 * - `forget()` (at a write) lets later requests start a computation of their own; those already
 *   awaiting one keep it: they asked before the write.
 *
 * Small enough to keep here rather than depend on a package for it (docs/decisions.md,
 * "Remembered comparisons").
 */
import { currentScope } from '../../db/request-scope.ts';

interface Flight<V> {
  promise: Promise<V>;
  /** Set when it failed after the client of the request that ran it went away. */
  abandoned: boolean;
}

export class SingleFlight<V> {
  readonly #flights = new Map<string, Flight<V>>();
  /** Computations started, and requests that awaited one another request started (read by the tests). */
  readonly counts = { started: 0, joined: 0 };

  /** Computations running now. */
  get size(): number {
    return this.#flights.size;
  }

  /**
   * The value of `compute()` for `key`: the computation already running for it, or a new one.
   * `signal`: the request's, aborted when its client goes away (default: the current request's).
   */
  async run(key: string, compute: () => Promise<V>, signal = currentScope()?.signal): Promise<V> {
    for (;;) {
      const running = this.#flights.get(key);
      if (!running) return this.#start(key, compute, signal).promise;
      this.counts.joined++;
      try {
        return await untilAborted(running.promise, signal);
      } catch (err) {
        // The request that ran it was abandoned, not this one: compute it here.
        if (running.abandoned && !signal?.aborted) continue;
        throw err;
      }
    }
  }

  /** Later requests compute anew; those awaiting a computation keep it. */
  forget(): void {
    this.#flights.clear();
  }

  #start(key: string, compute: () => Promise<V>, signal: AbortSignal | undefined): Flight<V> {
    this.counts.started++;
    const flight = { abandoned: false } as Flight<V>;
    flight.promise = (async () => {
      try {
        return await compute();
      } catch (err) {
        flight.abandoned = signal?.aborted === true;
        throw err;
      } finally {
        if (this.#flights.get(key) === flight) this.#flights.delete(key);
      }
    })();
    this.#flights.set(key, flight);
    return flight;
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function untilAborted<V>(promise: Promise<V>, signal: AbortSignal | undefined): Promise<V> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<V>((resolve, reject) => {
    const leave = () => reject(signal.reason);
    signal.addEventListener('abort', leave, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', leave);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener('abort', leave);
        reject(err);
      },
    );
  });
}
