import type Koa from 'koa';
import type { Logger } from '../logger.ts';

/**
 * One debug line per request: method, path (never the query string, which may carry anything),
 * status and duration. Headers are never logged, so neither is the Authorization header.
 */
export function accessLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      logger.debug('request', {
        method: ctx.method,
        path: ctx.path.length > 200 ? `${ctx.path.slice(0, 200)}…` : ctx.path,
        status: ctx.status,
        ms: Math.round(performance.now() - started),
      });
    }
  };
}
