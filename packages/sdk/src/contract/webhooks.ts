import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Timestamp, Uuid } from './common.ts';

/** The alert events an endpoint may receive (docs/webhooks.md). */
export const WEBHOOK_EVENTS = ['change.detected', 'change.acknowledged', 'change.dismissed', 'series.stale', 'series.resumed'] as const;

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'http or https; its host must not resolve to a loopback, private, link-local or metadata address.',
});
const Events = Type.Array(Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e))), {
  minItems: 1,
  uniqueItems: true,
  description: 'The event types sent to the endpoint.',
});

export const Webhook = Type.Object(
  {
    id: Uuid,
    url: Type.String(),
    events: Events,
    format: Type.Union([Type.Literal('standard'), Type.Literal('slack')], {
      description: "standard: Standard Webhooks' body and signature; slack: a Slack incoming webhook's body (text, blocks).",
    }),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why the service disabled the endpoint.' }),
    created_datetime: Timestamp,
    secret: Type.Optional(
      Type.String({ description: 'The signing secret (`whsec_` and base64): only in the answer of the creation and of a rotation.' }),
    ),
  },
  { $id: 'Webhook' },
);

export const WebhookInput = Type.Object(
  { url: Url, events: Type.Optional(Events), format: Type.Optional(Webhook.properties.format) },
  { $id: 'WebhookInput', additionalProperties: false },
);

export const WebhookUpdate = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    enabled: Type.Optional(Type.Boolean({ description: 'true also clears disabled_reason.' })),
    rotate_secret: Type.Optional(
      Type.Literal(true, { description: 'A new secret, answered once; the previous one signs too for 24 hours.' }),
    ),
  },
  { $id: 'WebhookUpdate', additionalProperties: false, minProperties: 1 },
);

export const WebhookAttempt = Type.Object(
  {
    id: Uuid,
    delivery_id: Uuid,
    event_id: Type.String({ format: 'uuid', description: 'The `webhook-id` header: the same at every attempt.' }),
    event_type: Type.String(),
    attempted_datetime: Timestamp,
    status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's status; null: no answer (see error)." }),
    duration_ms: Type.Integer(),
    response: Type.String({ description: 'The first kilobyte of the answer.' }),
    error: Type.Union([Type.String(), Type.Null()]),
    delivery_state: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
  },
  { $id: 'WebhookAttempt' },
);

const Webhooks = { tag: 'webhooks', auth: 'user' } as const;
const OneWebhook = { ...Webhooks, path: '/users/self/webhooks/{id}', params: IdParams } as const;

export const createWebhook = defineOperation({
  ...Webhooks,
  operationId: 'createWebhook',
  method: 'POST',
  path: '/users/self/webhooks',
  summary: 'Add a webhook endpoint',
  description:
    'Answers the signing secret, once. An address refused: 422 INVALID_WEBHOOK_URL; more than MAX_WEBHOOKS_PER_USER: 422 TOO_MANY_WEBHOOKS.',
  headers: IdempotencyHeaders,
  body: WebhookInput,
  response: { status: 201, schema: Webhook },
  errors: [422],
});

export const listWebhooks = defineOperation({
  ...Webhooks,
  operationId: 'listWebhooks',
  method: 'GET',
  path: '/users/self/webhooks',
  summary: "The caller's webhook endpoints, oldest first",
  query: ListQuery({}),
  response: { status: 200, schema: Page(Webhook, 'WebhookPage') },
});

export const getWebhook = defineOperation({
  ...OneWebhook,
  operationId: 'getWebhook',
  method: 'GET',
  summary: 'One of the caller’s webhook endpoints',
  response: { status: 200, schema: Webhook },
  errors: [404],
});

export const updateWebhook = defineOperation({
  ...OneWebhook,
  operationId: 'updateWebhook',
  method: 'PATCH',
  summary: 'Change a webhook endpoint, or rotate its secret',
  body: WebhookUpdate,
  response: { status: 200, schema: Webhook },
  errors: [404, 422],
});

export const deleteWebhook = defineOperation({
  ...OneWebhook,
  operationId: 'deleteWebhook',
  method: 'DELETE',
  summary: 'Delete a webhook endpoint and its deliveries',
  response: { status: 204, schema: null },
  errors: [404],
});

export const listWebhookDeliveries = defineOperation({
  ...Webhooks,
  operationId: 'listWebhookDeliveries',
  method: 'GET',
  path: '/users/self/webhooks/{id}/deliveries',
  summary: "The attempts of an endpoint's deliveries, newest first",
  params: IdParams,
  query: ListQuery({}),
  response: { status: 200, schema: Page(WebhookAttempt, 'WebhookAttemptPage') },
  errors: [404],
});

export const redeliverWebhook = defineOperation({
  ...Webhooks,
  operationId: 'redeliverWebhook',
  method: 'POST',
  path: '/users/self/webhooks/{id}/deliveries/{delivery_id}:redeliver',
  summary: 'Deliver an event again, with the same webhook-id and a fresh retry schedule',
  description: 'A disabled endpoint: 409 WEBHOOK_DISABLED; a delivery still pending (retried on its schedule): 409 DELIVERY_PENDING.',
  params: Type.Object({ id: Uuid, delivery_id: Uuid }, { additionalProperties: false }),
  response: { status: 204, schema: null },
  errors: [404, 409],
});

export const webhookOperations = {
  createWebhook,
  listWebhooks,
  getWebhook,
  updateWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  redeliverWebhook,
};
