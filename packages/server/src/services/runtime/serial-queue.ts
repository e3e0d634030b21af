/**
 * Background upkeep run one at a time (the metric values, services/metrics/metric-values.ts): `request(work)` runs `work` after the
 * run in flight, and the requests made while one waits share it (and the `work` of the first).
 * A run that could not finish (another process held a lock, a writer was still running, an
 * error) asks for another one later with `retryLater()`, which runs the latest work again.
 *
 * `idle()` resolves once nothing is queued, running or waiting to be retried (or the queue is
 * closed): what was asked for is done, as far as this process can tell. `work` handles its own
 * errors; one it lets through goes to `onError`, and the queue goes on.
 */
export class SerialQueue {
  #tail: Promise<void> = Promise.resolve();
  #waiting = false;
  /** Runs queued or in flight. */
  #queued = 0;
  #closed = false;
  #last: (() => Promise<void>) | undefined;
  #retry: { timer: NodeJS.Timeout; fired: Promise<void>; fire: () => void } | undefined;

  constructor(
    private readonly options: {
      /** How long `retryLater()` waits. */
      retryMs: number;
      onError: (err: unknown) => void;
    },
  ) {}

  get closed(): boolean {
    return this.#closed;
  }

  /** Something queued, running or waiting to be retried. */
  get busy(): boolean {
    return this.#queued > 0 || this.#retry !== undefined;
  }

  /** Runs `work` after the run in flight; resolves when that run is done. Never rejects. */
  request(work: () => Promise<void>): Promise<void> {
    this.#last = work;
    if (this.#waiting) return this.#tail;
    this.#waiting = true;
    this.#queued++;
    this.#tail = this.#tail.then(async () => {
      this.#waiting = false;
      try {
        if (!this.#closed) await work();
      } catch (err) {
        if (!this.#closed) this.options.onError(err);
      } finally {
        this.#queued--;
      }
    });
    return this.#tail;
  }

  /** The latest work again in `retryMs` (once, however often asked meanwhile); nothing once closed. */
  retryLater(): void {
    const work = this.#last;
    if (this.#closed || this.#retry || !work) return;
    let fire!: () => void;
    const fired = new Promise<void>((resolve) => {
      fire = resolve;
    });
    const timer = setTimeout(() => {
      this.#retry = undefined;
      void this.request(work);
      fire();
    }, this.options.retryMs);
    // A retry keeps no process alive by itself; one that `idle()` awaits does.
    timer.unref();
    this.#retry = { timer, fired, fire };
  }

  /** Resolves once nothing is queued, running or waiting to be retried, or the queue is closed. */
  async idle(): Promise<void> {
    for (;;) {
      const tail = this.#tail;
      await tail;
      if (this.#closed) return;
      const retry = this.#retry;
      if (retry) {
        retry.timer.ref();
        await retry.fired;
      } else if (this.#tail === tail) return;
    }
  }

  /** Runs nothing more; resolves when the run in flight is done. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) {
      clearTimeout(this.#retry.timer);
      this.#retry.fire();
      this.#retry = undefined;
    }
    await this.#tail;
  }
}
