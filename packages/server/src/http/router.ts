import Router, { type RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import type { OperationDef } from '@benchmarks/sdk/contract';
import { AppError, errors, type ErrorDetail } from '../core/errors.ts';
import { compileValidator, type CompiledValidator, type Where } from './validation.ts';
import { JsonText, Reply } from '../core/reply.ts';
import type { Authenticator } from './auth.ts';
import type { Caller } from '../core/caller.ts';
import type { Handler, RequestState } from './handler.ts';
import { chargeWrite, UNLIMITED_READS, WRITE_METHODS } from '../rate-limit/middleware.ts';
import type { RateLimiter } from '../rate-limit/limiter.ts';
import { MAX_JSON_DEPTH, jsonDepthExceeds } from './limits.ts';
import type { LargeBodyAdmission } from '../services/runtime/admission.ts';
import { checkBodyHeaders, parseJsonText, readBodyText } from './body.ts';
import { declaredHeaders, idempotency } from './idempotency.ts';
import { currentScope } from '../db/request-scope.ts';

/** `/benchmarks/{id}:approve` → `/benchmarks/:id\:approve` for @koa/router (path-to-regexp 8). */
export function toRouterPath(path: string): string {
  return path.replace(/:/g, '\\:').replace(/\{(\w+)\}/g, ':$1');
}

/** Query keys written `name[]=` (PHP/axios style) read as `name=`; `__proto__` stays a key (refused as unknown). */
export function normalizeQuery(query: Record<string, string | string[] | undefined>): Record<string, string | string[]> {
  const out = new Map<string, string | string[]>();
  for (const [rawKey, value] of Object.entries(query)) {
    if (value === undefined) continue;
    const key = rawKey.endsWith('[]') ? rawKey.slice(0, -2) : rawKey;
    const prev = out.get(key);
    out.set(key, prev === undefined ? value : ([] as string[]).concat(prev, value));
  }
  return Object.fromEntries(out);
}

/** Problems of parameters in one sentence: each message after the parameter's name, unless it names it already. */
function sayProblems(problems: ErrorDetail[]): string {
  return problems.map((p) => (p.message.includes(`'${p.path}'`) ? p.message : `${p.path} ${p.message}`)).join('; ');
}

interface CompiledOperation {
  def: OperationDef;
  params?: CompiledValidator;
  query?: CompiledValidator;
  headers?: CompiledValidator;
  body?: CompiledValidator;
}

/** An operation without query parameters refuses every one (422 naming it). */
const NO_QUERY = { type: 'object', properties: {}, additionalProperties: false };

/**
 * Validators by schema and place, compiled when first used and kept for the process (the contract's
 * schemas are the same objects for every app it builds): compiling all 122 would cost every start 0.35 s.
 */
const validators = new WeakMap<object, Partial<Record<Where, CompiledValidator>>>();

function validatorOf(schema: object, where: Where): CompiledValidator {
  const byPlace = validators.get(schema) ?? {};
  validators.set(schema, byPlace);
  byPlace[where] ??= compileValidator(schema, where);
  return byPlace[where];
}

/** The validator of `schema` at `where`, compiled on its first call. */
function lazyValidator(schema: object, where: Where): CompiledValidator {
  let validate: CompiledValidator | undefined;
  return (data) => {
    validate ??= validatorOf(schema, where);
    return validate(data);
  };
}

/** Where an operation's schemas apply, by the field of CompiledOperation that validates there. */
const PLACES = { params: 'path', query: 'query', headers: 'header', body: 'body' } as const satisfies Record<string, Where>;
type Place = keyof typeof PLACES;

/** An operation's schema for each place it has one (every operation has a query: NO_QUERY at least). */
function schemasOf(def: OperationDef): [Place, object][] {
  const schemas: Record<Place, object | undefined> = {
    params: def.params,
    query: def.query ?? NO_QUERY,
    headers: def.headers,
    body: def.body,
  };
  return Object.entries(schemas).filter((e): e is [Place, object] => e[1] !== undefined);
}

/** Every validator of `operations`, compiled now (a test's check that the contract's schemas compile). */
export function compileAll(operations: Record<string, OperationDef>): number {
  let count = 0;
  for (const def of Object.values(operations))
    for (const [place, schema] of schemasOf(def)) {
      validatorOf(schema, PLACES[place]);
      count++;
    }
  return count;
}

function compile(def: OperationDef): CompiledOperation {
  const op: CompiledOperation = { def };
  for (const [place, schema] of schemasOf(def)) op[place] = lazyValidator(schema, PLACES[place]);
  return op;
}

export interface RouterOptions {
  prefix: string;
  bodyLimitBytes: number;
  authenticator: Authenticator;
  /** Writes per client; null: unlimited. */
  rateLimiter?: RateLimiter | null;
  /** Reads per client; null: unlimited. */
  readRateLimiter?: RateLimiter | null;
  /** Admission of requests with large bodies (services/runtime/admission.ts); absent: no limit. */
  largeBodies?: LargeBodyAdmission;
}

/**
 * Charges a write to its client. Without a token verified recently it is charged to the address
 * first, so that a flood of new or bad tokens is refused (429) before any identity provider is
 * asked; once the token is verified the address is refunded and the identity charged. A refused
 * write (401, 403) stays charged to the address.
 */
async function authenticateAndLimit(ctx: Koa.Context, def: OperationDef, options: RouterOptions) {
  const limiter = options.rateLimiter;
  if (!limiter || !WRITE_METHODS.has(def.method)) return options.authenticator.authenticate(ctx, def.auth);
  const address = `ip:${ctx.ip}`;
  const addressCharged = def.auth === 'none' || !options.authenticator.recognizes(ctx);
  if (addressCharged) await chargeWrite(limiter, ctx, address);
  let caller: Caller | null;
  try {
    caller = await options.authenticator.authenticate(ctx, def.auth);
  } catch (err) {
    const refused = err instanceof AppError && (err.status === 401 || err.status === 403);
    if (refused && !addressCharged) await chargeWrite(limiter, ctx, address);
    if (!refused && addressCharged) limiter.refund(address);
    throw err;
  }
  if (!caller) return caller; // no authentication: the address pays
  if (addressCharged) limiter.refund(address);
  await chargeWrite(limiter, ctx, `id:${caller.identity.iss} ${caller.identity.sub}`);
  return caller;
}

/** Charges a read before anything else: to a recently verified token's identity, else to the address (unknown tokens too). */
async function limitRead(ctx: Koa.Context, operationId: string, def: OperationDef, options: RouterOptions): Promise<void> {
  const limiter = options.readRateLimiter;
  if (!limiter || WRITE_METHODS.has(def.method) || UNLIMITED_READS.has(operationId)) return;
  const identity = await options.authenticator.knownClient(ctx);
  await chargeWrite(limiter, ctx, identity ? `id:${identity}` : `ip:${ctx.ip}`, 'reads');
}

/**
 * Names the request's client in its scope, for fair shares (services/runtime/admission.ts): the
 * caller's identity once its token is verified (here, or recently), else its address. An unverified
 * token names no one: no client claims another's share, nor one per made-up token.
 */
async function nameClient(ctx: Koa.Context, caller: Caller | null, authenticator: Authenticator): Promise<void> {
  const scope = currentScope();
  if (!scope) return;
  if (caller) {
    scope.client = `id:${caller.identity.iss} ${caller.identity.sub}`;
    return;
  }
  if (!ctx.get('authorization')) return;
  const identity = await authenticator.knownClient(ctx);
  if (identity) scope.client = `id:${identity}`;
}

/** What a handler gets besides its body: checked parameters, the caller, the request's state. */
type RequestInput = Pick<RequestState, 'em' | 'services'> & {
  params: Record<string, string>;
  query: Record<string, string | string[]>;
  caller: Caller | null;
};

/** Validates the body (when the operation takes one; `parse` gives it), then runs the handler. */
async function validateAndHandle(
  ctx: Koa.Context,
  def: OperationDef,
  op: CompiledOperation,
  handler: Handler<never>,
  parse: (() => unknown) | undefined,
  input: RequestInput,
): Promise<unknown> {
  let body: unknown;
  if (def.body) {
    if (parse) {
      body = parse();
      // JSON.parse is iterative, but what comes next (validators, JSON.stringify, jsonb) recurses.
      if (jsonDepthExceeds(body, MAX_JSON_DEPTH)) {
        throw errors.validation(
          `The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`,
          [{ in: 'body', path: '/', message: `must not nest objects and arrays deeper than ${MAX_JSON_DEPTH} levels` }],
          'TOO_DEEP',
        );
      }
    }
    if (body === undefined && !def.bodyOptional)
      throw errors.validation('A JSON request body is required.', [{ in: 'body', path: '/', message: 'is required' }], 'BODY_REQUIRED');
    const bodyProblems = body === undefined ? null : op.body!(body);
    if (bodyProblems) throw errors.validation('The request body is invalid.', bodyProblems, 'INVALID_BODY');
  }
  // A handler of a creating operation stores through `idempotent` (once per Idempotency-Key).
  const once = idempotency(ctx, def, input, body);
  // Each handler's request type is checked against its operation in routes/; here it is `never`.
  const result = await handler({ ...input, body, koa: ctx, idempotent: once.idempotent } as never);
  once.verify();
  return result;
}

/**
 * Binds every operation to its handler: authentication first (as the origin service: an anonymous
 * request with a bad body gets 401, not 422), then path, query and body validation, then the handler.
 */
export function buildRouter(
  operations: Record<string, OperationDef>,
  handlers: Record<string, Handler<never>>,
  options: RouterOptions,
): Router {
  const router = new Router({ prefix: options.prefix });
  const limit = options.bodyLimitBytes;

  for (const [operationId, def] of Object.entries(operations)) {
    const handler = handlers[operationId];
    if (!handler) throw new Error(`No handler for operation ${operationId}`);
    const op = compile(def);
    const method = def.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';

    router[method](operationId, toRouterPath(def.path), async (ctx: Koa.Context) => {
      await limitRead(ctx, operationId, def, options);
      const caller = await authenticateAndLimit(ctx, def, options);
      await nameClient(ctx, caller, options.authenticator);

      const params = { ...ctx.params };
      if (op.params) {
        const problems = op.params(params);
        // A malformed id names nothing that exists.
        if (problems)
          throw new AppError(404, 'NOT_FOUND', `No item has the id '${Object.values(ctx.params).join('/')}'.`, { errors: problems });
      }

      const query = normalizeQuery(ctx.query);
      const queryProblems = op.query?.(query);
      if (queryProblems)
        throw errors.validation(`The query parameters are invalid: ${sayProblems(queryProblems)}.`, queryProblems, 'INVALID_QUERY');
      const headerProblems = op.headers?.(declaredHeaders(ctx, def.headers!));
      if (headerProblems) throw errors.validation('The request headers are invalid.', headerProblems, 'INVALID_HEADER');

      const state: RequestState = ctx.state as RequestState;
      const input: RequestInput = { params, query, caller, em: state.em, services: state.services };
      const body = def.body ? checkBodyHeaders(ctx) : 'none';
      const admission = options.largeBodies;
      let result: unknown;
      if (body === 'large' && admission) {
        // Read while holding a reading place (a slow client holds only that), handled while holding a working one.
        result = await admission.reading.run(async () => {
          const text = await readBodyText(ctx, limit);
          return admission.working.run(() => validateAndHandle(ctx, def, op, handler, () => parseJsonText(text, limit), input));
        });
      } else {
        const text = body === 'none' ? undefined : await readBodyText(ctx, limit);
        const parse = text === undefined ? undefined : () => parseJsonText(text, limit);
        result = await validateAndHandle(ctx, def, op, handler, parse, input);
      }
      if (result instanceof Reply) {
        ctx.status = result.status;
        for (const [k, v] of Object.entries(result.headers)) ctx.set(k, v);
        if (result.status !== 204) ctx.body = result.body;
        return;
      }
      ctx.status = def.response.status;
      if (result instanceof JsonText) {
        ctx.type = 'application/json; charset=utf-8';
        // Encoded once: a string body would be measured (Content-Length) and then encoded again.
        ctx.body = result.toBuffer();
        return;
      }
      if (def.response.status !== 204) ctx.body = result;
      if (def.response.contentType) ctx.type = def.response.contentType;
    });
  }
  return router;
}

/** 405 with Allow for a known path and another method; rendered as problem+json. */
export function methodNotAllowed(router: Router): RouterMiddleware {
  const allowed = router.allowedMethods({ throw: false });
  return async (ctx, next) => {
    await allowed(ctx, next);
    if (ctx.status === 405) {
      throw new AppError(405, 'METHOD_NOT_ALLOWED', `${ctx.method} is not allowed on ${ctx.path}.`, {
        headers: { Allow: String(ctx.response.get('Allow')) },
      });
    }
    if (ctx.status === 501) {
      throw new AppError(405, 'METHOD_NOT_ALLOWED', `${ctx.method} is not supported.`);
    }
  };
}
