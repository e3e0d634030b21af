import { readFileSync } from 'node:fs';
import Koa from 'koa';
import { operations, API_BASE_PATH } from '@benchmarks/sdk/contract';
import type { AppContext } from './services/app-context.ts';
import { problemMiddleware } from './http/problem.ts';
import { securityHeaders } from './http/security.ts';
import { swaggerUi } from './http/swagger.ts';
import { explorer } from './http/explorer.ts';
import { buildRouter, methodNotAllowed } from './http/router.ts';
import { createAuthenticator } from './http/auth.ts';
import { buildOpenApi } from './http/openapi.ts';
import { cors } from './http/cors.ts';
import { allHandlers } from './routes/index.ts';
import type { RequestState } from './http/handler.ts';
import { accessLog } from './http/access-log.ts';
import { logAppError } from './http/app-errors.ts';
import { requestScope } from './http/request-scope.ts';
import { publicOrigin } from './http/origin.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Builds the Koa application without listening. */
export function createApp(app: AppContext): Koa {
  // Behind a trusted proxy the client address is the one that proxy appended to X-Forwarded-For
  // (the last entry): the entries before it are whatever the client sent.
  const koa = new Koa({ proxy: app.config.trustProxy, maxIpsCount: 1 });
  const specs = new Map<string, Record<string, unknown>>();
  const spec = (ctx: Koa.Context) => {
    const origin = publicOrigin(ctx, app);
    let doc = specs.get(origin);
    if (!doc) {
      doc = buildOpenApi(operations, {
        origin,
        version: app.version,
        termsUrl: app.config.termsUrl,
        termsVersion: app.config.termsVersion,
      });
      if (specs.size < 16) specs.set(origin, doc);
    }
    return doc;
  };
  const authenticator = createAuthenticator(app.verifier, app.config.adminEntitlements);
  const router = buildRouter(operations, allHandlers(spec), {
    prefix: API_BASE_PATH,
    bodyLimitBytes: app.config.bodyLimitBytes,
    authenticator,
    rateLimiter: app.rateLimiters.writes,
    readRateLimiter: app.rateLimiters.reads,
    largeBodies: app.runtime.largeBodies,
  });

  /** Where a request reads (db/read-routing.ts): writes, and every request without replicas, from the primary. */
  const readFrom = async (ctx: Koa.Context) => {
    if (!app.reads || !SAFE_METHODS.has(ctx.method)) return app.orm;
    return app.reads.readFrom(ctx.get('authorization') ? () => authenticator.knownClient(ctx) : undefined);
  };

  // What escapes every middleware (a bug), and a streamed answer that fails after its first byte
  // (a client gone away: routine), logged as one JSON line, like everything else.
  koa.on('error', (err: Error, ctx?: Koa.Context) => logAppError(app.logger, err, ctx));
  koa.use(accessLog(app.logger, { level: app.config.accessLog ? 'info' : 'debug' }));
  // Statements of a request whose client went away are cancelled (outside the pool, which may be full).
  koa.use(requestScope(app.logger, (pids, server) => (app.reads?.replicas.controlOf(server) ?? app.control).cancel(pids)));
  koa.use(securityHeaders());
  koa.use(problemMiddleware(app.logger));
  if (app.config.corsOrigins.length) koa.use(cors(app.config.corsOrigins));
  koa.use(async (ctx, next) => {
    const state = ctx.state as RequestState;
    state.em = (await readFrom(ctx)).em.fork();
    state.services = app;
    try {
      await next();
    } finally {
      // A write (even a failed one: it may have changed something before failing) makes every
      // remembered total suspect; cleared before the answer leaves, so its client reads fresh totals.
      if (!SAFE_METHODS.has(ctx.method)) {
        app.results.totals.invalidate();
        app.compare.cache.invalidate();
        app.changes.cache.invalidate();
        // After a write of a known caller, where the primary's WAL is: its next reads wait for a replica there.
        const identity = app.reads && (await authenticator.knownClient(ctx));
        if (identity) await app.reads!.wrote(identity);
      }
    }
  });
  const terms = readFileSync(new URL('../assets/terms-of-use.md', import.meta.url), 'utf8');
  koa.use(async (ctx, next) => {
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      if (ctx.path === '/api-spec.json') {
        ctx.body = spec(ctx);
        return;
      }
      if (ctx.path === '/terms-of-use') {
        ctx.type = 'text/markdown; charset=utf-8';
        ctx.body = terms;
        return;
      }
    }
    await next();
  });
  koa.use(explorer());
  koa.use(swaggerUi(`${API_BASE_PATH}/api-spec.json`).routes());
  koa.use(router.routes());
  koa.use(methodNotAllowed(router));
  return koa;
}
