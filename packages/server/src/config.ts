import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './core/logger.ts';
import { parseRateLimit, type RateLimit } from './core/rate-limit.ts';

/** Everything the server needs to run; built from flags and environment by the CLI. */
export interface ServerConfig {
  host: string;
  port: number;
  /** External PostgreSQL; when absent an embedded PostgreSQL runs under dataDir. */
  databaseUrl?: string;
  /**
   * The database of `databaseUrl` reached directly (or through a session-mode PgBouncer pool), for
   * the connections that need a session of their own: the migration lock, metric index builds and
   * their locks, the change listener. Needed when `databaseUrl` is PgBouncer in transaction mode;
   * absent: `databaseUrl`.
   */
  databaseDirectUrl?: string;
  /** The embedded PostgreSQL's port on 127.0.0.1; 0: any free port. */
  databasePort: number;
  /** Read replicas (streaming standbys of `databaseUrl`) that serve reads; empty: none. */
  databaseReadUrls: string[];
  /** A replica further behind the primary than this gets no reads, in ms. */
  maxReplicaLagMs: number;
  /** Whether frequent statements are prepared by name on each connection (off behind PgBouncer in transaction mode). */
  preparedStatements: boolean;
  dataDir: string;
  /** The public base URL (scheme, host, optional path prefix) clients use, e.g. https://bench.example.org */
  publicUrl?: string;
  oidcIssuers: string[];
  oidcAudience?: string;
  /**
   * The trusted issuer whose userinfo endpoint checks opaque (non-JWT) tokens; opaque tokens are
   * never sent to another. Defaults to the only trusted issuer; with several and none named,
   * opaque tokens are refused (auth/verifier.ts).
   */
  oidcOpaqueIssuer?: string;
  /** Public client id for the device authorization grant, advertised to the CLI by GET /auth/config. */
  oidcDeviceClientId?: string;
  adminEntitlements: string[];
  trustProxy: boolean;
  logLevel: LogLevel;
  /** The least level at which the embedded PostgreSQL's own log lines are logged (db/postgres-log.ts maps its severities). */
  databaseLogLevel: LogLevel;
  /** How log lines look on stderr: readable (`pretty`), JSON (`json`), or pretty on a terminal only (`auto`). */
  logFormat: LogFormat;
  demo: boolean;
  /** With `demo`: seed the sample catalogue into a database that was never seeded (and holds no catalogue). */
  demoSeed: boolean;
  /** With `demo`: the port of its OpenID provider; absent: the one it used last time, else a free one. */
  demoIssuerPort?: number;
  /** Deadline for creating (first use) and starting the embedded PostgreSQL, in ms; 0: none. */
  databaseStartTimeoutMs: number;
  /** Deadline for the first connection to the database, retried meanwhile, in ms; 0: none. */
  databaseConnectTimeoutMs: number;
  /** Deadline for applying the migrations at start (or, with `migrate` false, for waiting until they are applied), in ms; 0: none. */
  migrationTimeoutMs: number;
  /**
   * Whether `start` applies pending migrations (under a lock, once for all processes sharing the
   * database); false: it waits up to `migrationTimeoutMs` for another process to apply them, then fails.
   */
  migrate: boolean;
  /** Processes serving the port (node:cluster workers); 1: the server runs in this process alone. */
  workers: number;
  bodyLimitBytes: number;
  /** Largest benchmark json_schema, in bytes of JSON text (services/schema-compiler.ts). */
  maxSchemaBytes: number;
  /** Most values (object members and array elements, at any depth) a benchmark json_schema may hold. */
  maxSchemaNodes: number;
  termsVersion: string;
  termsUrl: string;
  corsOrigins: string[];
  /** Writes (POST, PUT, DELETE) allowed per client and window; null: no limit. */
  rateLimit: RateLimit | null;
  /** How long totals of large result lists are remembered (services/total-cache.ts); 0: never. */
  totalsCacheSeconds: number;
  /** Requests with a body of 64 KB or more (batches) handled at once; the others wait (services/admission.ts). */
  largeBodyConcurrency: number;
  /** Claims one user may have waiting for review at once (services/claims.ts); 0: no limit. */
  maxOpenClaims: number;
  /** Most indexes kept for sorting by benchmarks' suggested metrics, two per metric (services/metric-indexes.ts); 0: none. */
  maxMetricIndexes: number;
  /** Longest a statement of the application pool may run, in ms (PostgreSQL statement_timeout); 0: no limit. */
  statementTimeoutMs: number;
  /** Connections of the application pool. */
  dbPoolSize: number;
  /** How deep offset paging may reach into a result list: page × per_page at most this. */
  maxPageDepth: number;
  /** Expensive result lists (search terms, JSON filters, unindexed sorts) run at once per process (services/admission.ts). */
  expensiveListConcurrency: number;
  /**
   * How long an expensive list waits for a place before 503 EXPENSIVE_LIST_BUSY, in ms, at most
   * `statementTimeoutMs` (services/admission.ts); 0: refused at once when every place is taken.
   */
  expensiveListWaitMs: number;
  /** Reads (GET) allowed per client and window; null: no limit. */
  readRateLimit: RateLimit | null;
  /** Exports (GET /results:export) streaming at once per process; one more gets 503 EXPORT_BUSY. */
  exportConcurrency: number;
  /** An export whose client's connection accepts no write for this long is cut off, in ms; 0: never. */
  exportStallTimeoutMs: number;
  /** The longest an export may stream before it is cut off, in ms; 0: no limit. */
  exportMaxDurationMs: number;
  /** Where rate limits keep their buckets: `database` (shared by every process) or `memory` (this process's own). */
  rateLimitStore: 'database' | 'memory';
  /** Whether tags a user creates wait for review (true) or are approved at once, as in the origin service (false). */
  reviewTags: boolean;
  /** Whether every request is logged at `info` (one access line each); false: at `debug`, as other routine lines. */
  accessLog: boolean;
}

