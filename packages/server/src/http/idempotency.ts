/** The `Idempotency-Key` header between Koa and services/results/idempotency.ts. */
import type Koa from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperationDef } from '@benchmarks/sdk/contract';
import type { TObject } from '@sinclair/typebox';
import type { Caller } from '../core/caller.ts';
import type { Reply } from '../core/reply.ts';
import { requestHash, storeOnce } from '../services/results/idempotency.ts';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/** The headers an operation declares, by their canonical names; absent ones are left out. */
export function declaredHeaders(ctx: Koa.Context, schema: TObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(schema.properties)) {
    const value = ctx.headers[name.toLowerCase()];
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

interface Input {
  params: unknown;
  query: unknown;
  caller: Caller | null;
  em: EntityManager;
}

/** The `idempotent` of one request's handler, and `verify()`, which fails when a keyed request was answered without it. */
export function idempotency(
  ctx: Koa.Context,
  def: OperationDef,
  input: Input,
  body: unknown,
): { idempotent<T>(store: (em: EntityManager) => Promise<T>): Promise<T | Reply>; verify(): void } {
  const key = def.headers?.properties[IDEMPOTENCY_HEADER] ? ctx.headers[IDEMPOTENCY_HEADER.toLowerCase()] : undefined;
  const caller = input.caller;
  if (typeof key !== 'string' || !caller) {
    return { idempotent: (store) => store(input.em), verify: () => {} };
  }
  let used = false;
  return {
    idempotent(store) {
      used = true;
      const hash = requestHash(def.operationId, { params: input.params, query: input.query, body });
      const request = { iss: caller.identity.iss, sub: caller.identity.sub, key, operationId: def.operationId, hash };
      return storeOnce(input.em, request, def.response.status, store);
    },
    verify() {
      if (!used)
        throw new Error(
          `The handler of ${def.operationId} ignored the request's ${IDEMPOTENCY_HEADER}: it must store through idempotent().`,
        );
    },
  };
}
