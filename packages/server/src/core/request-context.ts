import { AsyncLocalStorage } from 'node:async_hooks';

/** What every layer may know of the request being handled. */
export interface RequestContext {
  readonly requestId: string;
}

/**
 * The one AsyncLocalStorage of the request being handled, for the logger's request id and
 * db/request-scope.ts's connections: each one in use costs every promise made meanwhile (a second
 * would cost the cheapest requests a tenth more CPU).
 */
export const requestStorage = new AsyncLocalStorage<RequestContext>();
