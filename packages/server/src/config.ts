import { defaultsOf, MAX_WORKERS, parseDuration, readSettings, type RawSettings, type SettingValues } from './settings.ts';

export { MAX_WORKERS, parseDuration };

/**
 * Everything the server needs to run; built from flags and environment by the CLI. Each field is
 * declared once, with its flag, variable, bounds and default, in settings.ts.
 */
export interface ServerConfig extends SettingValues {}

/** What the CLI collects: the text of each flag or environment variable given, by commander's key. */
export type RawConfig = RawSettings;

/** The defaults by key, as code outside config.ts reads them (settings.ts, `Defaults`). */
export const DEFAULTS = defaultsOf();

/**
 * Validates raw option strings; every problem is one clear sentence. Each setting is parsed by its
 * declaration (settings.ts); what follows are the checks that involve several.
 */
export function buildConfig(raw: RawConfig): ServerConfig {
  const config: ServerConfig = readSettings(raw);
  if (config.databaseDirectUrl && !config.databaseUrl) {
    throw new Error('DATABASE_DIRECT_URL names the database of DATABASE_URL reached without PgBouncer: set DATABASE_URL too.');
  }
  // The demo's provider joins the trusted issuers at start: the verifier checks that case.
  const opaqueIssuer = config.oidcOpaqueIssuer;
  const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
  if (opaqueIssuer && !config.demo && !config.oidcIssuers.some((i) => sameIssuer(i, opaqueIssuer))) {
    throw new Error(`OIDC_OPAQUE_ISSUER must be one of the trusted issuers (OIDC_ISSUERS), not '${opaqueIssuer}'.`);
  }
  if (config.databasePort && config.databaseUrl) {
    throw new Error('DATABASE_PORT is the port of the embedded PostgreSQL: leave it out with DATABASE_URL.');
  }
  distinctPorts(config);
  // Waiting longer for a place than any statement may run is not worth a client's time.
  if (config.statementTimeoutMs > 0) config.expensiveListWaitMs = Math.min(config.expensiveListWaitMs, config.statementTimeoutMs);
  return config;
}

/** The HTTP port, the embedded PostgreSQL's and the demo provider's must differ (a start checks they are free before it starts anything). */
function distinctPorts(config: ServerConfig): void {
  const taken = [
    ['PORT', config.port],
    ['DATABASE_PORT', config.databasePort],
    ['BENCHMARKS_DEMO_ISSUER_PORT', config.demo ? (config.demoIssuerPort ?? 0) : 0],
  ] as const;
  for (const [i, [name, port]] of taken.entries()) {
    const same = taken.slice(i + 1).find(([, other]) => port !== 0 && other === port);
    if (same) throw new Error(`${name} and ${same[0]} must differ, not both ${port}.`);
  }
}