export const DEFAULTS = {
  host: '127.0.0.1',
  port: 8080,
  dataDir: '.benchmarks',
  logLevel: 'info' as LogLevel,
  /** PostgreSQL's warnings, errors and fatal messages; its routine LOG lines (checkpoints, start and stop) at `info`. */
  databaseLogLevel: 'warn' as LogLevel,
  /** Readable on a terminal, JSON lines for log collectors. */
  logFormat: 'auto' as LogFormat,
  demoSeed: true,
  /** initdb and a start take 1-3 s; a cluster recovering after a crash replays its WAL first. */
  databaseStartTimeout: '60s',
  /** Long enough for a database container started alongside the server to come up. */
  databaseConnectTimeout: '30s',
  /** The migrations of an empty database take under a second; a migration rewriting a large table takes longer. */
  migrationTimeout: '5m',
  bodyLimitBytes: 1024 * 1024,
  /** 270 and 90 times the demo's c-ray schema (969 bytes, 54 values); at both limits a schema compiles in about 1 s (in a worker). */
  maxSchemaBytes: 256 * 1024,
  maxSchemaNodes: 5000,
  termsVersion: '2024-01',
  /** Served by the service itself from packages/server/assets/terms-of-use.md. */
  termsUrl: '/terms-of-use',
  /** Per client: a burst of 1200 writes, then 20 a second (a CI job uploading a thousand results is never slowed). */
  rateLimit: '1200/60s',
  totalsCacheSeconds: 30,
  /** One per core, at least 2: enough to keep the CPU and PostgreSQL busy with batches. */
  largeBodyConcurrency: Math.max(2, availableParallelism()),
  /** Enough for anyone reporting real problems; a flood of claims cannot hide much of the catalogue. */
  maxOpenClaims: 50,
  /** 100 metrics (two indexes each): planning a list and an upload cost less than 20 benchmarks of 8 metrics did uncapped (docs/security.md, "Metric indexes"). */
  maxMetricIndexes: 200,
  /** About twice the slowest statement the benchmark measured at a million results (p99 8.5 s: a search, 32 connections on 2 cores). */
  statementTimeout: '15s',
  dbPoolSize: 10,
  /** Elasticsearch's max_result_window: 100 pages of 100. */
  maxPageDepth: 10_000,
  /** One per core, at least 2: each holds one connection and most of a core of PostgreSQL. */
  expensiveListConcurrency: Math.max(2, availableParallelism()),
  /**
   * Long enough for 32 connections of comparisons (about 0.5 s each at a million results) to be
   * served two at a time; with the statement timeout, within the SDK's 30 s request timeout.
   */
  expensiveListWait: '10s',
  /** One per core, at least 2: each holds a database connection of its own for as long as its client reads. */
  exportConcurrency: Math.max(2, availableParallelism()),
  /** A reader must take 64 KB in this time (2 KB/s); one that stops frees its place and connection within it. */
  exportStallTimeout: '30s',
  /** A million results export in about a minute (docs/performance.md); a snapshot held longer holds back vacuum. */
  exportMaxDuration: '60m',
  /** Shared: N processes give each client one budget, not N. */
  rateLimitStore: 'database' as 'database' | 'memory',
  /**
   * None: a limit per address throttles every user behind one proxy or NAT, and load tests; the work a
   * read can cause is bounded otherwise (docs/decisions.md, "Reads are not rate limited by default").
   */
  readRateLimit: '0',
  migrate: true,
  /** Long enough for a replica catching up after a burst of uploads; short enough that a stuck one is left soon. */
  maxReplicaLag: '10s',
  /** One process, as before workers existed: `auto` is one per core. */
  workers: 1,
  /** CONTRACT.md: tags are reviewed like the rest of the catalogue. */
  reviewTags: true,
  /** Operators see each request at the default level. */
  accessLog: true,
};

