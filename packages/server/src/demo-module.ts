/**
 * What `start --demo` needs from the @benchmarks/demo package: a built-in OpenID provider the
 * server trusts, and what to do once the server listens (seed the catalogue, print tokens). The
 * server does not depend on that package, so production installs do not carry the provider.
 */
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ServerConfig } from './config.ts';
import type { Logger } from './core/logger.ts';
import { ConfigurationError } from './core/errors.ts';

export interface DemoModule {
  /** `signal`: aborts when the server is asked to stop during its start-up; what was started is then closed again, and the promise rejects with its reason. */
  startDemo(config: ServerConfig, logger: Logger, signal?: AbortSignal): Promise<RunningDemo>;
}

/** What the demo reads of the running service: its URL and a connection to its database. */
export interface DemoServer {
  url: string;
  context: { orm: MikroORM };
}

export interface RunningDemo {
  /** The built-in provider's issuer URL, trusted besides `--oidc-issuer`. */
  issuer: string;
  /** The entitlement of the demo administrator. */
  adminEntitlement: string;
  /** The public client the CLI logs in with (device grant). */
  cliClientId: string;
  /**
   * Called once the server listens (with `--workers`, once every worker does). `stopping` aborts
   * when the server begins to stop: what has begun finishes, nothing more is done or printed.
   */
  ready(server: DemoServer, stopping?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/** What the server processes must know of the demo: what they trust (workers get it from the primary, which runs the demo). */
export type DemoTrust = Pick<RunningDemo, 'issuer' | 'adminEntitlement' | 'cliClientId'>;

/** `config` trusting the demo's administrators and advertising its CLI client. */
export function trustDemo(config: ServerConfig, demo: DemoTrust): void {
  config.adminEntitlements = [...config.adminEntitlements, demo.adminEntitlement];
  config.oidcDeviceClientId ??= demo.cliClientId;
}

const DEMO_PACKAGE = '@benchmarks/demo';

/** The demo given, or the @benchmarks/demo package when it is installed; one clear error otherwise. */
export async function loadDemo(given: DemoModule | undefined): Promise<DemoModule> {
  if (given) return given;
  const name = DEMO_PACKAGE; // a computed name: the server neither depends on nor bundles the demo
  try {
    return (await import(name)) as DemoModule;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !String(e.message).includes(DEMO_PACKAGE)) throw err;
    throw new ConfigurationError(
      `--demo needs the ${DEMO_PACKAGE} package, which production installs leave out: ` +
        `run \`npx ${DEMO_PACKAGE}\`, or install it next to the server (npm install ${DEMO_PACKAGE}).`,
    );
  }
}
