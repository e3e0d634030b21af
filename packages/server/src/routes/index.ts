import type Koa from 'koa';
import type { Handler } from '../http/handler.ts';
import { userHandlers } from './users.ts';
import { systemHandlers } from './system.ts';
import { benchmarkHandlers } from './benchmarks.ts';
import { siteHandlers } from './sites.ts';
import { flavorHandlers } from './flavors.ts';
import { tagHandlers } from './tags.ts';
import { adminHandlers } from './admin.ts';

/** Every operation's handler, keyed by operationId. The router refuses to start if one is missing. */
export function allHandlers(spec: (ctx: Koa.Context) => Record<string, unknown>): Record<string, Handler<never>> {
  return {
    ...systemHandlers(spec),
    ...userHandlers,
    // catalogue handlers
    ...benchmarkHandlers,
    ...siteHandlers,
    ...flavorHandlers,
    ...tagHandlers,
    ...adminHandlers,
    // results handlers
    ...resultHandlers,
    ...claimHandlers,
  } as unknown as Record<string, Handler<never>>;
}

// results handlers (imports are hoisted)
import { resultHandlers } from './results.ts';
import { claimHandlers } from './claims.ts';
