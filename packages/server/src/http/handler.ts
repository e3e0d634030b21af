import type Koa from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BodyOf, OperationDef, ParamsOf, QueryOf, ResponseOf } from '@benchmarks/sdk/contract';
import type { Caller } from '../core/caller.ts';
import type { AppContext } from '../services/app-context.ts';
import type { JsonText, Reply } from '../core/reply.ts';

/** What every request carries in ctx.state. */
export interface RequestState {
  em: EntityManager;
  services: AppContext;
}

export interface RequestContext<O extends OperationDef> {
  params: ParamsOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
  /** Present for every auth level but `none` (and `optional` without a token); for `user` and `admin`, `caller.user` is set. */
  caller: O['auth'] extends 'none' | 'optional' ? Caller | null : Caller;
  em: EntityManager;
  services: AppContext;
  koa: Koa.Context;
  /**
   * Runs `store`, the part of the operation that writes. With an `Idempotency-Key`, in one transaction
   * with the key's record, at most once per key: a repeat gets the first answer (services/results/
   * idempotency.ts). Work without the database goes before it, holding no connection. An operation
   * that declares the header must call it (the router checks).
   */
  idempotent<T>(store: (em: EntityManager) => Promise<T>): Promise<T | Reply>;
}

export type Handler<O extends OperationDef> = (req: RequestContext<O>) => Promise<ResponseOf<O> | Reply | JsonText>;

/** One handler per operation of a group, checked against the contract at compile time. */
export type Handlers<Ops extends Record<string, OperationDef>> = { [K in keyof Ops]: Handler<Ops[K]> };
