import type { Socket } from 'node:net';
import type Koa from 'koa';

/** Why the server itself ended an answer before its last byte (kept in `ctx.state.cutShort`, logged by app.ts). */
export type CutReason = 'stalled' | 'too long';

export interface ExportDeadlines {
  /** No write accepted by the client's connection for this long ends the answer, in ms; 0: never. */
  stallMs: number;
  /** The longest an answer may stream, in ms; 0: no limit. */
  maxMs: number;
}

/** Bytes the connection has taken from the server: its writes that completed (handed to the kernel). */
function acceptedBytes(socket: Socket): number {
  return (socket.bytesWritten ?? 0) - socket.writableLength;
}

/**
 * Ends a streamed answer whose client stops reading, or that streams too long, by destroying its
 * connection (and so the stream, its cursor and its place): Node never times out a response being
 * written, and back-pressure would hold them forever. Progress is what the connection accepts: while
 * nothing waits to be written, the clock does not run. Writes are at most 64 KB, so a reader slower
 * than 64 KB per `stallMs` looks stalled.
 */
export function enforceExportDeadlines(ctx: Koa.Context, deadlines: ExportDeadlines): void {
  const socket = ctx.req.socket;
  const cut = (reason: CutReason) => {
    stop();
    if (ctx.res.writableFinished || socket.destroyed) return;
    (ctx.state as { cutShort?: CutReason }).cutShort = reason;
    socket.destroy();
  };
  let accepted = acceptedBytes(socket);
  let progressAt = Date.now();
  const watch =
    deadlines.stallMs > 0
      ? setInterval(
          () => {
            const now = acceptedBytes(socket);
            if (now !== accepted || socket.writableLength === 0) {
              accepted = now;
              progressAt = Date.now();
            } else if (Date.now() - progressAt >= deadlines.stallMs) {
              cut('stalled');
            }
          },
          Math.max(20, Math.min(1000, deadlines.stallMs / 4)),
        )
      : undefined;
  const limit = deadlines.maxMs > 0 ? setTimeout(() => cut('too long'), deadlines.maxMs) : undefined;
  watch?.unref();
  limit?.unref();
  function stop() {
    clearInterval(watch);
    clearTimeout(limit);
  }
  ctx.res.once('close', stop);
}
