import type Koa from 'koa';
import { AppError } from '../core/errors.ts';
import type { RateLimiter } from './limiter.ts';

export const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Reads never limited: orchestrators and load balancers poll them, and they cost nothing. */
export const UNLIMITED_READS: ReadonlySet<string> = new Set(['getHealth', 'getReady']);

/**
 * Charges one write (or one read, with a limiter of reads) to `client`; sets the RateLimit headers,
 * and throws 429 RATE_LIMITED with Retry-After when the client has none left.
 */
export async function chargeWrite(
  limiter: RateLimiter,
  ctx: Koa.Context,
  client: string,
  what: 'writes' | 'reads' = 'writes',
): Promise<void> {
  const decision = await limiter.charge(client);
  const headers: Record<string, string> = {
    'RateLimit-Policy': `${decision.limit};w=${Math.ceil(limiter.limit.windowMs / 1000)}`,
    'RateLimit-Limit': String(decision.limit),
    'RateLimit-Remaining': String(decision.remaining),
    'RateLimit-Reset': String(decision.allowed ? decision.resetSec : decision.retryAfterSec),
  };
  if (decision.allowed) {
    ctx.set(headers);
    return;
  }
  throw new AppError(
    429,
    'RATE_LIMITED',
    `Too many ${what}: at most ${decision.limit} per ${Math.ceil(limiter.limit.windowMs / 1000)} s per client. Try again in ${decision.retryAfterSec} s.`,
    { headers: { ...headers, 'Retry-After': String(decision.retryAfterSec) } },
  );
}