/** Most workers `--workers` accepts. */
export const MAX_WORKERS = 256;

function oneOf<const T extends string>(value: string | undefined, fallback: T, name: string, allowed: readonly T[]): T {
  if (value === undefined || value === '') return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, not '${value}'.`);
  return value as T;
}

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

export type RawConfig = Partial<
  Record<
    | 'host'
    | 'port'
    | 'databaseUrl'
    | 'databaseDirectUrl'
    | 'databaseReadUrl'
    | 'maxReplicaLag'
    | 'preparedStatements'
    | 'dataDir'
    | 'publicUrl'
    | 'oidcIssuer'
    | 'oidcAudience'
    | 'oidcDeviceClientId'
    | 'adminEntitlement'
    | 'oidcOpaqueIssuer'
    | 'maxSchemaBytes'
    | 'maxSchemaNodes'
    | 'trustProxy'
    | 'logLevel'
    | 'bodyLimit'
    | 'termsVersion'
    | 'termsUrl'
    | 'corsOrigins'
    | 'rateLimit'
    | 'totalsCacheSeconds'
    | 'largeBodyConcurrency'
    | 'maxOpenClaims'
    | 'maxMetricIndexes'
    | 'statementTimeout'
    | 'dbPoolSize'
    | 'maxPageDepth'
    | 'expensiveListConcurrency'
    | 'expensiveListWait'
    | 'readRateLimit'
    | 'exportConcurrency'
    | 'exportStallTimeout'
    | 'exportMaxDuration'
    | 'rateLimitStore'
    | 'databaseLogLevel'
    | 'logFormat'
    | 'databasePort'
    | 'demoIssuerPort'
    | 'demoSeed'
    | 'databaseStartTimeout'
    | 'databaseConnectTimeout'
    | 'migrationTimeout'
    | 'migrate'
    | 'workers'
    | 'reviewTags'
    | 'accessLog',
    string
  >
> & { demo?: boolean };

/** Validates raw option strings; every problem is one clear sentence. */
export function buildConfig(raw: RawConfig): ServerConfig {
  const port = raw.port === undefined || raw.port === '' ? DEFAULTS.port : Number(raw.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`PORT must be an integer from 0 to 65535, not '${raw.port}'.`);
  const logLevel = (raw.logLevel || DEFAULTS.logLevel) as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not '${raw.logLevel}'.`);
  const databaseLogLevel = (raw.databaseLogLevel || DEFAULTS.databaseLogLevel) as LogLevel;
  if (!LOG_LEVELS.includes(databaseLogLevel)) {
    throw new Error(`DATABASE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, not '${raw.databaseLogLevel}'.`);
  }
  const bodyLimitBytes = raw.bodyLimit ? Number(raw.bodyLimit) : DEFAULTS.bodyLimitBytes;
  if (!Number.isInteger(bodyLimitBytes) || bodyLimitBytes < 1024)
    throw new Error(`BODY_LIMIT must be a number of bytes >= 1024, not '${raw.bodyLimit}'.`);
  const maxSchemaBytes = raw.maxSchemaBytes ? Number(raw.maxSchemaBytes) : DEFAULTS.maxSchemaBytes;
  if (!Number.isInteger(maxSchemaBytes) || maxSchemaBytes < 1024 || maxSchemaBytes > 64 * 1024 * 1024) {
    throw new Error(`MAX_SCHEMA_BYTES must be a number of bytes from 1024 to 67108864, not '${raw.maxSchemaBytes}'.`);
  }
  const maxSchemaNodes = raw.maxSchemaNodes ? Number(raw.maxSchemaNodes) : DEFAULTS.maxSchemaNodes;
  if (!Number.isInteger(maxSchemaNodes) || maxSchemaNodes < 10 || maxSchemaNodes > 1_000_000) {
    throw new Error(`MAX_SCHEMA_NODES must be an integer from 10 to 1000000, not '${raw.maxSchemaNodes}'.`);
  }
  const totalsCacheSeconds = raw.totalsCacheSeconds ? Number(raw.totalsCacheSeconds) : DEFAULTS.totalsCacheSeconds;
  if (!Number.isFinite(totalsCacheSeconds) || totalsCacheSeconds < 0 || totalsCacheSeconds > 3600) {
    throw new Error(`TOTALS_CACHE_SECONDS must be a number of seconds from 0 to 3600, not '${raw.totalsCacheSeconds}'.`);
  }
  const largeBodyConcurrency = raw.largeBodyConcurrency ? Number(raw.largeBodyConcurrency) : DEFAULTS.largeBodyConcurrency;
  if (!Number.isInteger(largeBodyConcurrency) || largeBodyConcurrency < 1 || largeBodyConcurrency > 1000) {
    throw new Error(`LARGE_BODY_CONCURRENCY must be an integer from 1 to 1000, not '${raw.largeBodyConcurrency}'.`);
  }
  const maxOpenClaims = raw.maxOpenClaims ? Number(raw.maxOpenClaims) : DEFAULTS.maxOpenClaims;
  if (!Number.isInteger(maxOpenClaims) || maxOpenClaims < 0 || maxOpenClaims > 1_000_000) {
    throw new Error(`MAX_OPEN_CLAIMS must be an integer from 0 (no limit) to 1000000, not '${raw.maxOpenClaims}'.`);
  }
  if (raw.databaseDirectUrl && !raw.databaseUrl) {
    throw new Error('DATABASE_DIRECT_URL names the database of DATABASE_URL reached without PgBouncer: set DATABASE_URL too.');
  }
  const issuers = splitList(raw.oidcIssuer).map((i) => parseUrl(i, 'OIDC_ISSUERS', ['https:', 'http:']));
  const opaqueIssuer = raw.oidcOpaqueIssuer ? parseUrl(raw.oidcOpaqueIssuer, 'OIDC_OPAQUE_ISSUER', ['https:', 'http:']) : undefined;
  // The demo's provider joins the trusted issuers at start: the verifier checks that case.
  const sameIssuer = (a: string, b: string) => a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
  if (opaqueIssuer && !raw.demo && !issuers.some((i) => sameIssuer(i, opaqueIssuer))) {
    throw new Error(`OIDC_OPAQUE_ISSUER must be one of the trusted issuers (OIDC_ISSUERS), not '${opaqueIssuer}'.`);
  }
  return {
    host: raw.host || DEFAULTS.host,
    port,
    databaseUrl: raw.databaseUrl ? parseUrl(raw.databaseUrl, 'DATABASE_URL', ['postgres:', 'postgresql:']) : undefined,
    databaseDirectUrl: raw.databaseDirectUrl
      ? parseUrl(raw.databaseDirectUrl, 'DATABASE_DIRECT_URL', ['postgres:', 'postgresql:'])
      : undefined,
    databaseReadUrls: splitList(raw.databaseReadUrl).map((url) => parseUrl(url, 'DATABASE_READ_URL', ['postgres:', 'postgresql:'])),
    maxReplicaLagMs: parseDuration(raw.maxReplicaLag || DEFAULTS.maxReplicaLag, 'MAX_REPLICA_LAG'),
    preparedStatements:
      raw.preparedStatements === undefined || raw.preparedStatements === ''
        ? true
        : parseBool(raw.preparedStatements, 'PREPARED_STATEMENTS'),
    dataDir: resolve(raw.dataDir || DEFAULTS.dataDir),
    publicUrl: raw.publicUrl ? parseUrl(raw.publicUrl, 'PUBLIC_URL', ['https:', 'http:']).replace(/\/+$/, '') : undefined,
    oidcIssuers: issuers,
    oidcAudience: raw.oidcAudience || undefined,
    oidcOpaqueIssuer: opaqueIssuer,
    oidcDeviceClientId: raw.oidcDeviceClientId || undefined,
    adminEntitlements: splitList(raw.adminEntitlement),
    trustProxy: parseBool(raw.trustProxy, 'TRUST_PROXY'),
    logLevel,
    databaseLogLevel,
    demo: Boolean(raw.demo),
    demoSeed: raw.demoSeed === undefined || raw.demoSeed === '' ? DEFAULTS.demoSeed : parseBool(raw.demoSeed, 'BENCHMARKS_DEMO_SEED'),
    ...processOptions(raw, port),
    databaseStartTimeoutMs: parseDuration(raw.databaseStartTimeout || DEFAULTS.databaseStartTimeout, 'DATABASE_START_TIMEOUT'),
    databaseConnectTimeoutMs: parseDuration(raw.databaseConnectTimeout || DEFAULTS.databaseConnectTimeout, 'DATABASE_CONNECT_TIMEOUT'),
    migrationTimeoutMs: parseDuration(raw.migrationTimeout || DEFAULTS.migrationTimeout, 'MIGRATION_TIMEOUT'),
    migrate: raw.migrate === undefined || raw.migrate === '' ? DEFAULTS.migrate : parseBool(raw.migrate, 'MIGRATE'),
    workers: parseWorkers(raw.workers),
    reviewTags: raw.reviewTags === undefined || raw.reviewTags === '' ? DEFAULTS.reviewTags : parseBool(raw.reviewTags, 'REVIEW_TAGS'),
    accessLog: raw.accessLog === undefined || raw.accessLog === '' ? DEFAULTS.accessLog : parseBool(raw.accessLog, 'ACCESS_LOG'),
    bodyLimitBytes,
    maxSchemaBytes,
    maxSchemaNodes,
    termsVersion: raw.termsVersion || DEFAULTS.termsVersion,
    termsUrl: raw.termsUrl ? parseUrl(raw.termsUrl, 'TERMS_URL', ['https:', 'http:']) : DEFAULTS.termsUrl,
    corsOrigins: splitList(raw.corsOrigins),
    rateLimit: parseRateLimit(raw.rateLimit || DEFAULTS.rateLimit),
    totalsCacheSeconds,
    largeBodyConcurrency,
    maxOpenClaims,
    maxMetricIndexes: integerIn(raw.maxMetricIndexes, DEFAULTS.maxMetricIndexes, 'MAX_METRIC_INDEXES', 0, 10_000),
    ...boundedWork(raw),
  };
}

