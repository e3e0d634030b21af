/**
 * Admission for requests with large bodies (a batch of results, up to BODY_LIMIT bytes): at most
 * `limit` of them are read, validated and stored at once; the others wait their turn, first come
 * first served, with their bodies still unread (the socket applies back-pressure to the client).
 * On 2 cores a few in flight keep CPU and PostgreSQL busy; 32 at once only multiply the parsed
 * documents, validation errors and statement parameters alive together, and with them the heap.
 */
export class BodyGate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most requests that ever held a place at once, and how many had to wait (for tests and logs). */
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

/** Bodies declared (Content-Length) at or above this size, or sent chunked, pass through the gate. */
export const LARGE_BODY_BYTES = 64 * 1024;
