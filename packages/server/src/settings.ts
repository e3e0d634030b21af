/**
 * Every setting of `benchmarks-server`, declared once; the commander options (program.ts), their
 * parsing (config.ts), `ServerConfig`'s type and the table of docs/configuration.md derive from it.
 * A value comes from the flag, else the environment variable, else the default (an empty value is
 * not given). Defaults are written as a user would write them and parsed so: none escapes the checks.
 */
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { LOG_FORMATS, LOG_LEVELS } from './core/logger.ts';
import { parseRateLimit } from './rate-limit/limiter.ts';

/** The commands of `benchmarks-server` that take settings. */
export type CommandName = 'start' | 'migrate' | 'import-origin';

const START: readonly CommandName[] = ['start'];
/** The settings every command that opens the database takes. */
const DATABASE = ['start', 'migrate', 'import-origin'] as const;

/** What every declaration holds, whatever its type. */
export interface Declaration {
  /** The value's placeholder in `--help` (`<port>`); absent: its type's (`<n>`, `<url>`, `<bool>`, ...), none for a switch. */
  arg?: string;
  /** The environment variable read when the flag is not given; absent: the key in upper snake case (`MAX_PAGE_DEPTH`). */
  env?: string;
  /** One short line for `--help` and the docs' table; explanations belong to docs/configuration.md. */
  help: string;
  /** Absent: `start` alone. */
  commands?: readonly CommandName[];
  /** The default, as a user would write it; absent: the setting is optional (its value `undefined`). */
  default?: string;
  /** The default as `--help` and the docs show it, where it is absent or depends on the host. */
  shown?: string;
  /** The field of `ServerConfig` it fills; absent: its key (a duration's: its key + `Ms`). */
  field?: string;
}

/** A declaration with its parser: `parse` gets a non-empty value (given or default) and throws one clear sentence. */
export interface Setting<T = unknown> extends Declaration {
  /** The key in kebab case (commander names the value of `--max-page-depth` `maxPageDepth`), added by `withFlags`. */
  flag: string;
  env: string;
  commands: readonly CommandName[];
  kind: string;
  parse(text: string): T;
}

// ---------------------------------------------------------------------------------------------
// Parsers: one per type; every message names the environment variable and quotes the value.

