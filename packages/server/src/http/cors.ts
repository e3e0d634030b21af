import type Koa from 'koa';

/** CORS for the configured origins only ('*' allows any); preflight answered with 204. */
export function cors(origins: readonly string[]): Koa.Middleware {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    if (!origin || (!any && !allowed.has(origin))) return next();
    ctx.set('Access-Control-Allow-Origin', any ? '*' : origin);
    if (!any) ctx.vary('Origin');
    ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate, Retry-After, Allow, RateLimit-Policy, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, X-Request-Id');
    if (ctx.method === 'OPTIONS' && ctx.get('access-control-request-method')) {
      ctx.set('Access-Control-Allow-Methods', 'GET, HEAD, POST, PUT, DELETE, OPTIONS');
      ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type, Accept');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    return next();
  };
}
