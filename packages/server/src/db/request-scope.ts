/**
 * Which pooled connections each request holds, so that the statements of a request whose client
 * went away can be cancelled (http/request-scope.ts). The scope travels with the async context;
 * knex's `acquireConnection`/`releaseConnection` are wrapped to record the connections acquired in
 * it. A connection whose statement was cancelled is discarded by the pool's `validate`
 * (`reusable`), so a late cancel never hits another request's statement.
 */
import { type RequestContext, requestStorage } from '../core/request-context.ts';

/** The part of a pg client used here. */
export interface PooledConnection {
  /** The PostgreSQL backend's process id (pg sets it at connect). */
  processID: number | null;
  /** pg: false from the moment a statement is sent until the server said it is done. */
  readyForQuery?: boolean;
}

export interface RequestScope extends RequestContext {
  readonly requestId: string;
  /** Aborted when the client goes away before its answer was sent. */
  readonly signal: AbortSignal;
  /** Connections held now. */
  readonly held: Set<PooledConnection>;
  /** Set once the request was handled: later statements (background work) are not tracked. */
  done: boolean;
  /** Who is asking, for fair shares (services/runtime/admission.ts): `id:<iss> <sub>` once verified, else `ip:<address>`. */
  client?: string;
}

const owners = new WeakMap<PooledConnection, RequestScope>();
/** The database (URL) each tracked connection is to: the primary's or a replica's. */
const servers = new WeakMap<PooledConnection, string>();
const cancelled = new WeakSet<PooledConnection>();

function isScope(context: RequestContext | undefined): context is RequestScope {
  return context !== undefined && 'held' in context;
}

/** Runs `work` (the handling of one request) inside a new scope. */
export function runInScope<T>(requestId: string, signal: AbortSignal, work: (scope: RequestScope) => Promise<T>): Promise<T> {
  const scope: RequestScope = { requestId, signal, held: new Set(), done: false };
  return requestStorage.run(scope, () => work(scope));
}

/** The scope of the request being handled here, if any. */
export function currentScope(): RequestScope | undefined {
  const scope = requestStorage.getStore();
  return isScope(scope) && !scope.done ? scope : undefined;
}

/** Raised instead of running a statement for a request whose client went away. */
export class RequestAbandonedError extends Error {
  readonly code = 'REQUEST_ABANDONED';
  constructor() {
    super('The client closed the request: no statement runs for it any more.');
    this.name = 'RequestAbandonedError';
  }
}

/** Throws when the current request was abandoned (checked before each statement). */
export function refuseIfAbandoned(): void {
  if (currentScope()?.signal.aborted) throw new RequestAbandonedError();
}

/** The pool's `validate`: false (destroyed) once its statement was cancelled or pg gave up waiting for it (query_timeout). */
export function reusable(connection: PooledConnection): boolean {
  return !cancelled.has(connection) && connection.readyForQuery !== false;
}

/** The two methods of knex's `Client` wrapped here (`Knex.Client` types them loosely, with `any`). */
interface KnexClient {
  acquireConnection(): Promise<PooledConnection>;
  releaseConnection(connection: PooledConnection): Promise<void>;
}

/** Records, per request scope, the connections the knex client (of the database at `server`) hands out and takes back. */
export function trackConnections(client: KnexClient, server: string): void {
  const acquire = client.acquireConnection.bind(client);
  const release = client.releaseConnection.bind(client);
  client.acquireConnection = async () => {
    const scope = currentScope();
    if (scope?.signal.aborted) throw new RequestAbandonedError();
    const connection = await acquire();
    if (scope && !scope.done) {
      scope.held.add(connection);
      owners.set(connection, scope);
      servers.set(connection, server);
    }
    return connection;
  };
  client.releaseConnection = (connection) => {
    owners.get(connection)?.held.delete(connection);
    owners.delete(connection);
    return release(connection);
  };
}

/**
 * Cancels what the scope's connections run: marks them for the pool to discard, then asks the
 * database each is to (a replica's pids mean nothing on the primary) to cancel their backends.
 * Returns how many were signalled.
 */
export async function cancelHeld(scope: RequestScope, cancel: (pids: number[], server: string) => Promise<number>): Promise<number> {
  const byServer = new Map<string, number[]>();
  for (const connection of scope.held) {
    cancelled.add(connection);
    const server = servers.get(connection);
    if (typeof connection.processID !== 'number' || server === undefined) continue;
    if (!byServer.has(server)) byServer.set(server, []);
    byServer.get(server)!.push(connection.processID);
  }
  const counts = await Promise.all([...byServer].map(([server, pids]) => cancel(pids, server)));
  return counts.reduce((sum, n) => sum + n, 0);
}
