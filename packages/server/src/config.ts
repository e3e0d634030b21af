import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { LOG_LEVELS, type LogLevel } from './logger.ts';
import { parseRateLimit, type RateLimit } from './http/rate-limit.ts';

/** Everything the server needs to run; built from flags and environment by the CLI. */
export interface ServerConfig {
  host: string;
  port: number;
  /** External PostgreSQL; when absent an embedded PostgreSQL runs under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  /** The public base URL (scheme, host, optional path prefix) clients use, e.g. https://bench.example.org */
  publicUrl?: string;
  oidcIssuers: string[];
  oidcAudience?: string;
  /** Public client id for the device authorization grant, advertised to the CLI by GET /auth/config. */
  oidcDeviceClientId?: string;
  adminEntitlements: string[];
  trustProxy: boolean;
  logLevel: LogLevel;
  demo: boolean;
  bodyLimitBytes: number;
  termsVersion: string;
  termsUrl: string;
  corsOrigins: string[];
  /** Writes (POST, PUT, DELETE) allowed per client and window; null: no limit. */
  rateLimit: RateLimit | null;
  /** How long totals of large result lists are remembered (services/total-cache.ts); 0: never. */
  totalsCacheSeconds: number;
  /** Requests with a body of 64 KB or more (batches) handled at once; the others wait (http/gate.ts). */
  largeBodyConcurrency: number;
}

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: '.benchmarks',
  logLevel: 'info' as LogLevel,
  bodyLimitBytes: 1024 * 1024,
  termsVersion: '2024-01',
  /** Served by the service itself from packages/server/assets/terms-of-use.md. */
  termsUrl: '/terms-of-use',
  /** Per client: a burst of 1200 writes, then 20 a second (a CI job uploading a thousand results is never slowed). */
  rateLimit: '1200/60s',
  totalsCacheSeconds: 30,
  /** One per core, at least 2: enough to keep the CPU and PostgreSQL busy with batches. */
  largeBodyConcurrency: Math.max(2, availableParallelism()),
};

export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseBool(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '') return false;
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, not '${value}'.`);
}

function parseUrl(value: string, name: string, protocols: string[]): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} is not a valid URL: '${value}'.`);
  }
  if (!protocols.includes(url.protocol)) {
    throw new Error(`${name} must use ${protocols.join(' or ')}, not '${url.protocol}'.`);
  }
  return value;
}

export type RawConfig = Partial<Record<
  | 'host' | 'port' | 'databaseUrl' | 'dataDir' | 'publicUrl' | 'oidcIssuer' | 'oidcAudience' | 'oidcDeviceClientId' | 'adminEntitlement'
  | 'trustProxy' | 'logLevel' | 'bodyLimit' | 'termsVersion' | 'termsUrl' | 'corsOrigins' | 'rateLimit' | 'totalsCacheSeconds'
  | 'largeBodyConcurrency',
  string
>> & { demo?: boolean };

/** Validates raw option strings; every problem is one clear sentence. */
export function buildConfig(raw: RawConfig): ServerConfig {
  const port = raw.port === undefined || raw.port === '' ? DEFAULTS.port : Number(raw.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, not '${raw.port}'.`);
  const logLevel = (raw.logLevel || DEFAULTS.logLevel) as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not '${raw.logLevel}'.`);
  const bodyLimitBytes = raw.bodyLimit ? Number(raw.bodyLimit) : DEFAULTS.bodyLimitBytes;
  if (!Number.isInteger(bodyLimitBytes) || bodyLimitBytes < 1024) throw new Error(`BODY_LIMIT must be a number of bytes >= 1024, not '${raw.bodyLimit}'.`);
  const totalsCacheSeconds = raw.totalsCacheSeconds ? Number(raw.totalsCacheSeconds) : DEFAULTS.totalsCacheSeconds;
  if (!Number.isFinite(totalsCacheSeconds) || totalsCacheSeconds < 0 || totalsCacheSeconds > 3600) {
    throw new Error(`TOTALS_CACHE_SECONDS must be a number of seconds from 0 to 3600, not '${raw.totalsCacheSeconds}'.`);
  }
  const largeBodyConcurrency = raw.largeBodyConcurrency ? Number(raw.largeBodyConcurrency) : DEFAULTS.largeBodyConcurrency;
  if (!Number.isInteger(largeBodyConcurrency) || largeBodyConcurrency < 1 || largeBodyConcurrency > 1000) {
    throw new Error(`LARGE_BODY_CONCURRENCY must be an integer from 1 to 1000, not '${raw.largeBodyConcurrency}'.`);
  }
  const issuers = splitList(raw.oidcIssuer).map((i) => parseUrl(i, 'OIDC_ISSUERS', ['https:', 'http:']));
  return {
    host: raw.host || DEFAULTS.host,
    port,
    databaseUrl: raw.databaseUrl ? parseUrl(raw.databaseUrl, 'DATABASE_URL', ['postgres:', 'postgresql:']) : undefined,
    dataDir: resolve(raw.dataDir || DEFAULTS.dataDir),
    publicUrl: raw.publicUrl ? parseUrl(raw.publicUrl, 'PUBLIC_URL', ['https:', 'http:']).replace(/\/+$/, '') : undefined,
    oidcIssuers: issuers,
    oidcAudience: raw.oidcAudience || undefined,
    oidcDeviceClientId: raw.oidcDeviceClientId || undefined,
    adminEntitlements: splitList(raw.adminEntitlement),
    trustProxy: parseBool(raw.trustProxy, 'TRUST_PROXY'),
    logLevel,
    demo: Boolean(raw.demo),
    bodyLimitBytes,
    termsVersion: raw.termsVersion || DEFAULTS.termsVersion,
    termsUrl: raw.termsUrl ? parseUrl(raw.termsUrl, 'TERMS_URL', ['https:', 'http:']) : DEFAULTS.termsUrl,
    corsOrigins: splitList(raw.corsOrigins),
    rateLimit: parseRateLimit(raw.rateLimit || DEFAULTS.rateLimit),
    totalsCacheSeconds,
    largeBodyConcurrency,
  };
}
