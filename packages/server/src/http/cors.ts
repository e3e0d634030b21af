import koaCors from '@koa/cors';
import type Koa from 'koa';

/** Response headers a browser script may read: problem details, rate limits, replays, warnings, the request id. */
export const EXPOSED_HEADERS = [
  'WWW-Authenticate',
  'Retry-After',
  'Allow',
  'Idempotent-Replayed',
  'RateLimit-Policy',
  'RateLimit-Limit',
  'RateLimit-Remaining',
  'RateLimit-Reset',
  'Warning',
  'X-Request-Id',
];

/**
 * CORS for the configured origins only ('*': any), without credentials (a bearer token, never a
 * cookie); a request from another origin gets no CORS headers, and its browser hides the answer.
 */
export function cors(origins: readonly string[]): Koa.Middleware {
  const any = origins.includes('*');
  const allowed = new Set(origins);
  return koaCors({
    origin: (ctx) => {
      const origin = ctx.get('origin');
      if (!origin) return '';
      return any ? '*' : allowed.has(origin) ? origin : '';
    },
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    // The SDK sends an Idempotency-Key with every creating POST; a caller's X-Request-Id is kept.
    allowHeaders: ['Authorization', 'Content-Type', 'Accept', 'Idempotency-Key', 'X-Request-Id'],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    credentials: false,
    // The problem middleware, outside this one, answers every error and keeps the headers set here.
    keepHeadersOnError: false,
  });
}
