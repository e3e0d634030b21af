import type Koa from 'koa';
import type { Logger } from '../core/logger.ts';
import { requestIdOf } from './access-log.ts';
import type { CutReason } from './export-deadlines.ts';

/** What Node reports on a response whose client went away before its last byte. */
const CLIENT_GONE = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED']);

/** Why the answer ended early, in the words of the log line. */
const CUT_REASONS: Record<CutReason, string> = {
  stalled: 'its client accepted no data for EXPORT_STALL_TIMEOUT',
  'too long': 'it streamed for EXPORT_MAX_DURATION',
};

type ErrorState = { cutShort?: CutReason; cutLogged?: boolean };

/**
 * Koa's `error` event: what escaped every middleware, and failures of a streamed answer after its
 * first byte. A client gone away (or cut off: export-deadlines.ts) is routine, once at `info`; an
 * export that lost its connection at `warn`; anything else is a bug, at `error`.
 */
export function logAppError(logger: Logger, err: Error, ctx?: Koa.Context): void {
  const code = (err as { code?: unknown })?.code;
  const request = ctx ? { requestId: requestIdOf(ctx), method: ctx.method, path: ctx.path } : {};
  const state = (ctx?.state ?? {}) as ErrorState;
  if (typeof code === 'string' && CLIENT_GONE.has(code)) {
    if (state.cutLogged) return;
    state.cutLogged = true;
    if (state.cutShort) logger.info(`answer cut short: ${CUT_REASONS[state.cutShort]}`, { ...request, reason: state.cutShort });
    else logger.info('client went away before the end of its answer', { ...request, error: code });
    return;
  }
  if (code === 'EXPORT_INTERRUPTED') {
    logger.warn('export ended early', { ...request, error: err.message });
    return;
  }
  logger.error('unhandled error', { ...request, error: `${err?.name}: ${err?.message}` });
}
