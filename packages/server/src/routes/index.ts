import type Koa from 'koa';
import type { operations } from '@benchmarks/sdk/contract';
import type { Handler, Handlers } from '../http/handler.ts';
import { userHandlers } from './users.ts';
import { systemHandlers } from './system.ts';
import { benchmarkHandlers } from './benchmarks.ts';
import { siteHandlers } from './sites.ts';
import { flavorHandlers } from './flavors.ts';
import { tagHandlers } from './tags.ts';
import { adminHandlers } from './admin.ts';
import { resultHandlers } from './results.ts';
import { claimHandlers } from './claims.ts';
import { compareHandlers } from './compare.ts';
import { changesHandlers } from './changes.ts';
import { exportHandlers } from './export.ts';
import { alertHandlers } from './alerts.ts';
import { webhookHandlers } from './webhooks.ts';

/**
 * Every operation's handler, keyed by operationId, checked against the contract when compiled: a
 * missing handler, or one of another operation's shape, does not compile (and the router refuses to
 * start without one).
 */
export function allHandlers(spec: (ctx: Koa.Context) => Record<string, unknown>): Record<string, Handler<never>> {
  const handlers: Handlers<typeof operations> = {
    ...systemHandlers(spec),
    ...userHandlers,
    ...benchmarkHandlers,
    ...siteHandlers,
    ...flavorHandlers,
    ...tagHandlers,
    ...adminHandlers,
    ...resultHandlers,
    ...claimHandlers,
    ...compareHandlers,
    ...changesHandlers,
    ...exportHandlers,
    ...alertHandlers,
    ...webhookHandlers,
  };
  return handlers;
}
