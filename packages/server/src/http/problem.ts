import type Koa from 'koa';
import { AppError, titleOf } from '../core/errors.ts';
import { mapDatabaseError } from '../db/errors.ts';
import type { Logger } from '../core/logger.ts';
import { requestIdOf } from './access-log.ts';

/**
 * The members every problem body starts with (RFC 9457). Types are URNs, stable, documented in
 * docs/errors.md; `instance` names the request's id, so that a user can quote it and an operator find its lines.
 */
export function problemBody(status: number, code: string, detail: string, requestId: string) {
  const type = `urn:benchmarks:problem:${code.toLowerCase().replace(/_/g, '-')}`;
  return { type, title: titleOf(status), status, detail, code, ...(requestId ? { instance: `urn:benchmarks:request:${requestId}` } : {}) };
}

/** Renders every error as application/problem+json; hides the message of every 5xx. */
export function problemMiddleware(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError(404, 'ROUTE_NOT_FOUND', `No route ${ctx.method} ${ctx.path}.`);
      }
    } catch (err) {
      const problem = toAppError(err);
      if (problem.status >= 500 && problem.code === 'INTERNAL_ERROR') {
        logger.error('request failed', { method: ctx.method, path: ctx.path, error: describe(err) });
      }
      ctx.status = problem.status;
      for (const [name, value] of Object.entries(problem.headers)) {
        try {
          ctx.set(name, value);
        } catch {
          // a value Node refuses in a header (it would have been a bug above): the body still says it all
        }
      }
      ctx.type = 'application/problem+json';
      ctx.body = {
        ...problemBody(problem.status, problem.code, problem.detail, requestIdOf(ctx)),
        ...(problem.errors ? { errors: problem.errors } : {}),
        ...problem.extensions,
      };
    }
  };
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}\n${err.stack ?? ''}` : String(err);
}

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // An AppError raised inside the ORM (db/unstorable.ts) arrives as MikroORM's DriverException,
  // which copies its members.
  const copied = err as Partial<AppError> | null;
  if (
    copied &&
    typeof copied === 'object' &&
    typeof copied.status === 'number' &&
    copied.status >= 400 &&
    copied.status < 500 &&
    typeof copied.code === 'string' &&
    /^[A-Z][A-Z_]+$/.test(copied.code) &&
    typeof copied.detail === 'string'
  ) {
    return new AppError(copied.status, copied.code, copied.detail, {
      errors: copied.errors,
      headers: copied.headers,
      extensions: copied.extensions,
    });
  }
  const db = mapDatabaseError(err);
  if (db) return db;
  const e = err as { status?: number; statusCode?: number; type?: string; expose?: boolean; message?: string };
  const status = e?.status ?? e?.statusCode;
  // Errors raised by koa-body / raw-body / koa itself carry an HTTP status.
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413 || e.type === 'entity.too.large') {
      return new AppError(413, 'BODY_TOO_LARGE', 'The request body is larger than the server accepts.');
    }
    if (status === 400 && /json/i.test(e.message ?? '')) {
      return new AppError(400, 'MALFORMED_JSON', 'The request body is not valid JSON.');
    }
    if (status === 415) return new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json.');
    return new AppError(status, 'BAD_REQUEST', e.expose && e.message ? e.message : titleOf(status));
  }
  return new AppError(500, 'INTERNAL_ERROR', 'The server failed to handle the request. It has been logged.');
}
