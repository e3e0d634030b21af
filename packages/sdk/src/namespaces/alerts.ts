import type { Core } from '../core.ts';
import type { Body, ListQuery, RequestOptions } from '../types.ts';

/**
 * `client.watches`: series the server keeps segmented, each change point a record (docs/alerts.md).
 * @example
 * const watch = await client.watches.create({ benchmark_id, metric: 'json.result.score', stale_after: '7d' });
 * for await (const w of client.watches.list()) console.log(w.id, w.metric);
 */
export function watchesNamespace(core: Core) {
  return {
    /**
     * Watches a series with the parameters of `results.changes` (registered user).
     * @example
     * await client.watches.create({ benchmark_id, metric: 'json.result.score' })
     */
    create: (body: Body<'createWatch'>, options?: RequestOptions) => core.request('createWatch', { ...options, body }),
    /**
     * The caller's watches (administrators: every one), newest first.
     * @example
     * await client.watches.list({ benchmark_id })
     */
    list: (query?: ListQuery<'listWatches'>, options?: RequestOptions) => core.list('listWatches', { ...options, query }),
    /**
     * One watch (its owner or an administrator).
     * @example
     * await client.watches.get(id)
     */
    get: (id: string, options?: RequestOptions) => core.request('getWatch', { ...options, params: { id } }),
    /**
     * Deletes a watch and its records.
     * @example
     * await client.watches.delete(id)
     */
    delete: (id: string, options?: RequestOptions) => core.request('deleteWatch', { ...options, params: { id } }),
  };
}

/**
 * `client.changes`: the change records of the caller's watches, and their triage.
 * @example
 * for await (const r of client.changes.list({ state: 'open', direction: 'regression' })) console.log(r.at, r.magnitude);
 * await client.changes.acknowledge(id, 'new compiler');
 */
export function changesNamespace(core: Core) {
  const decide =
    (operationId: 'acknowledgeChange' | 'dismissChange' | 'reopenChange') => (id: string, note?: string, options?: RequestOptions) =>
      core.request(operationId, { ...options, params: { id }, body: note === undefined ? {} : { note } });
  return {
    /**
     * The feed, newest first: open records unless `state` says otherwise.
     * @example
     * await client.changes.list({ watch_id, since: '2026-05-01' })
     */
    list: (query?: Omit<ListQuery<'listChanges'>, 'format'>, options?: RequestOptions) => core.list('listChanges', { ...options, query }),
    /**
     * Marks a record as expected, with an optional note (at most 1000 characters).
     * @example
     * await client.changes.acknowledge(id, 'new compiler')
     */
    acknowledge: decide('acknowledgeChange'),
    /**
     * Marks a record as not real.
     * @example
     * await client.changes.dismiss(id, 'noisy neighbour')
     */
    dismiss: decide('dismissChange'),
    /**
     * Opens an acknowledged or dismissed record again.
     * @example
     * await client.changes.reopen(id)
     */
    reopen: decide('reopenChange'),
  };
}
