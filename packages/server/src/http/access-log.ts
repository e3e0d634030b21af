import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from '../core/logger.ts';

/** The id of the request being handled (also sent back as `X-Request-Id`). */
export function requestIdOf(ctx: Koa.Context): string {
  return (ctx.state as { requestId?: string }).requestId ?? '';
}

/**
 * An `X-Request-Id` a client or a proxy sends is kept when it is a plain token (at most 64 letters,
 * digits, `.`, `_`, `-`): it can neither forge a log line nor break a header or a URN.
 */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

function requestIdFor(ctx: Koa.Context): string {
  const given = ctx.get('x-request-id');
  return SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Gives each request an id (`X-Request-Id` on the answer, `requestId` on every line logged while it
 * is handled) and writes one line per request: method, path (never the query string, which may
 * carry anything), status and duration; headers are never logged, so neither is the Authorization
 * header. The line is at debug level, except for answers an operator must see: 503 (database
 * unavailable or busy, a statement timeout, an admission queue full) at warn with the problem code;
 * a request its client abandoned at info.
 */
export function accessLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const requestId = requestIdFor(ctx);
    (ctx.state as { requestId?: string }).requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      // Lines logged while the request is handled carry its id: the request scope, entered next
      // (http/request-scope.ts), holds it for the logger.
      await next();
    } finally {
      const fields = {
        requestId,
        method: ctx.method,
        path: ctx.path.length > 200 ? `${ctx.path.slice(0, 200)}…` : ctx.path,
        status: ctx.status,
        ms: Math.round(performance.now() - started),
      };
      const code = (ctx.body as { code?: unknown } | null)?.code;
      if ((ctx.state as { abandoned?: boolean }).abandoned) logger.info('request abandoned by its client', fields);
      else if (ctx.status === 503) logger.warn('request refused: service unavailable', { ...fields, code });
      else logger.debug('request', fields);
    }
  };
}