export function splitList(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Decimal digits only (no sign, exponent, fraction or hexadecimal), from `min` to `max`. */
export function parseInteger(text: string, name: string, bounds: { min: number; max?: number; noun?: string; auto?: string }): number {
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (Number.isSafeInteger(n) && n >= bounds.min && (bounds.max === undefined || n <= bounds.max)) return n;
  const range = bounds.max === undefined ? `>= ${bounds.min}` : `from ${bounds.min} to ${bounds.max}`;
  const auto = bounds.auto ? `, or auto (${bounds.auto})` : '';
  throw new Error(`${name} must be ${bounds.noun ?? 'an integer'} ${range}${auto}, not '${text}'.`);
}

export function parseBool(value: string, name: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new Error(`${name} must be true or false, not '${value}'.`);
}

export function parseUrl(value: string, name: string, protocols: readonly string[]): string {
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

// ---------------------------------------------------------------------------------------------
// One builder per type: each keeps the declaration's literal type, so `ServerConfig` is derived.

type Read<T> = (text: string, env: string) => T;

/**
 * `o` completed: `start`'s alone unless it names its commands; `arg`, the type's placeholder, unless it has its own;
 * `read`, the parser, given the environment variable its messages name (`withFlags` makes it `parse`).
 */
const declare = <const O extends Declaration, const K extends string, T>(o: O, kind: K, read: Read<T>, arg?: string) => ({
  commands: START,
  arg,
  ...o,
  kind,
  read,
});

const text = <const O extends Declaration>(o: O) => declare(o, 'text', (t) => t);

const path = <const O extends Declaration>(o: O) => declare(o, 'path', (t) => resolve(t), '<dir>');

const list = <const O extends Declaration>(o: O) => declare(o, 'list', (t) => splitList(t), '<list>');

const integer = <const O extends Declaration & { min: number; max?: number; noun?: string }>(o: O) =>
  declare(o, 'integer', (t, env) => parseInteger(t, env, o), '<n>');

const bool = <const O extends Declaration>(o: O) => declare(o, 'boolean', parseBool, '<bool>');

const duration = <const O extends Declaration>(o: O) => declare(o, 'duration', parseDuration, '<duration>');

const rate = <const O extends Declaration>(o: O) =>
  declare(
    o,
    'rate',
    (t, env) => {
      try {
        return parseRateLimit(t);
      } catch (err) {
        throw new Error((err as Error).message.replace(/^RATE_LIMIT/, env));
      }
    },
    '<rate>',
  );

const choice = <const O extends Declaration & { values: readonly string[] }>(o: O) =>
  declare(o, 'choice', (t, env): O['values'][number] => {
    if (!(o.values as readonly string[]).includes(t)) throw new Error(`${env} must be one of ${o.values.join(', ')}, not '${t}'.`);
    return t as O['values'][number];
  });

/** `own`: the path of a page the service serves itself, accepted as it is (the terms of use). */
const url = <const O extends Declaration & { protocols: readonly string[]; trimSlash?: boolean; own?: string }>(o: O) => {
  const parse = (t: string, env: string): string => {
    if (t === o.own) return t;
    const checked = parseUrl(t, env, o.protocols);
    return o.trimSlash ? checked.replace(/\/+$/, '') : checked;
  };
  return declare(o, 'url', parse, '<url>');
};

const urls = <const O extends Declaration & { protocols: readonly string[] }>(o: O) =>
  declare(o, 'urls', (t, env) => splitList(t).map((u) => parseUrl(u, env, o.protocols)), '<urls>');

/**
 * A flag without a value (`--demo`): on when given, or when its environment variable is set at all
 * (commander's rule for switches); `RawConfig` holds it as a boolean.
 */
const toggle = <const O extends Declaration>(o: O) => declare(o, 'switch', parseBool);

/** Most workers `--workers` accepts. */
export const MAX_WORKERS = 256;

const WEB = ['https:', 'http:'] as const;
const POSTGRES = ['postgres:', 'postgresql:'] as const;
/** One per core, at least 2 (the default of the concurrency limits). */
const perCore = String(Math.max(2, availableParallelism()));
const PER_CORE = 'one per core, at least 2';

type Declared = Declaration & Pick<Setting, 'commands' | 'kind'> & { read: Read<unknown> };
type Parsed<S> = S extends { read: Read<infer T> } ? T : never;

/** Adds each declaration's flag, its variable unless it names its own, its parser, and a duration's field (its key + `Ms`). */
const withFlags = <S extends Record<string, Declared>>(declared: S) =>
  Object.fromEntries(
    Object.entries(declared).map(([key, s]) => {
      const flag = `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      const env = s.env ?? key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
      const parse = (text: string) => s.read(text, env);
      return [key, { ...s, flag, env, parse, ...(s.kind === 'duration' ? { field: `${key}Ms` } : {}) }];
    }),
  ) as { [K in keyof S]: S[K] & { flag: string; env: string; parse(text: string): Parsed<S[K]> } };

/** Every setting, in the order of `--help` and of the docs' table. */
export const SETTINGS = withFlags({
  // The listener.
  host: text({ arg: '<host>', help: 'address to listen on', default: '127.0.0.1' }),
  port: integer({
    arg: '<port>',
    help: 'port to listen on; 0: any free port',
    default: '8080',
    min: 0,
    max: 65535,
  }),
  publicUrl: url({
    help: 'public base URL (scheme, host, optional path prefix) behind a reverse proxy',
    shown: 'request origin',
    protocols: WEB,
    trimSlash: true,
  }),
  trustProxy: bool({
    help: 'honour X-Forwarded-Proto/Host/Prefix/For from the reverse proxy',
    default: 'false',
  }),
  corsOrigins: list({
    help: "comma-separated browser origins allowed by CORS, or '*'",
    default: '',
    shown: 'none (CORS off)',
  }),
  workers: declare(
    {
      arg: '<n>',
      help: `processes serving the port (node:cluster), 1 to ${MAX_WORKERS}, or auto: one per core`,
      /** One process: no cluster primary. */
      default: '1',
    },
    'workers',
    (t, env): number =>
      t.trim().toLowerCase() === 'auto'
        ? Math.min(MAX_WORKERS, availableParallelism())
        : parseInteger(t, env, { min: 1, max: MAX_WORKERS, auto: 'one per core' }),
  ),

  // The database.
  databaseUrl: url({
    help: 'external PostgreSQL; without it an embedded PostgreSQL runs under the data directory',
    commands: DATABASE,
    shown: 'embedded',
    protocols: POSTGRES,
  }),
  /** Directly, or through a session-mode pool: needed when `databaseUrl` is PgBouncer in transaction mode (db/own-connection.ts). */
  databaseDirectUrl: url({
    help: 'the database of --database-url without PgBouncer, for what needs a session of its own',
    commands: DATABASE,
    shown: '--database-url',
    protocols: POSTGRES,
  }),
  databaseReadUrl: urls({
    help: 'comma-separated read replicas (streaming standbys of the primary) that serve reads',
    commands: DATABASE,
    default: '',
    shown: 'none',
    field: 'databaseReadUrls',
    protocols: POSTGRES,
  }),
  /** Long enough for a replica catching up after a burst of uploads; short enough that a stuck one is left soon. */
  maxReplicaLag: duration({
    help: 'a replica further behind the primary than this gets no reads',
    commands: DATABASE,
    default: '10s',
  }),
  preparedStatements: bool({
    help: 'prepare frequent statements by name on each connection; false behind PgBouncer in transaction mode',
    commands: DATABASE,
    default: 'true',
  }),
  dataDir: path({
    env: 'BENCHMARKS_DATA_DIR',
    help: "where the embedded database and the demo provider's keys live",
    commands: DATABASE,
    default: '.benchmarks',
  }),
  databasePort: integer({
    arg: '<port>',
    help: 'port of the embedded PostgreSQL on 127.0.0.1; 0: any free port',
    commands: DATABASE,
    default: '0',
    min: 0,
    max: 65535,
  }),
  /** initdb and a start take 1-3 s; a cluster recovering after a crash replays its WAL first. */
  databaseStartTimeout: duration({
    help: 'longest the embedded PostgreSQL may take to be created and started; 0: no limit',
    commands: DATABASE,
    default: '60s',
  }),
  /** Long enough for a database container started alongside the server to come up. */
  databaseConnectTimeout: duration({
    help: 'how long the first connection is retried while the database is unreachable; 0: no limit',
    commands: DATABASE,
    default: '30s',
  }),
  /** The migrations of an empty database take under a second; a migration rewriting a large table takes longer. */
  migrationTimeout: duration({
    help: "longest the migrations may take, another process's turn included; 0: no limit",
    commands: DATABASE,
    default: '5m',
  }),
  /** Under a lock, once for all the processes sharing the database; false: waits up to `migrationTimeoutMs`, then fails. */
  migrate: bool({
    help: 'apply pending migrations at start; false (or --no-migrate): wait for another process to',
    default: 'true',
  }),
  dbPoolSize: integer({
    help: 'connections of the application pool',
    default: '10',
    min: 2,
    max: 1000,
  }),
  /** About twice the slowest statement the benchmark measured at a million results (p99 8.5 s: a search, 32 connections on 2 cores). */
  statementTimeout: duration({
    help: "longest a request's database statement may run (+2 s if the database is frozen); 0: no limit",
    default: '15s',
  }),

  // Identity.
  oidcIssuer: urls({
    env: 'OIDC_ISSUERS',
    help: 'comma-separated trusted OpenID issuers; none: every token is refused',
    default: '',
    shown: 'none',
    field: 'oidcIssuers',
    protocols: WEB,
  }),
  oidcAudience: text({
    arg: '<aud>',
    help: 'required audience (aud) of JWT access tokens',
    shown: 'none',
  }),
  /** Opaque tokens are never sent to another issuer; with several trusted and none named, they are refused (auth/verifier.ts). */
  oidcOpaqueIssuer: url({
    help: 'the trusted issuer whose userinfo endpoint checks opaque (non-JWT) tokens',
    shown: 'the only trusted issuer',
    protocols: WEB,
  }),
  /** Public client id for the device authorization grant, advertised to the CLI by GET /auth/config. */
  oidcDeviceClientId: text({
    arg: '<id>',
    help: 'public client id the CLI logs in with (device authorization grant)',
    shown: 'none',
  }),
  adminEntitlement: list({
    env: 'ADMIN_ENTITLEMENTS',
    help: 'comma-separated entitlements that make a registered user an administrator',
    default: '',
    shown: 'none',
    field: 'adminEntitlements',
  }),

  // What a request may cost.
  bodyLimit: integer({
    arg: '<bytes>',
    help: 'largest request body, in bytes',
    default: '1048576',
    field: 'bodyLimitBytes',
    min: 1024,
    noun: 'a number of bytes',
  }),
  /** 270 and 90 times the demo's c-ray schema (969 bytes, 54 values); at both limits a schema compiles in about 1 s (in a worker). */
  maxSchemaBytes: integer({
    arg: '<bytes>',
    help: 'largest benchmark json_schema, in bytes of JSON',
    commands: ['start', 'import-origin'],
    default: String(256 * 1024),
    min: 1024,
    max: 64 * 1024 * 1024,
    noun: 'a number of bytes',
  }),
  maxSchemaNodes: integer({
    help: 'most values (object members and array elements) in a benchmark json_schema',
    commands: ['start', 'import-origin'],
    default: '5000',
    min: 10,
    max: 1_000_000,
  }),
  /** Per client: a burst of 1200 writes, then 20 a second (a CI job uploading a thousand results is never slowed). */
  rateLimit: rate({
    help: 'writes (POST, PUT, PATCH, DELETE) per client, as <requests>/<window>; 0: no limit',
    default: '1200/60s',
  }),
  /** None: a limit per address throttles everyone behind one NAT; a read's work is bounded otherwise (docs/decisions.md). */
  readRateLimit: rate({
    help: 'reads (GET) per client, as <requests>/<window>, e.g. 600/60s; 0: no limit',
    default: '0',
  }),
  /** Shared: N processes give each client one budget, not N. */
  rateLimitStore: choice({
    arg: '<store>',
    help: 'where rate limits keep their buckets: database (shared by every process) or memory (per process)',
    default: 'database',
    values: ['database', 'memory'],
  }),
  totalsCacheSeconds: integer({
    arg: '<s>',
    help: 'how long totals of large result lists and comparisons are remembered; 0: never',
    default: '30',
    min: 0,
    max: 3600,
    noun: 'a number of seconds',
  }),
  /** One per core, at least 2: enough to keep the CPU and PostgreSQL busy with batches. */
  largeBodyConcurrency: integer({
    help: 'requests with a body of 64 KB or more (batches) handled at once; the others wait',
    default: perCore,
    shown: PER_CORE,
    min: 1,
    max: 1000,
  }),
  /** Enough for anyone reporting real problems; a flood of claims cannot hide much of the catalogue. */
  maxOpenClaims: integer({
    help: 'claims one user may have waiting for review at once; 0: no limit',
    default: '50',
    min: 0,
    max: 1_000_000,
  }),
  maxWatchesPerUser: integer({
    help: 'watches one user may hold; 0: no limit',
    default: '100',
    min: 0,
    max: 1_000_000,
  }),
  /** Often enough that a change point is a record well within a minute, rare enough to coalesce bursts. */
  watchRefreshInterval: integer({
    arg: '<seconds>',
    help: 'each watched series is segmented again at most once per this many seconds after writes',
    default: '10',
    min: 1,
    max: 50,
    noun: 'a number of seconds',
  }),
  /** Elasticsearch's max_result_window: 100 pages of 100. */
  maxPageDepth: integer({
    help: 'how deep paging by number may reach: page × per_page at most this; cursors go deeper',
    default: '10000',
    min: 100,
    max: 100_000_000,
  }),
  /** One per core, at least 2: each holds one connection and most of a core of PostgreSQL. */
  expensiveListConcurrency: integer({
    help: 'expensive result lists and comparisons run at once per process; the others wait their turn',
    default: perCore,
    shown: PER_CORE,
    min: 1,
    max: 1000,
  }),
  /** 32 connections of comparisons (0.5 s each at a million results) served two at a time, within the SDK's 30 s timeout. */
  expensiveListWait: duration({
    help: 'how long an expensive list waits for its turn before 503, at most --statement-timeout; 0: not at all',
    default: '10s',
  }),
  /** One per core, at least 2: each holds a database connection of its own for as long as its client reads. */
  exportConcurrency: integer({
    help: 'exports streaming at once per process, each on a connection of its own; one more gets 503',
    default: perCore,
    shown: PER_CORE,
    min: 1,
    max: 1000,
  }),
  /** A reader must take 64 KB in this time (2 KB/s); one that stops frees its place and connection within it. */
  exportStallTimeout: duration({
    help: 'an export whose client accepts no data for this long is cut off; 0: never',
    default: '30s',
  }),
  /** A million results export in about a minute (docs/performance.md); a snapshot held longer holds back vacuum. */
  exportMaxDuration: duration({
    help: 'the longest an export may stream before it is cut off; 0: no limit',
    default: '60m',
  }),

  // The catalogue.
  /** CONTRACT.md: tags are reviewed like the rest of the catalogue. */
  reviewTags: bool({
    help: "tags users create wait for an administrator's review; false: approved at once",
    default: 'true',
  }),
  termsVersion: text({
    arg: '<v>',
    help: 'version of the terms of use users accept at registration',
    default: '2024-01',
  }),
  /** Served by the service itself from packages/server/assets/terms-of-use.md. */
  termsUrl: url({
    help: 'where the terms of use are published',
    default: '/terms-of-use',
    protocols: WEB,
    own: '/terms-of-use',
  }),

  // Webhooks.
  /** Loopback and private addresses reach the operator's own network: off unless the operator says so (tests, a private deployment). */
  webhookAllowPrivate: bool({
    help: 'webhooks may deliver to loopback and private addresses (never to link-local and metadata ones)',
    default: 'false',
  }),
  maxWebhooksPerUser: integer({
    help: 'webhook endpoints one user may have',
    default: '10',
    min: 1,
    max: 1000,
  }),
  /** Standard Webhooks: a receiver should answer within 15 s. */
  webhookTimeout: duration({
    help: 'longest a webhook receiver may take to answer an attempt',
    default: '15s',
  }),
  webhookAttempts: integer({
    help: 'fewest attempts of a failing delivery before it fails (with --webhook-retry-period)',
    default: '8',
    min: 1,
    max: 1000,
  }),
  webhookRetryPeriod: duration({
    help: 'shortest time a failing delivery is retried before it fails (with --webhook-attempts)',
    default: '1440m',
    shown: '1440m (24 h)',
  }),
  /** Full jitter: the n-th retry waits a random time up to this × 2^(n-1), at most 6 h. */
  webhookRetryDelay: duration({
    help: "the first retry's longest wait; each next one's doubles, up to 6 h",
    default: '5s',
  }),
  webhookPollInterval: duration({
    help: 'how often each process looks for new alert events and deliveries due; 0: this one delivers none',
    default: '1s',
  }),

  // Logs.
  logLevel: choice({
    arg: '<level>',
    help: 'the least level logged: debug, info, warn, error or silent',
    commands: DATABASE,
    default: 'info',
    values: LOG_LEVELS,
  }),
  /** Readable on a terminal, JSON lines for log collectors. */
  logFormat: choice({
    arg: '<format>',
    help: 'pretty (readable lines), json (one object per line) or auto: pretty on a terminal only',
    commands: DATABASE,
    default: 'auto',
    values: LOG_FORMATS,
  }),
  /** Operators see each request at the default level. */
  accessLog: bool({
    help: 'one line per request at info; false: at debug',
    default: 'true',
  }),
  /** PostgreSQL's warnings, errors and fatal messages; its routine LOG lines (checkpoints, start and stop) at `info`. */
  databaseLogLevel: choice({
    arg: '<level>',
    help: "the least level of the embedded PostgreSQL's own log lines: debug, info, warn, error or silent",
    commands: DATABASE,
    default: 'warn',
    values: LOG_LEVELS,
  }),

  // The demo.
  demo: toggle({
    env: 'BENCHMARKS_DEMO',
    help: 'embedded database, built-in OpenID provider and demo data (loopback only)',
    default: 'false',
    shown: 'off',
  }),
  demoIssuerPort: integer({
    arg: '<port>',
    env: 'BENCHMARKS_DEMO_ISSUER_PORT',
    help: 'with --demo: port of the built-in OpenID provider, which the tokens it prints name',
    shown: 'the last one, else a free one',
    min: 1,
    max: 65535,
  }),
  demoSeed: bool({
    env: 'BENCHMARKS_DEMO_SEED',
    help: 'with --demo: seed the sample catalogue into a database never seeded; false: start empty',
    default: 'true',
  }),
});

export type Settings = typeof SETTINGS;
export type SettingKey = keyof Settings;

type FieldOf<K, S> = S extends { field: infer F extends string } ? F : S extends { kind: 'duration' } ? `${K & string}Ms` : K;
type Defaulted<S> = S extends { default: string } ? true : false;

/** The values of the settings, by field: optional where the setting has no default. */
export type SettingValues = {
  [K in keyof Settings as Defaulted<Settings[K]> extends true ? FieldOf<K, Settings[K]> : never]: Parsed<Settings[K]>;
} & {
  [K in keyof Settings as Defaulted<Settings[K]> extends true ? never : FieldOf<K, Settings[K]>]?: Parsed<Settings[K]>;
};

/** Kinds whose defaults code reads as values (counts, switches, names); the others' as the text users write. */
const VALUE_DEFAULTS = new Set(['integer', 'workers', 'boolean', 'switch', 'choice']);
type DefaultOf<S> = S extends { kind: 'integer' | 'workers' | 'boolean' | 'switch' | 'choice' } ? Parsed<S> : string;

/** The defaults by key: numbers for counts, booleans for switches, the text a user would write for durations, rates and the rest. */
export type Defaults = { [K in keyof Settings as Defaulted<Settings[K]> extends true ? K : never]: DefaultOf<Settings[K]> };

export function defaultsOf(): Defaults {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [SettingKey, Setting][]) {
    if (s.default !== undefined) out[key] = VALUE_DEFAULTS.has(s.kind) ? s.parse(s.default) : s.default;
  }
  return out as Defaults;
}

/** What users give, by key (commander's attribute names): text from a flag or the environment. */
export type RawSettings = Partial<Record<Exclude<SettingKey, 'demo'>, string>> & { demo?: boolean };

/** The settings `command` takes, in declaration order. */
export function settingsOf(command: CommandName): [SettingKey, Setting][] {
  return (Object.entries(SETTINGS) as [SettingKey, Setting][]).filter(([, s]) => s.commands.includes(command));
}

/** The default as help and docs show it. */
export function shownDefault(s: Declaration): string {
  return s.shown ?? (s.default === undefined || s.default === '' ? 'none' : s.default);
}

/** Parses every setting from `raw`: the given value, else the default, else absent. */
export function readSettings(raw: RawSettings): SettingValues {
  const out: Record<string, unknown> = {};
  for (const [key, s] of Object.entries(SETTINGS) as [SettingKey, Setting][]) {
    const field = s.field ?? key;
    if (key === 'demo') {
      out[field] = Boolean(raw.demo);
      continue;
    }
    const given = raw[key];
    const value = given === undefined || given === '' ? s.default : given;
    if (value !== undefined) out[field] = s.parse(value);
  }
  return out as SettingValues;
}
