/**
 * The API contract: every operation declared once, as data. The server implements it, the SDK
 * calls it, the OpenAPI document is generated from it.
 */
import * as system from './system.ts';
import * as users from './users.ts';
import type { OperationDef } from './operation.ts';

export * from './operation.ts';
export * from './common.ts';
export { User } from './users.ts';
export { Health, Ready } from './system.ts';

/** Every operation, keyed by operationId. Each resource module adds its group here. */
export const operations = {
  getHealth: system.getHealth,
  getReady: system.getReady,
  getApiSpec: system.getApiSpec,
  registerSelf: users.registerSelf,
  upsertSelf: users.upsertSelf,
  getSelf: users.getSelf,
  updateSelf: users.updateSelf,
  tryAdmin: users.tryAdmin,
  // catalogue operations (benchmarks, sites, flavors, tags, admin views)
  // results operations (results, claims, the caller's own)
} satisfies Record<string, OperationDef>;

export type Operations = typeof operations;
export type OperationId = keyof Operations;

/** The base path every operation's path is relative to. */
export const API_BASE_PATH = '/api/v1';
