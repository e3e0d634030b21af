import type { Core } from '../core.ts';
import type { Body, IdempotencyOptions, ListQuery, RequestOptions } from '../types.ts';

/**
 * `client.webhooks`: the caller's webhook endpoints, which receive the alerts of its watches
 * (check each request with `verifyWebhook` from `@benchmarks/sdk/webhooks`).
 * @example
 * const hook = await client.webhooks.create({ url: 'https://ci.example.org/hooks/benchmarks' });
 * console.log(hook.secret); // answered once: store it
 * for await (const attempt of client.webhooks.deliveries(hook.id)) console.log(attempt.status);
 */
export function webhooksNamespace(core: Core) {
  return {
    /**
     * Adds an endpoint; the answer carries its signing secret, the only time it is shown.
     * @example
     * await client.webhooks.create({ url, events: ['change.detected'] })
     */
    create: (body: Body<'createWebhook'>, options?: IdempotencyOptions) => core.request('createWebhook', { ...options, body }),
    /**
     * The caller's endpoints, oldest first.
     * @example
     * await client.webhooks.list()
     */
    list: (query?: ListQuery<'listWebhooks'>, options?: RequestOptions) => core.list('listWebhooks', { ...options, query }),
    /**
     * One endpoint.
     * @example
     * await client.webhooks.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getWebhook', { ...options, params: { id } }),
    /**
     * Changes url, events or enabled; `rotate_secret: true` answers a new secret (the old one signs too for 24 h).
     * @example
     * const { secret } = await client.webhooks.update(id, { rotate_secret: true })
     */
    update: (id: string, body: Body<'updateWebhook'>, options?: RequestOptions) =>
      core.request('updateWebhook', { ...options, params: { id }, body }),
    /**
     * Deletes an endpoint and its deliveries.
     * @example
     * await client.webhooks.delete(id)
     */
    delete: (id: string, options?: RequestOptions) => core.request('deleteWebhook', { ...options, params: { id } }),
    /**
     * The attempts of the endpoint's deliveries, newest first.
     * @example
     * client.webhooks.deliveries(id, { per_page: 10 })
     */
    deliveries: (id: string, query?: ListQuery<'listWebhookDeliveries'>, options?: RequestOptions) =>
      core.list('listWebhookDeliveries', { ...options, params: { id }, query }),
    /**
     * Delivers an event again (same webhook-id, a fresh retry schedule).
     * @example
     * await client.webhooks.redeliver(id, attempt.delivery_id)
     */
    redeliver: (id: string, deliveryId: string, options?: RequestOptions) =>
      core.request('redeliverWebhook', { ...options, params: { id, delivery_id: deliveryId } }),
  };
}
