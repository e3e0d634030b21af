import { AppError } from '../../core/errors.ts';
import { currentScope } from '../../db/request-scope.ts';
import type { ServerConfig } from '../../config.ts';

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

/** Who a place is for, when the caller does not say (every such request is one client). */
const ANYONE = '';

interface Waiter {
  readonly client: string;
  /** Gives it the place that is being released (`active` counts it already). */
  admit(): void;
  /** Refuses it at once: the line was full and a client with fewer requests in it came. */
  refuse(why: Refusal): void;
}

/**
 * At most `limit` holders at once, shared fairly between clients (a caller's identity, or its
 * address: `client`). The others wait, each for at most `maxWaitMs` (0: none waits) and at most
 * `maxWaiting` at once; past either, `refuse` says how to fail. A waiter whose `signal` aborts (its
 * client went away) leaves the line at once.
 *
 * - **A freed place goes to the waiting client that holds the fewest places**, and among those to
 *   the next in turn (clients take turns: one given a place goes behind the others waiting); each
 *   client's own requests keep their order. So a client looping over expensive requests, or sending
 *   many at once, holds no more places than any other while others wait (with two places and two
 *   clients, one each), and another client's request waits for about one of the flooding client's,
 *   not for all of them. With no one else waiting, any client may take every place: none is kept
 *   idle. One client alone is served first come, first served.
 * - **The line is shared the same way**: when `maxWaiting` are waiting, a request from a client
 *   with fewer waiting than the client with the most takes the place in line of that client's
 *   latest (refused as `full`); otherwise it is refused itself.
 */
export class TimedPlaces {
  #active = 0;
  /** Places held, by client (absent: none). */
  readonly #held = new Map<string, number>();
  /**
   * Each waiting client's line, in arrival order; the clients in turn order: the order they began to
   * wait or were last given a place (Maps keep insertion order).
   */
  readonly #lines = new Map<string, Set<Waiter>>();
  #waiting = 0;
  readonly counts: PlaceCounts = { admitted: 0, waited: 0, abandoned: 0, timedOut: 0, full: 0 };

  constructor(
    readonly limit: number,
    readonly maxWaiting: number,
    readonly maxWaitMs: number,
    private readonly refuse: (why: Refusal) => Error,
  ) {}

  /** Requests holding a place and requests waiting for one. */
  get load(): { active: number; waiting: number } {
    return { active: this.#active, waiting: this.#waiting };
  }

  /** Places held by `client` now. */
  heldBy(client: string): number {
    return this.#held.get(client) ?? 0;
  }

  /** Takes a place for `client`, waiting for one if need be; the returned function gives it back, once. */
  async enter(signal?: AbortSignal, client: string = ANYONE): Promise<() => void> {
    if (signal?.aborted) throw signal.reason;
    if (this.#active < this.limit) {
      this.#active++;
      this.#hold(client, 1);
    } else await this.#wait(signal, client);
    this.counts.admitted++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.#hold(client, -1);
      // The place passes straight to the next: `active` counts it already.
      const next = this.#next();
      if (next) next.admit();
      else this.#active--;
    };
  }

  #hold(client: string, by: number): void {
    const held = (this.#held.get(client) ?? 0) + by;
    if (held > 0) this.#held.set(client, held);
    else this.#held.delete(client);
  }

  /** The first waiter of the waiting client holding the fewest places (the first in turn among them). */
  #next(): Waiter | undefined {
    let best: Set<Waiter> | undefined;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [client, line] of this.#lines) {
      const held = this.#held.get(client) ?? 0;
      if (held < fewest) {
        fewest = held;
        best = line;
      }
    }
    return best?.values().next().value;
  }

  /** The latest waiter of the client with the most waiting, when it has more than `client` would. */
  #crowding(client: string): Waiter | undefined {
    let most: Set<Waiter> | undefined;
    for (const line of this.#lines.values()) if (!most || line.size > most.size) most = line;
    const own = this.#lines.get(client)?.size ?? 0;
    if (!most || most.size <= own + 1) return undefined;
    let latest: Waiter | undefined;
    for (const waiter of most) latest = waiter;
    return latest;
  }

  #wait(signal: AbortSignal | undefined, client: string): Promise<void> {
    if (this.maxWaitMs <= 0) {
      this.counts.timedOut++;
      return Promise.reject(this.refuse('waited'));
    }
    if (this.#waiting >= this.maxWaiting) {
      const pushedOut = this.#crowding(client);
      if (!pushedOut) {
        this.counts.full++;
        return Promise.reject(this.refuse('full'));
      }
      pushedOut.refuse('full');
    }
    this.counts.waited++;
    return new Promise<void>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        const line = this.#lines.get(client)!;
        line.delete(waiter);
        if (line.size === 0) this.#lines.delete(client);
        this.#waiting--;
        signal?.removeEventListener('abort', leave);
      };
      const waiter: Waiter = {
        client,
        admit: () => {
          settle();
          this.#hold(client, 1);
          // Its other requests wait behind those of the clients that were waiting already: turns.
          const rest = this.#lines.get(client);
          if (rest) {
            this.#lines.delete(client);
            this.#lines.set(client, rest);
          }
          resolve();
        },
        refuse: (why) => {
          settle();
          this.counts.full++;
          reject(this.refuse(why));
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
      let line = this.#lines.get(client);
      if (!line) {
        line = new Set();
        this.#lines.set(client, line);
      }
      line.add(waiter);
      this.#waiting++;
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
 * comparisons: at most `limit` run at once in this process; the others wait their turn for at most
 * `maxWaitMs`, and only a request still waiting then is refused with 503 EXPENSIVE_LIST_BUSY and
 * Retry-After. The places are shared fairly between clients (`TimedPlaces`): a client is the
 * caller's identity when its token is known, else its address (the request's scope says which,
 * http/request-scope.ts), so one client's loops cannot take every place while others wait. A
 * waiting request whose client goes away leaves the line at once. Cheap lists never pass through
 * it, so they keep answering while expensive ones wait.
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

  /** Places held by `client` now (read by the tests). */
  heldBy(client: string): number {
    return this.#places.heldBy(client);
  }

  /**
   * Runs `work` once it has a place for `client` (the current request's, db/request-scope.ts); a
   * request whose client goes away (its scope aborts its signal) leaves the line.
   */
  async run<T>(work: () => Promise<T>, signal = currentScope()?.signal, client = currentScope()?.client): Promise<T> {
    const leave = await this.#places.enter(signal, client);
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

  /** Takes a place for `client`, waiting for one if need be (503 EXPORT_BUSY); the returned function gives it back, once. */
  enter(signal?: AbortSignal, client?: string): Promise<() => void> {
    return this.#places.enter(signal, client);
  }
}

/** The admission of a process: large bodies, expensive lists and exports, each a few at a time. */
export function startRuntime(config: ServerConfig) {
  return {
    largeBodies: new LargeBodyAdmission(config.largeBodyConcurrency),
    expensiveLists: new ExpensiveListAdmission(config.expensiveListConcurrency, config.expensiveListWaitMs),
    exports: new ExportAdmission(config.exportConcurrency),
  };
}
