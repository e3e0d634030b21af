import type Koa from 'koa';

/** Security headers on every response; a strict CSP for the Swagger UI page. */
export function securityHeaders(): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('X-Frame-Options', 'DENY');
    if (ctx.response.is('html')) {
      ctx.set(
        'Content-Security-Policy',
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
          "connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      );
    } else {
      ctx.set('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    }
  };
}
