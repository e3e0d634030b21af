import { AppError } from '../../core/errors.ts';
import { currentScope } from '../../db/request-scope.ts';

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

/** Why a request got no place: the line was at its cap, or it waited as long as it may. */
export type Refusal = 'full' | 'waited';

/** What a {@link TimedPlaces} did since it was made (read by the tests; a request counts once). */
export interface PlaceCounts {
  /** Requests that got a place, at once or after waiting. */
  admitted: number;
  /** Requests that had to wait for one. */
  waited: number;
  /** Waiting requests whose client went away: they left the line at once. */
  abandoned: number;
  /** Requests refused after waiting `maxWaitMs` (or at once when none may wait). */
  timedOut: number;
  /** Requests refused at once because `maxWaiting` others were waiting. */
  full: number;
}

/**
 * At most `limit` holders at once. The others wait in line, first come, first served, each for at
 * most `maxWaitMs` (0: none waits) and at most `maxWaiting` at once; past either, `refuse` says how
 * to fail. A waiter whose `signal` aborts (its client went away) leaves the line at once.
 */
export class TimedPlaces {
  #active = 0;
  /** In arrival order (a Set keeps insertion order, and leaving it is O(1)). */
  readonly #line = new Set<{ admit(): void }>();
  readonly counts: PlaceCounts = { admitted: 0, waited: 0, abandoned: 0, timedOut: 0, full: 0 };

  constructor(
    readonly limit: number,
    readonly maxWaiting: number,
    readonly maxWaitMs: number,
    private readonly refuse: (why: Refusal) => Error,
  ) {}

  /** Requests holding a place and requests waiting for one. */
  get load(): { active: number; waiting: number } {
    return { active: this.#active, waiting: this.#line.size };
  }

  /** Takes a place, waiting for one if need be; the returned function gives it back, once. */
  async enter(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) throw signal.reason;
    if (this.#active < this.limit) this.#active++;
    else await this.#wait(signal);
    this.counts.admitted++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      // The place passes straight to the next in line: `active` counts it already.
      const next = this.#line.values().next().value;
      if (next) next.admit();
      else this.#active--;
    };
  }

  #wait(signal: AbortSignal | undefined): Promise<void> {
    if (this.maxWaitMs <= 0) {
      this.counts.timedOut++;
      return Promise.reject(this.refuse('waited'));
    }
    if (this.#line.size >= this.maxWaiting) {
      this.counts.full++;
      return Promise.reject(this.refuse('full'));
    }
    this.counts.waited++;
    return new Promise<void>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        this.#line.delete(waiter);
        signal?.removeEventListener('abort', leave);
      };
      const waiter = {
        admit: () => {
          settle();
          resolve();
        },
      };
      const timer = setTimeout(() => {
        settle();
        this.counts.timedOut++;
        reject(this.refuse('waited'));
      }, this.maxWaitMs);
      const leave = () => {
        settle();
        this.counts.abandoned++;
        reject(signal!.reason);
      };
      this.#line.add(waiter);
      signal?.addEventListener('abort', leave, { once: true });
    });
  }
}

/**
 * Most expensive lists that may wait for a place in one process: a cap for memory's sake only (a
 * waiting request holds its socket, its context and parsed query: about 30 KB, so 30 MB at the
 * cap), far above any line the wait lets form at the speeds measured (docs/performance.md,
 * "Admission of expensive lists"). The wait, not this cap, is what refuses requests under load.
 */
export const EXPENSIVE_LIST_MAX_WAITING = 1000;

/**
 * Admission of expensive result lists (search terms, JSON filters, sorts no index serves) and of
 * comparisons: at most `limit` run at once in this process; the others wait their turn (first come,
 * first served) for at most `maxWaitMs`, and only a request still waiting then is refused with 503
 * EXPENSIVE_LIST_BUSY and Retry-After. A waiting request whose client goes away leaves the line at
 * once. Cheap lists never pass through it, so they keep answering while expensive ones wait.
 */
export class ExpensiveListAdmission {
  readonly #places: TimedPlaces;

  constructor(
    readonly limit: number,
    readonly maxWaitMs: number,
    readonly maxWaiting = EXPENSIVE_LIST_MAX_WAITING,
  ) {
    const retryAfter = String(Math.min(60, Math.max(1, Math.ceil(maxWaitMs / 1000))));
    this.#places = new TimedPlaces(limit, maxWaiting, maxWaitMs, (why) => {
      const wait =
        why === 'full'
          ? `${maxWaiting} are already waiting for one of ${limit} places`
          : `none of ${limit} places came free within ${maxWaitMs / 1000} s`;
      return new AppError(
        503,
        'EXPENSIVE_LIST_BUSY',
        `Too many searches, JSON filters, JSON sorts or comparisons at once: ${wait}. ` +
          'Try again shortly, or narrow the request (benchmark_id, dates) and sort by execution_datetime.',
        { headers: { 'Retry-After': retryAfter } },
      );
    });
  }

  get load(): { active: number; waiting: number } {
    return this.#places.load;
  }

  get counts(): PlaceCounts {
    return this.#places.counts;
  }

  /** Runs `work` once it has a place; a request whose client goes away (db/request-scope.ts aborts its signal) leaves the line. */
  async run<T>(work: () => Promise<T>, signal = currentScope()?.signal): Promise<T> {
    const leave = await this.#places.enter(signal);
    try {
      return await work();
    } finally {
      leave();
    }
  }
}

/**
 * Admission of exports: at most `limit` stream at once in this process. One more waits for a place,
 * at most `maxWaitMs` (10 s) and with at most `maxWaiting` others (small exports end in
 * milliseconds); past either it is refused with 503 EXPORT_BUSY and Retry-After. A place is held
 * until the export's stream ends or its client goes away (the returned function gives it back).
 */
export class ExportAdmission {
  readonly #places: TimedPlaces;

  constructor(
    readonly limit: number,
    readonly maxWaiting = 4 * limit,
    readonly maxWaitMs = 10_000,
  ) {
    this.#places = new TimedPlaces(
      limit,
      maxWaiting,
      maxWaitMs,
      () =>
        new AppError(
          503,
          'EXPORT_BUSY',
          `Too many exports are streaming (${limit} at once, ${maxWaiting} waiting up to ${maxWaitMs / 1000} s). ` +
            'Try again shortly, or narrow the export (benchmark_id, dates, filters).',
          { headers: { 'Retry-After': '5' } },
        ),
    );
  }

  get active(): number {
    return this.#places.load.active;
  }

  /** Exports waiting for a place now. */
  get waiting(): number {
    return this.#places.load.waiting;
  }

  /** Takes a place, waiting for one if need be (503 EXPORT_BUSY); the returned function gives it back, once. */
  enter(signal?: AbortSignal): Promise<() => void> {
    return this.#places.enter(signal);
  }
}