/**
 * How the process shows itself: the log format, and the ports of the embedded PostgreSQL and of
 * the demo's provider, which must differ from the HTTP port and each other (a start checks they are
 * free before it starts anything).
 */
function processOptions(raw: RawConfig, httpPort: number) {
  const logFormat = oneOf(raw.logFormat, DEFAULTS.logFormat, 'LOG_FORMAT', LOG_FORMATS);
  const databasePort = integerIn(raw.databasePort, 0, 'DATABASE_PORT', 0, 65535);
  if (databasePort && raw.databaseUrl) {
    throw new Error('DATABASE_PORT is the port of the embedded PostgreSQL: leave it out with DATABASE_URL.');
  }
  const demoIssuerPort = raw.demoIssuerPort ? integerIn(raw.demoIssuerPort, 0, 'BENCHMARKS_DEMO_ISSUER_PORT', 1, 65535) : undefined;
  const taken = [
    ['PORT', httpPort],
    ['DATABASE_PORT', databasePort],
    ['BENCHMARKS_DEMO_ISSUER_PORT', raw.demo ? (demoIssuerPort ?? 0) : 0],
  ] as const;
  for (const [i, [name, port]] of taken.entries()) {
    const same = taken.slice(i + 1).find(([, other]) => port !== 0 && other === port);
    if (same) throw new Error(`${name} and ${same[0]} must differ, not both ${port}.`);
  }
  return { logFormat, databasePort, ...(demoIssuerPort === undefined ? {} : { demoIssuerPort }) };
}

