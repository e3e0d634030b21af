import { AsyncLocalStorage } from 'node:async_hooks';

/** What every layer may know of the request being handled. */
export interface RequestContext {
  readonly requestId: string;
}

/**
 * The one AsyncLocalStorage of the request being handled: the logger reads the request id from it,
 * and db/request-scope.ts keeps the request's database connections in it (its scope extends this).
 * One for both, because on Node 20 each AsyncLocalStorage in use costs every promise created while
 * a request is handled (two of them cost the cheapest requests about a tenth more server CPU).
 */
export const requestStorage = new AsyncLocalStorage<RequestContext>();
