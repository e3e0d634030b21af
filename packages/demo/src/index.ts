/**
 * `@benchmarks/demo`: the benchmark results service with everything it needs to try it on one
 * machine: an embedded PostgreSQL, a built-in OpenID provider on loopback that signs real tokens,
 * and a small seeded catalogue. Run it with `npx @benchmarks/demo`; `benchmarks-server start --demo`
 * loads this module when it is installed next to the server.
 * @example
 * import * as demo from '@benchmarks/demo';
 * import { main } from '@benchmarks/server';
 * await main(['node', 'benchmarks-server', 'start', '--demo'], { demo });
 */
export { startDemo, startDemoIssuer, DEMO_ADMIN, DEMO_USER, DEMO_ADMIN_ENTITLEMENT, DEMO_TOKEN_TTL_SECONDS } from './demo.ts';
export { seedDemo, seedOnce, SEED_SETTING, CRAY_SCHEMA, type SeedOutcome } from './seed.ts';
export {
  startIssuer,
  WEB_CLIENT_ID,
  type RunningIssuer,
  type IssuerAccount,
  type StartIssuerOptions,
  type WebClientOptions,
} from './issuer.ts';
export { demoWebClient, DEMO_REDIRECT_URIS_ENV, REDIRECT_PATHS } from './web-client.ts';
