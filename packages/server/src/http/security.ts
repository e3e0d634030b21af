import type Koa from 'koa';

/**
 * Security headers on every response. Content-Security-Policy: nothing may run or be framed,
 * unless the response set its own policy (the Swagger UI page, see swagger.ts).
 */
export function securityHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.set('X-Frame-Options', 'DENY');
      if (!ctx.response.get('Content-Security-Policy')) {
        ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
      }
    }
  };
}