/** `15000`, `15000ms`, `15s`, `2m` → milliseconds; `0` disables. */
export function parseDuration(text: string, name: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/i.exec(text);
  const ms = match ? Math.round(Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? 'ms').toLowerCase() as 'ms']) : NaN;
  if (!Number.isSafeInteger(ms) || ms > 86_400_000) {
    throw new Error(
      `${name} must be a duration such as 15s, 500ms, 2m or 15000 (milliseconds), at most 24h, or 0 for no limit; not '${text}'.`,
    );
  }
  return ms;
}

/** `--workers`/WORKERS: a number of processes, or `auto` (one per core, os.availableParallelism()). */
export function parseWorkers(value: string | undefined): number {
  if (value === undefined || value === '') return DEFAULTS.workers;
  if (value.trim().toLowerCase() === 'auto') return Math.min(MAX_WORKERS, availableParallelism());
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKERS) {
    throw new Error(`WORKERS must be an integer from 1 to ${MAX_WORKERS}, or auto (one per core), not '${value}'.`);
  }
  return n;
}

function integerIn(value: string | undefined, fallback: number, name: string, min: number, max: number): number {
  const n = value ? Number(value) : fallback;
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, not '${value}'.`);
  return n;
}

/** The limits that bound the work one request can cause (docs/security.md, "Bounded work per request"). */
function boundedWork(raw: RawConfig) {
  let readRateLimit: RateLimit | null;
  try {
    readRateLimit = parseRateLimit(raw.readRateLimit || DEFAULTS.readRateLimit);
  } catch (err) {
    throw new Error((err as Error).message.replace(/^RATE_LIMIT/, 'READ_RATE_LIMIT'));
  }
  return {
    statementTimeoutMs: parseDuration(raw.statementTimeout || DEFAULTS.statementTimeout, 'STATEMENT_TIMEOUT'),
    dbPoolSize: integerIn(raw.dbPoolSize, DEFAULTS.dbPoolSize, 'DB_POOL_SIZE', 2, 1000),
    maxPageDepth: integerIn(raw.maxPageDepth, DEFAULTS.maxPageDepth, 'MAX_PAGE_DEPTH', 100, 100_000_000),
    expensiveListConcurrency: integerIn(
      raw.expensiveListConcurrency,
      DEFAULTS.expensiveListConcurrency,
      'EXPENSIVE_LIST_CONCURRENCY',
      1,
      1000,
    ),
    expensiveListWaitMs: expensiveListWait(raw),
    exportConcurrency: integerIn(raw.exportConcurrency, DEFAULTS.exportConcurrency, 'EXPORT_CONCURRENCY', 1, 1000),
    exportStallTimeoutMs: parseDuration(raw.exportStallTimeout || DEFAULTS.exportStallTimeout, 'EXPORT_STALL_TIMEOUT'),
    exportMaxDurationMs: parseDuration(raw.exportMaxDuration || DEFAULTS.exportMaxDuration, 'EXPORT_MAX_DURATION'),
    rateLimitStore: oneOf(raw.rateLimitStore, DEFAULTS.rateLimitStore, 'RATE_LIMIT_STORE', ['database', 'memory'] as const),
    readRateLimit,
  };
}

/** EXPENSIVE_LIST_WAIT, at most STATEMENT_TIMEOUT: waiting longer for a place than any statement may run is not worth a client's time. */
function expensiveListWait(raw: RawConfig): number {
  const waitMs = parseDuration(raw.expensiveListWait || DEFAULTS.expensiveListWait, 'EXPENSIVE_LIST_WAIT');
  const statementTimeoutMs = parseDuration(raw.statementTimeout || DEFAULTS.statementTimeout, 'STATEMENT_TIMEOUT');
  return statementTimeoutMs > 0 ? Math.min(waitMs, statementTimeoutMs) : waitMs;
}
