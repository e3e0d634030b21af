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

  /** Runs `work` when a place is free; the place is released however `work` ends. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) {
      this.waited++;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
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
