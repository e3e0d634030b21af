/**
 * Reading an export (GET /results:export) as it arrives: NDJSON parsed a line at a time, CSV passed
 * on as bytes. Memory stays constant whatever the size: one chunk and one unfinished line at most.
 * Every line of an export ends with a newline, so a body that ends without one was cut short: that
 * is an error, never a silently shorter export. Nothing is sent until the first read.
 */
import { ApiError, IncompleteResponseError } from './errors.ts';
import type { StreamedResponse } from './stream.ts';

const NEWLINE = 0x0a;

/** Starts the request. */
export type OpenExport = () => Promise<StreamedResponse>;

/** The error of an answer whose last line ends without its newline: it was cut short. */
const cutShort = (response: StreamedResponse, received: number, line: string) =>
  new IncompleteResponseError(response.request, received, `${line} ends without its newline (the answer was cut short)`, {
    requestId: response.headers['x-request-id'],
  });

/** One line's record; an ApiError when it is not JSON (the server broke its contract). */
function parseLine<T>(line: string, number: number, response: StreamedResponse): T {
  try {
    return JSON.parse(line) as T;
  } catch {
    throw new ApiError({
      status: 200,
      code: 'INVALID_RESPONSE',
      title: 'Invalid response',
      detail: `Line ${number} of the answer is not valid JSON.`,
      request: response.request,
      requestId: response.headers['x-request-id'],
    });
  }
}

/**
 * The records of an NDJSON answer, one per line, as they arrive: lines split across chunks and
 * characters split across chunks are put back together. Breaking out of the loop closes the
 * connection; so does aborting `signal`, whose reason the loop then throws.
 * @example
 * for await (const result of ndjsonRecords<Result>(() => core.stream('exportResults', { query }))) console.log(result.id);
 */
export async function* ndjsonRecords<T>(open: OpenExport, signal?: AbortSignal): AsyncGenerator<T, void, undefined> {
  const response = await open();
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  let received = 0;
  let line = 0;
  try {
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      received += chunk.value.byteLength;
      const lines = (pending + decoder.decode(chunk.value, { stream: true })).split('\n');
      pending = lines.pop()!;
      for (const text of lines) {
        line++;
        // The lines of a chunk already read stop too when the caller aborts.
        signal?.throwIfAborted();
        if (text.trim() !== '') yield parseLine<T>(text, line, response);
      }
    }
    if ((pending + decoder.decode()).trim() !== '') throw cutShort(response, received, `line ${line + 1}`);
  } finally {
    // Stops the transfer when the caller leaves early or a line failed; a no-op after the end.
    await reader.cancel().catch(() => {});
  }
}

/**
 * A byte stream of a line-oriented answer that errors with an {@link IncompleteResponseError} when
 * the body ends without a final newline. The request starts at the first read; an error answer
 * (problem+json) errors the stream with its SDK error. Cancelling the stream closes the connection, and
 * so does aborting `signal` (the stream then errors with its reason).
 * @example
 * const csv = lineStream(() => core.stream('exportResults', { query: { format: 'csv' } }));
 * await csv.pipeTo(writable);
 */
export function lineStream(open: OpenExport, signal?: AbortSignal): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let response: StreamedResponse | undefined;
  let cancelled = false;
  let received = 0;
  let last = NEWLINE;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!response) {
          response = await open();
          reader = response.body.getReader();
          if (cancelled) {
            await reader.cancel();
            return;
          }
        }
        signal?.throwIfAborted();
        const chunk = await reader!.read();
        if (chunk.done) {
          if (received > 0 && last !== NEWLINE) throw cutShort(response, received, 'the last line');
          controller.close();
          return;
        }
        if (chunk.value.byteLength > 0) last = chunk.value[chunk.value.byteLength - 1]!;
        received += chunk.value.byteLength;
        controller.enqueue(chunk.value);
      },
      async cancel(reason) {
        cancelled = true;
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}
