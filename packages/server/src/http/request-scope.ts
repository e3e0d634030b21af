import type Koa from 'koa';
import type { Logger } from '../core/logger.ts';
import { cancelHeld, RequestAbandonedError, runInScope } from '../db/request-scope.ts';
import { requestIdOf } from './access-log.ts';

/**
 * Handles each request in a scope that knows its database connections (db/request-scope.ts). When
 * the client goes away before its answer (Node reports it as the socket closes), the request is
 * abandoned: its running statements are cancelled at once, it starts no new one, and it leaves any
 * admission queue.
 */
export function requestScope(logger: Logger, cancel: (pids: number[], server: string) => Promise<number>): Koa.Middleware {
  return async (ctx, next) => {
    const controller = new AbortController();
    const requestId = requestIdOf(ctx);
    await runInScope(requestId, controller.signal, async (scope) => {
      // The router names the caller instead once its token is verified.
      scope.client = `ip:${ctx.ip}`;
      const onClose = () => {
        if (ctx.res.writableFinished || scope.done) return;
        (ctx.state as { abandoned?: boolean }).abandoned = true;
        controller.abort(new RequestAbandonedError());
        const held = scope.held.size;
        cancelHeld(scope, cancel).then(
          (cancelled) => {
            if (held)
              logger.info('client went away: statements of its request cancelled', {
                requestId,
                method: ctx.method,
                path: ctx.path,
                cancelled,
              });
          },
          (err) =>
            logger.warn('client went away: statements of its request could not be cancelled', { requestId, error: (err as Error).message }),
        );
      };
      ctx.res.once('close', onClose);
      try {
        await next();
      } finally {
        scope.done = true;
      }
    });
  };
}
