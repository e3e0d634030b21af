import type { webhookOperations } from '@benchmarks/sdk/contract/webhooks';
import type { Handlers } from '../http/handler.ts';
import * as endpoints from '../services/webhooks/endpoints.ts';
import * as deliveries from '../services/webhooks/deliveries.ts';

export const webhookHandlers: Handlers<typeof webhookOperations> = {
  createWebhook: ({ caller, body, services, idempotent }) => {
    const limits = { allowPrivate: services.config.webhookAllowPrivate, maxPerUser: services.config.maxWebhooksPerUser };
    return idempotent((em) => endpoints.createEndpoint(em, caller, body, limits));
  },
  listWebhooks: ({ em, caller, query }) => endpoints.listEndpoints(em, caller, query),
  getWebhook: async ({ em, caller, params }) => endpoints.webhookView(await endpoints.findEndpoint(em, caller, params.id)),
  updateWebhook: ({ em, caller, params, body, services }) =>
    endpoints.updateEndpoint(em, caller, params.id, body, services.config.webhookAllowPrivate),
  deleteWebhook: ({ em, caller, params }) => endpoints.deleteEndpoint(em, caller, params.id),
  listWebhookDeliveries: ({ em, caller, params, query }) => deliveries.listAttempts(em, caller, params.id, query),
  redeliverWebhook: ({ em, caller, params }) => deliveries.redeliver(em, caller, params.id, params.delivery_id),
};
