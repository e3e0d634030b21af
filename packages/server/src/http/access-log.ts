import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from '../core/logger.ts';

/** The id of the request being handled (also sent back as `X-Request-Id`). */
export function requestIdOf(ctx: Koa.Context): string {
  return (ctx.state as { requestId?: string }).requestId ?? '';
}

/** A client's `X-Request-Id` is kept when a plain token: it can forge no log line, nor break a header or a URN. */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Query parameters whose values are never logged: credentials a client may misplace there, and email addresses. */
const SECRET_PARAMS = new Set([
  'access_token',
  'token',
  'id_token',
  'refresh_token',
  'code',
  'client_secret',
  'password',
  'secret',
  'api_key',
  'apikey',
  'key',
  'authorization',
  'email',
]);
/** The user directory (`/users`, `/users:search`, `:remove`, `:restore`): its selectors and terms name people. */
const USER_DIRECTORY = /\/users(?::[a-z]+)?$/;
const PAGING_PARAMS = new Set(['page', 'per_page', 'sort_by']);
/** Longest query string logged, in characters; the rest is cut (a filter list can be long). */
const MAX_QUERY = 500;
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
/** A run of 32 or more base64 or base64url characters: what opaque access tokens look like. */
const OPAQUE_RUN = /[A-Za-z0-9+/_-]{32,}/g;

/** Whether a (decoded) value holds what may be an opaque credential: a long run with letters and digits, ids aside. */
function mayHoldCredential(value: string): boolean {
  for (const [run] of value.replace(UUIDS, ' ').matchAll(OPAQUE_RUN)) {
    if (/\d/.test(run) && /[A-Za-z]/.test(run)) return true;
  }
  return false;
}

/**
 * The query string as logged, as sent (percent-encoded), so that an operator can tell which list was
 * slow or refused. `[redacted]` stands for the value of a credential-like parameter or `email`, of a
 * value holding a long opaque run (a token a client misplaced), and on the user directory for every
 * value but paging and sort; the logger scrubs the rest as any text (core/logger.ts).
 */
export function loggedQuery(path: string, querystring: string): string | undefined {
  if (!querystring) return undefined;
  const directory = USER_DIRECTORY.test(path);
  const pairs = querystring.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = formDecode(eq < 0 ? pair : pair.slice(0, eq))
      .replace(/\[\]$/, '')
      .toLowerCase();
    const value = eq < 0 ? '' : formDecode(pair.slice(eq + 1));
    const hidden =
      SECRET_PARAMS.has(name) || (directory && !PAGING_PARAMS.has(name)) || mayHoldCredential(name) || mayHoldCredential(value);
    if (!hidden) return pair;
    return eq < 0 ? '[redacted]' : `${pair.slice(0, eq)}=[redacted]`;
  });
  const query = pairs.join('&');
  return query.length > MAX_QUERY ? `${query.slice(0, MAX_QUERY)}…` : query;
}

/** application/x-www-form-urlencoded decoding (`+` is a space); a malformed escape is kept as sent. */
function formDecode(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** Liveness and readiness probes: polled every few seconds by orchestrators and load balancers. */
const PROBE = /\/(health|ready)$/;

export interface AccessLogOptions {
  /** The level of the line of each request: `info` with ACCESS_LOG (the service's default), else `debug`. */
  level?: 'info' | 'debug';
}

/**
 * Gives each request an id (`X-Request-Id`, and `requestId` on its log lines) and logs one line per
 * request (no headers, so no Authorization) at `level`, except: successful probes at debug (an
 * orchestrator's every few seconds would drown the requests), 503s at warn with the problem code
 * (an operator must see them), a request its client abandoned at info.
 */
export function accessLog(logger: Logger, { level = 'debug' }: AccessLogOptions = {}): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    const given = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(given) ? given : randomUUID();
    (ctx.state as { requestId?: string }).requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      // The request scope, entered next (http/request-scope.ts), holds the id for the logger.
      await next();
    } finally {
      const fields = {
        requestId,
        method: ctx.method,
        path: ctx.path.length > 200 ? `${ctx.path.slice(0, 200)}…` : ctx.path,
        query: loggedQuery(ctx.path, ctx.querystring),
        status: ctx.status,
        ms: Math.round(performance.now() - started),
      };
      const code = (ctx.body as { code?: unknown } | null)?.code;
      if ((ctx.state as { abandoned?: boolean }).abandoned) logger.info('request abandoned by its client', fields);
      else if (ctx.status === 503) logger.warn('request refused: service unavailable', { ...fields, code });
      else if (ctx.status < 400 && PROBE.test(ctx.path)) logger.debug('request', fields);
      else logger[level]('request', fields);
    }
  };
}
