import type Koa from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { BodyOf, OperationDef, ParamsOf, QueryOf, ResponseOf } from '@benchmarks/sdk/contract';
import type { Identity } from '../auth/verifier.ts';
import type { UserRow } from '../entities/user.ts';
import type { AppContext } from '../context.ts';
import type { JsonText, Reply } from './reply.ts';

/** Who is calling: the verified token identity, the registered user (if any) and the admin flag. */
export interface Caller {
  identity: Identity;
  user: UserRow | null;
  isAdmin: boolean;
}

/** What every request carries in ctx.state. */
export interface RequestState {
  em: EntityManager;
  services: AppContext;
}

export interface RequestContext<O extends OperationDef> {
  params: ParamsOf<O>;
  query: QueryOf<O>;
  body: BodyOf<O>;
  /** Present for every auth level but `none`; for `user` and `admin`, `caller.user` is set. */
  caller: O['auth'] extends 'none' ? Caller | null : Caller;
  em: EntityManager;
  services: AppContext;
  koa: Koa.Context;
}

export type Handler<O extends OperationDef> = (req: RequestContext<O>) => Promise<ResponseOf<O> | Reply | JsonText>;

/** One handler per operation of a group, checked against the contract at compile time. */
export type Handlers<Ops extends Record<string, OperationDef>> = { [K in keyof Ops]: Handler<Ops[K]> };
