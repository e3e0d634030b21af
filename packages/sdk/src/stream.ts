/**
 * Streamed answers (exports): the body handed over as it arrives, with the request's timeout
 * watching each wait for the server (never the time the caller takes with what it got), and every
 * failure turned into an SDK error. Web streams only, so that it runs in browsers as in Node.
 */
import { IncompleteResponseError, TimeoutError, type RequestInfo } from './errors.ts';
import type { FetchResponse } from './fetch.ts';
import { failureReason } from './response.ts';

/**
 * A 2xx answer whose body is still arriving: what `client.core.stream` resolves to.
 * @example
 * const { body, headers } = await client.core.stream('exportResults', { query: { format: 'csv' } });
 * console.log(headers['content-type']);
 */
export interface StreamedResponse {
  /** The body's bytes as they arrive; it errors with an SDK error when the answer breaks off. */
  body: ReadableStream<Uint8Array>;
  /** Response headers with lower-case names. */
  headers: Record<string, string>;
  /** The request answered (method and URL, no headers). */
  request: RequestInfo;
}

/**
 * A timer that aborts its signal when it runs out: armed while waiting for the server, disarmed while
 * the caller holds the data (a slow reader is not a slow server).
 * @example
 * const deadline = new Deadline(30_000);
 * deadline.arm();
 * await fetch(url, { signal: deadline.signal });
 * deadline.disarm();
 */
export class Deadline {
  readonly #controller = new AbortController();
  /** Aborted when a wait lasted `ms`. */
  readonly signal: AbortSignal = this.#controller.signal;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #expired = false;

  /** `ms`: how long one wait may last. */
  constructor(readonly ms: number) {}

  /** Whether a wait ran out (the signal was aborted by this timer). */
  get expired(): boolean {
    return this.#expired;
  }

  arm(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.#expired = true;
      this.#controller.abort(new DOMException(`No data within ${this.ms} ms`, 'TimeoutError'));
    }, this.ms);
  }

  disarm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** What a streamed body needs to know to report its failures. */
export interface BodyStreamContext {
  request: RequestInfo;
  /** Watches each read; undefined when timeouts are off. */
  deadline: Deadline | undefined;
  /** The caller's signal: when it aborts, reads fail with its reason. */
  signal: AbortSignal | undefined;
  /** Removes the token from text that could hold it. */
  redact: (text: string) => string;
  /** The request's id (the answer's `X-Request-Id`), for the errors. */
  requestId?: string | undefined;
}

/** A fetch that gives no stream: its text, read whole, as one chunk. */
function wholeText(response: FetchResponse): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      controller.enqueue(new TextEncoder().encode(await response.text()));
      controller.close();
    },
  });
}

/**
 * The body of a 2xx answer as a stream that reads from the network only when its reader asks (no
 * read-ahead beyond the transport's own buffer), with each read under the deadline. A failure
 * becomes the caller's abort reason, a {@link TimeoutError}, or an {@link IncompleteResponseError}.
 * Cancelling it closes the connection.
 * @example
 * const body = bodyStream(response, { request, deadline, signal, redact });
 */
export function bodyStream(response: FetchResponse, context: BodyStreamContext): ReadableStream<Uint8Array> {
  const { request, deadline, signal, redact, requestId } = context;
  const reader = (response.body ?? wholeText(response)).getReader();
  let received = 0;
  const failure = (error: unknown): unknown => {
    if (signal?.aborted) return signal.reason;
    if (deadline?.expired) return new TimeoutError(request, deadline.ms, { requestId });
    const { reason, leaked } = failureReason(error, redact);
    return new IncompleteResponseError(request, received, reason, { cause: leaked ? new Error(reason) : error, requestId });
  };
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        deadline?.arm();
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          controller.error(failure(error));
          return;
        } finally {
          deadline?.disarm();
        }
        if (chunk.done) {
          controller.close();
          return;
        }
        received += chunk.value.byteLength;
        controller.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    },
    { highWaterMark: 0 },
  );
}
