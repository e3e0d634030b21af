/**
 * The API contract: every operation declared once, as data. The server implements it, the SDK
 * calls it, the OpenAPI document is generated from it.
 */
import { systemOperations } from './system.ts';
import { userOperations } from './users.ts';
import { benchmarkOperations } from './benchmarks.ts';
import { siteOperations } from './sites.ts';
import { flavorOperations } from './flavors.ts';
import { tagOperations } from './tags.ts';
import { adminOperations } from './admin.ts';
import type { OperationDef } from './operation.ts';

export * from './operation.ts';
export * from './common.ts';
export { User } from './users.ts';
export { Health, Ready, AuthConfig } from './system.ts';

/** Every operation, keyed by operationId. Each resource module adds its group here. */
export const operations = {
  ...systemOperations,
  ...userOperations,
  // catalogue operations (benchmarks, sites, flavors, tags, admin views)
  ...benchmarkOperations,
  ...siteOperations,
  ...flavorOperations,
  ...tagOperations,
  ...adminOperations,
  // results operations (results, claims, the caller's own)
  ...resultOperations,
  ...compareOperations,
  ...changesOperations,
  ...exportOperations,
  ...claimOperations,
  ...alertOperations,
  ...webhookOperations,
} satisfies Record<string, OperationDef>;

export type Operations = typeof operations;
export type OperationId = keyof Operations;

/** The base path every operation's path is relative to. */
export const API_BASE_PATH = '/api/v1';

// catalogue schemas (results embed Benchmark, Site, Flavor and Tag)
export { Benchmark, Site, Flavor, Tag, UploaderRef } from './catalogue-schemas.ts';
export { BenchmarkInput } from './benchmarks.ts';
export { SiteInput } from './sites.ts';
export { FlavorInput } from './flavors.ts';
export { TagInput } from './tags.ts';
export { Submit, UserAdmin } from './admin.ts';

// results and claims (imports are hoisted; kept here beside their exports)
import { resultOperations } from './results.ts';
import { claimOperations } from './claims.ts';
import { compareOperations } from './compare.ts';
import { changesOperations } from './changes.ts';
import { exportOperations } from './export.ts';
import { alertOperations } from './alerts.ts';
export { Watch, WatchInput, ChangeRecord } from './alerts.ts';
import { webhookOperations } from './webhooks.ts';
export { Comparison, CompareGroup } from './compare.ts';
export { Changes, ChangesGroup } from './changes.ts';
export { Result, ResultJson } from './results.ts';
export { Claim, ClaimInput } from './claims.ts';
export { Webhook, WebhookAttempt, WEBHOOK_EVENTS } from './webhooks.ts';
export { Warning, UNDESCRIBED_PATH } from './warnings.ts';
