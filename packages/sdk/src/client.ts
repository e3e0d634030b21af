import { Core, type ClientOptions } from './core.ts';
import type { RequestOptions } from './types.ts';
import { reviewedNamespace } from './namespaces/reviewed.ts';
import { flavorsNamespace } from './namespaces/flavors.ts';
import { changesNamespace, watchesNamespace } from './namespaces/alerts.ts';
import { resultsNamespace } from './namespaces/results.ts';
import { claimsNamespace, submissionsNamespace } from './namespaces/reports.ts';
import { usersNamespace } from './namespaces/users.ts';
import { selfNamespace } from './namespaces/self.ts';
import { webhooksNamespace } from './namespaces/webhooks.ts';

/**
 * Creates a client of the benchmark results service. In Node it keeps connections alive across
 * calls (call `close()` when done to release them); in browsers it uses the global fetch.
 * @example
 * import { createClient, where, desc } from '@benchmarks/sdk';
 * const client = createClient({ baseUrl: 'https://performance.example.org', getToken: () => auth.accessToken() });
 * const top = await client.results.list({ filters: [where('cpu.count').gte(4)], sort_by: [desc('json.score')], per_page: 10 });
 */
export function createClient(options: ClientOptions) {
  const core = new Core(options);
  return {
    /**
     * The API base URL in use, e.g. `http://localhost:8080/api/v1`.
     * @example
     * console.log(client.baseUrl)
     */
    baseUrl: core.baseUrl,
    /**
     * The request core (per-operation `request` and `list`).
     * @example
     * await client.core.request('getHealth')
     */
    core,
    /**
     * Calls any operation of the contract by operationId, with typed `params`, `query` and `body`.
     * @example const page = await client.call('listBenchmarks', { query: { per_page: 5 } });
     */
    call: core.request.bind(core) as Core['request'],
    /**
     * Liveness of the service.
     * @example
     * (await client.health()).version
     */
    health: (options?: RequestOptions) => core.request('getHealth', options),
    /**
     * Readiness: database reachable and migrations applied (503 `ServerError` otherwise).
     * @example
     * await client.ready()
     */
    ready: (options?: RequestOptions) => core.request('getReady', options),
    /**
     * The OpenAPI 3.1 document of the service.
     * @example
     * const doc = await client.spec(); doc.openapi
     */
    spec: (options?: RequestOptions) => core.request('getApiSpec', options),
    /**
     * How to obtain a token: trusted issuers, audience, the CLI's device-flow client id, scopes, and
     * the terms of use (URL and version) that registering accepts.
     * @example
     * const { issuers, terms_url } = await client.authConfig();
     */
    authConfig: (options?: RequestOptions) => core.request('getAuthConfig', options),
    benchmarks: reviewedNamespace(core, 'Benchmark'),
    sites: reviewedNamespace(core, 'Site'),
    flavors: flavorsNamespace(core),
    tags: reviewedNamespace(core, 'Tag'),
    results: resultsNamespace(core),
    claims: claimsNamespace(core),
    submissions: submissionsNamespace(core),
    users: usersNamespace(core),
    self: selfNamespace(core),
    watches: watchesNamespace(core),
    changes: changesNamespace(core),
    webhooks: webhooksNamespace(core),
    /**
     * Releases the keep-alive connections (Node). The client must not be used afterwards.
     * @example
     * await client.close()
     */
    close: () => core.close(),
  };
}

/**
 * The client returned by {@link createClient}.
 * @example
 * function report(client: Client) { return client.results.list({ per_page: 10 }); }
 */
export type Client = ReturnType<typeof createClient>;
