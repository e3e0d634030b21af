import { AppError } from '../core/errors.ts';
import { currentScope } from '../db/request-scope.ts';

/**
 * A first-come, first-served semaphore: at most `limit` pieces of work run at once; the others wait
 * their turn.
 */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most that ever held a place at once, and how many had to wait (read by the tests). */
  peak = 0;
  waited = 0;

  constructor(readonly limit: number) {}

  /**
   * Runs `work` when a place is free; the place is released however `work` ends. When `signal`
   * aborts while waiting, the request leaves the line and `run` rejects with the signal's reason.
   */
  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.active >= this.limit) {
      this.waited++;
      await new Promise<void>((resolve, reject) => {
        const turn = () => {
          signal?.removeEventListener('abort', leave);
          resolve();
        };
        const leave = () => {
          const at = this.waiting.indexOf(turn);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(signal!.reason);
        };
        this.waiting.push(turn);
        signal?.addEventListener('abort', leave, { once: true });
      });
    } else {
      this.active++;
      this.peak = Math.max(this.peak, this.active);
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      // The place passes straight to the next in line: `active` counts it already.
      if (next) next();
      else this.active--;
    }
  }

  /** Requests holding a place and requests waiting for one. */
  get load(): { active: number; waiting: number } {
    return { active: this.active, waiting: this.waiting.length };
  }
}

/** Bodies declared (Content-Length) at or above this size, or sent chunked, pass through the gates. */
export const LARGE_BODY_BYTES = 64 * 1024;

/**
 * Admission of requests with large bodies (batches of results, up to BODY_LIMIT bytes), in two
 * stages:
 * - **reading**: the body is read as text (at most BODY_LIMIT bytes of it) while holding one of
 *   `readers` places; beyond them, bodies wait unread (the socket applies back-pressure). A slow
 *   client holds only a reading place, and the texts alive at once are bounded.
 * - **working**: the text is parsed, validated and stored while holding one of `workers` places.
 *   On 2 cores a few batches in flight keep CPU and PostgreSQL as busy as 32 do; 32 at once only
 *   multiply the parsed documents and statement parameters alive together, and with them the heap.
 */
export class LargeBodyAdmission {
  readonly reading: Semaphore;
  readonly working: Semaphore;

  constructor(workers: number, readers = Math.max(32, 8 * workers)) {
    this.working = new Semaphore(workers);
    this.reading = new Semaphore(Math.max(readers, workers));
  }
}

/**
 * Admission of expensive result lists (search terms, JSON filters, sorts no index serves): at most
 * `limit` run at once in this process, at most `maxWaiting` wait for a place (first come, first
 * served); one more is refused at once with 503 EXPENSIVE_LIST_BUSY and Retry-After. A waiting
 * request whose client goes away (`signal`) leaves the queue. Cheap lists never pass through it, so
 * they keep answering while expensive ones queue.
 */
export class ExpensiveListAdmission {
  readonly #places: Semaphore;
  constructor(
    readonly limit: number,
    readonly maxWaiting = 4 * limit,
  ) {
    this.#places = new Semaphore(limit);
  }

  get load(): { active: number; waiting: number } {
    return this.#places.load;
  }

  async run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const { active, waiting } = this.#places.load;
    if (active >= this.limit && waiting >= this.maxWaiting) {
      throw new AppError(
        503,
        'EXPENSIVE_LIST_BUSY',
        `Too many searches, JSON filters or JSON sorts are running (${this.limit} at once, ${this.maxWaiting} waiting). ` +
          'Try again shortly, or narrow the request (benchmark_id, dates) and sort by execution_datetime.',
        { headers: { 'Retry-After': '2' } },
      );
    }
    // A request whose client goes away leaves the line (db/request-scope.ts aborts its signal).
    return this.#places.run(work, signal ?? currentScope()?.signal);
  }
}

/**
 * Admission of exports: at most `limit` stream at once in this process. One more waits for a place,
 * at most `maxWaitMs` (10 s) and with at most `maxWaiting` others (small exports end in
 * milliseconds); past either it is refused with 503 EXPORT_BUSY and Retry-After. A place is held
 * until the export's stream ends or its client goes away (the returned function gives it back).
 */
export class ExportAdmission {
  #active = 0;
  readonly #waiting: { admit: () => void; timer: NodeJS.Timeout }[] = [];

  constructor(
    readonly limit: number,
    readonly maxWaiting = 4 * limit,
    readonly maxWaitMs = 10_000,
  ) {}

  get active(): number {
    return this.#active;
  }

  /** Exports waiting for a place now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  #busy(): AppError {
    return new AppError(
      503,
      'EXPORT_BUSY',
      `Too many exports are streaming (${this.limit} at once, ${this.maxWaiting} waiting up to ${this.maxWaitMs / 1000} s). ` +
        'Try again shortly, or narrow the export (benchmark_id, dates, filters).',
      { headers: { 'Retry-After': '5' } },
    );
  }

  /** Takes a place, waiting for one if need be (503 EXPORT_BUSY); the returned function gives it back, once. */
  async enter(signal?: AbortSignal): Promise<() => void> {
    if (this.#active >= this.limit) {
      if (this.#waiting.length >= this.maxWaiting) throw this.#busy();
      await new Promise<void>((resolve, reject) => {
        const entry = {
          admit: () => {
            clearTimeout(entry.timer);
            signal?.removeEventListener('abort', leave);
            resolve();
          },
          timer: setTimeout(() => {
            drop();
            reject(this.#busy());
          }, this.maxWaitMs),
        };
        const drop = () => {
          const at = this.#waiting.indexOf(entry);
          if (at >= 0) this.#waiting.splice(at, 1);
          signal?.removeEventListener('abort', leave);
        };
        const leave = () => {
          clearTimeout(entry.timer);
          drop();
          reject(signal!.reason);
        };
        this.#waiting.push(entry);
        signal?.addEventListener('abort', leave, { once: true });
      });
    } else {
      this.#active++;
    }
    let left = false;
    return () => {
      if (left) return;
      left = true;
      // The place passes straight to the next in line: `active` counts it already.
      const next = this.#waiting.shift();
      if (next) next.admit();
      else this.#active--;
    };
  }
}
