/**
 * The settings (src/settings.ts): each one read from its flag and from its environment variable,
 * the flag before the variable before the default, the defaults users rely on, the precise message
 * of every bad value, `--help` of each command, and the table of docs/configuration.md. No server is
 * started: commander parses real arguments and a real environment into what `start` would run with.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig, DEFAULTS, type ServerConfig } from '../src/config.ts';
import { configOf, program, settingOptions } from '../src/program.ts';
import { type CommandName, SETTINGS, type Setting, type SettingKey, settingsOf } from '../src/settings.ts';
import { settingsTable, TABLE_BEGIN, TABLE_END, withSettingsTable } from '../src/settings-docs.ts';

const entries = Object.entries(SETTINGS) as [SettingKey, Setting][];
const ENV_NAMES = entries.map(([, s]) => s.env);

/** What `benchmarks-server <command> ...args` would run with, in an environment of exactly `env` (as far as settings go). */
function parse(args: string[], env: Record<string, string> = {}, command: CommandName = 'start'): ServerConfig {
  const saved = new Map(ENV_NAMES.map((name) => [name, process.env[name]]));
  for (const name of ENV_NAMES) delete process.env[name];
  Object.assign(process.env, env);
  try {
    const cmd = new Command('benchmarks-server').exitOverride().configureOutput({ writeErr: () => {} });
    for (const option of settingOptions(command)) cmd.addOption(option);
    cmd.action(() => {});
    cmd.parse(args, { from: 'user' });
    return configOf(cmd.opts());
  } finally {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

const fieldOf = (key: SettingKey, s: Setting) => (s.field ?? key) as keyof ServerConfig;

/**
 * Two values of each setting, as text and as `ServerConfig` holds them: the first differs from the
 * default, the second from the first. A setting of a type without samples fails the tests.
 */
function sample(key: SettingKey, s: Setting, i: 0 | 1): { text: string; value: unknown } {
  const web = (n: number) => `https://issuer${n}.example/realms/r`;
  const declared = s as Setting & { min?: number; max?: number; values?: readonly string[]; protocols?: readonly string[] };
  switch (s.kind) {
    case 'text':
      return { text: `sample-${i}`, value: `sample-${i}` };
    case 'path':
      return { text: `dir-${i}`, value: resolve(`dir-${i}`) };
    case 'list':
      return { text: `a${i}, b${i}`, value: [`a${i}`, `b${i}`] };
    case 'integer':
    case 'workers': {
      const n = (declared.min ?? 1) + 2 + i;
      return { text: String(n), value: n };
    }
    case 'boolean': {
      const value = i === 0 ? s.default !== 'true' : s.default === 'true';
      return { text: i === 0 ? (value ? 'yes' : 'no') : String(value), value };
    }
    case 'duration':
      return { text: `${1234 + i}ms`, value: 1234 + i };
    case 'rate':
      return { text: `${7 + i}/9s`, value: { max: 7 + i, windowMs: 9000 } };
    case 'choice': {
      const others = declared.values!.filter((v) => v !== s.default);
      const value = i === 0 ? others[0] : (others[1] ?? s.default);
      return { text: value!, value };
    }
    case 'url': {
      if (key === 'oidcOpaqueIssuer') return { text: web(i), value: web(i) };
      const base = declared.protocols![0] === 'postgres:' ? `postgresql://u@db${i}.example/benchmarks` : `https://site${i}.example/x`;
      // The public URL loses its trailing slashes.
      return key === 'publicUrl' ? { text: `${base}/`, value: base } : { text: base, value: base };
    }
    case 'urls': {
      const one = (n: number) => (declared.protocols![0] === 'postgres:' ? `postgresql://u@replica${n}.example/benchmarks` : web(n));
      return { text: `${one(i)},${one(i + 2)}`, value: [one(i), one(i + 2)] };
    }
    default:
      throw new Error(`no sample for ${key}, a setting of kind ${s.kind}: add one to settings.test.ts`);
  }
}

/** What a setting needs of the others to be accepted at all. */
function context(key: SettingKey): string[] {
  if (key === 'databaseDirectUrl') return ['--database-url', 'postgresql://u@primary.example/benchmarks'];
  if (key === 'oidcOpaqueIssuer')
    return ['--oidc-issuer', `${sample(key, SETTINGS.oidcOpaqueIssuer, 0).text},${sample(key, SETTINGS.oidcOpaqueIssuer, 1).text}`];
  return [];
}

const valued = entries.filter(([key]) => key !== 'demo');

test('every declaration: a kebab flag whose commander key is the setting, an upper-case variable, one short line of help, a default that parses', () => {
  const camel = (flag: string) => flag.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  for (const [key, s] of entries) {
    assert.match(s.flag, /^--[a-z]+(-[a-z]+)*$/, key);
    assert.is(camel(s.flag), key, `${s.flag}: commander names its value ${camel(s.flag)}`);
    assert.match(s.env, /^[A-Z][A-Z0-9_]*$/, key);
    assert.ok(!s.help.includes('\n') && s.help.length <= 100, `${key}: help of one line, at most 100 characters (${s.help.length})`);
    assert.ok(s.commands.includes('start'), `${key}: start takes every setting`);
    if (s.default) s.parse(s.default);
  }
  assert.is(new Set(entries.map(([, s]) => s.flag)).size, entries.length, 'flags are unique');
  assert.is(new Set(ENV_NAMES).size, entries.length, 'environment variables are unique');
});

test('every setting is read from its flag', () => {
  for (const [key, s] of valued) {
    const { text, value } = sample(key, s, 0);
    assert.equal(parse([...context(key), s.flag, text])[fieldOf(key, s)], value, `${s.flag} ${text}`);
  }
  assert.is(parse(['--demo']).demo, true);
});

test('every setting is read from its environment variable', () => {
  for (const [key, s] of valued) {
    const { text, value } = sample(key, s, 0);
    assert.equal(parse(context(key), { [s.env]: text })[fieldOf(key, s)], value, `${s.env}=${text}`);
  }
  assert.is(parse([], { BENCHMARKS_DEMO: '1' }).demo, true);
  assert.is(parse([]).demo, false);
});

test('the flag wins over the environment variable, the variable over the default; an empty value is not given', () => {
  const defaults = parse([]);
  for (const [key, s] of valued) {
    const [env, flag] = [sample(key, s, 0), sample(key, s, 1)];
    const field = fieldOf(key, s);
    assert.equal(parse([...context(key), s.flag, flag.text], { [s.env]: env.text })[field], flag.value, `${s.flag} over ${s.env}`);
    assert.equal(parse(context(key), { [s.env]: env.text })[field], env.value, `${s.env} over the default`);
    assert.equal(parse(context(key), { [s.env]: '' })[field], parse(context(key))[field], `${s.env}= is the default`);
    if (context(key).length === 0) assert.equal(parse([])[field], defaults[field], `${key}: no flag, no variable`);
  }
});

test('the defaults, as users know them', () => {
  const perCore = Math.max(2, availableParallelism());
  const expected: ServerConfig = {
    host: '127.0.0.1',
    port: 8080,
    trustProxy: false,
    corsOrigins: [],
    workers: 1,
    databaseReadUrls: [],
    maxReplicaLagMs: 10_000,
    preparedStatements: true,
    dataDir: resolve('.benchmarks'),
    databasePort: 0,
    databaseStartTimeoutMs: 60_000,
    databaseConnectTimeoutMs: 30_000,
    migrationTimeoutMs: 300_000,
    migrate: true,
    dbPoolSize: 10,
    statementTimeoutMs: 15_000,
    oidcIssuers: [],
    adminEntitlements: [],
    bodyLimitBytes: 1_048_576,
    maxSchemaBytes: 262_144,
    maxSchemaNodes: 5000,
    rateLimit: { max: 1200, windowMs: 60_000 },
    readRateLimit: null,
    rateLimitStore: 'database',
    totalsCacheSeconds: 30,
    largeBodyConcurrency: perCore,
    maxOpenClaims: 50,
    maxWatchesPerUser: 100,
    watchRefreshInterval: 10,
    maxPageDepth: 10_000,
    expensiveListConcurrency: perCore,
    expensiveListWaitMs: 10_000,
    exportConcurrency: perCore,
    exportStallTimeoutMs: 30_000,
    exportMaxDurationMs: 3_600_000,
    reviewTags: true,
    termsVersion: '2024-01',
    termsUrl: '/terms-of-use',
    webhookAllowPrivate: false,
    maxWebhooksPerUser: 10,
    webhookTimeoutMs: 15_000,
    webhookAttempts: 8,
    webhookRetryPeriodMs: 86_400_000,
    webhookRetryDelayMs: 5000,
    webhookPollIntervalMs: 1000,
    logLevel: 'info',
    logFormat: 'auto',
    accessLog: true,
    databaseLogLevel: 'warn',
    demo: false,
    demoSeed: true,
  };
  assert.equal(buildConfig({}), expected);
  assert.equal(parse([]), expected, 'the command line without flags or variables');
  assert.equal(parse([], {}, 'migrate').port, 8080, 'migrate takes no --port: the default');
  assert.is(DEFAULTS.maxSchemaBytes, 262_144);
  assert.is(DEFAULTS.databaseConnectTimeout, '30s');
  assert.is(DEFAULTS.expensiveListConcurrency, perCore);
});

/** A bad value, its exact message, and whether the flag or the variable gives it (both are tried). */
const BAD: [SettingKey, string, string][] = [
  ['port', 'eighty', "PORT must be an integer from 0 to 65535, not 'eighty'."],
  ['port', '65536', "PORT must be an integer from 0 to 65535, not '65536'."],
  ['databasePort', '70000', "DATABASE_PORT must be an integer from 0 to 65535, not '70000'."],
  ['demoIssuerPort', '0', "BENCHMARKS_DEMO_ISSUER_PORT must be an integer from 1 to 65535, not '0'."],
  ['bodyLimit', '1023', "BODY_LIMIT must be a number of bytes >= 1024, not '1023'."],
  ['maxSchemaBytes', '1k', "MAX_SCHEMA_BYTES must be a number of bytes from 1024 to 67108864, not '1k'."],
  ['maxSchemaNodes', '9', "MAX_SCHEMA_NODES must be an integer from 10 to 1000000, not '9'."],
  ['totalsCacheSeconds', '7200', "TOTALS_CACHE_SECONDS must be a number of seconds from 0 to 3600, not '7200'."],
  ['largeBodyConcurrency', '0', "LARGE_BODY_CONCURRENCY must be an integer from 1 to 1000, not '0'."],
  ['maxOpenClaims', '1.5', "MAX_OPEN_CLAIMS must be an integer from 0 to 1000000, not '1.5'."],
  ['dbPoolSize', '1', "DB_POOL_SIZE must be an integer from 2 to 1000, not '1'."],
  ['maxPageDepth', 'deep', "MAX_PAGE_DEPTH must be an integer from 100 to 100000000, not 'deep'."],
  ['expensiveListConcurrency', '1e3', "EXPENSIVE_LIST_CONCURRENCY must be an integer from 1 to 1000, not '1e3'."],
  ['exportConcurrency', '-1', "EXPORT_CONCURRENCY must be an integer from 1 to 1000, not '-1'."],
  ['workers', 'many', "WORKERS must be an integer from 1 to 256, or auto (one per core), not 'many'."],
  ['logLevel', 'loud', "LOG_LEVEL must be one of debug, info, warn, error, silent, not 'loud'."],
  ['databaseLogLevel', 'chatty', "DATABASE_LOG_LEVEL must be one of debug, info, warn, error, silent, not 'chatty'."],
  ['logFormat', 'loud', "LOG_FORMAT must be one of auto, pretty, json, not 'loud'."],
  ['rateLimitStore', 'redis', "RATE_LIMIT_STORE must be one of database, memory, not 'redis'."],
  ['trustProxy', 'maybe', "TRUST_PROXY must be true or false, not 'maybe'."],
  ['preparedStatements', 'sometimes', "PREPARED_STATEMENTS must be true or false, not 'sometimes'."],
  ['migrate', 'later', "MIGRATE must be true or false, not 'later'."],
  ['reviewTags', 'sometimes', "REVIEW_TAGS must be true or false, not 'sometimes'."],
  ['accessLog', 'loud', "ACCESS_LOG must be true or false, not 'loud'."],
  ['demoSeed', 'twice', "BENCHMARKS_DEMO_SEED must be true or false, not 'twice'."],
  ['databaseUrl', 'db.internal', "DATABASE_URL is not a valid URL: 'db.internal'."],
  ['databaseUrl', 'mysql://db/benchmarks', "DATABASE_URL must use postgres: or postgresql:, not 'mysql:'."],
  ['databaseReadUrl', 'postgresql://a/b,http://c/d', "DATABASE_READ_URL must use postgres: or postgresql:, not 'http:'."],
  ['publicUrl', 'ftp://example.org', "PUBLIC_URL must use https: or http:, not 'ftp:'."],
  ['oidcIssuer', 'issuer', "OIDC_ISSUERS is not a valid URL: 'issuer'."],
  ['termsUrl', 'terms', "TERMS_URL is not a valid URL: 'terms'."],
  [
    'statementTimeout',
    'soon',
    "STATEMENT_TIMEOUT must be a duration such as 15s, 500ms, 2m or 15000 (milliseconds), at most 24h, or 0 for no limit; not 'soon'.",
  ],
  [
    'exportMaxDuration',
    '25h',
    "EXPORT_MAX_DURATION must be a duration such as 15s, 500ms, 2m or 15000 (milliseconds), at most 24h, or 0 for no limit; not '25h'.",
  ],
  [
    'readRateLimit',
    'lots',
    "READ_RATE_LIMIT must be '<requests>/<window>' such as 120/60s or 600/10m (window at most 24h), or 0 to disable, not 'lots'.",
  ],
  [
    'rateLimit',
    '120/2d',
    "RATE_LIMIT must be '<requests>/<window>' such as 120/60s or 600/10m (window at most 24h), or 0 to disable, not '120/2d'.",
  ],
];

function failure(args: string[], env: Record<string, string> = {}): string {
  try {
    parse(args, env);
  } catch (err) {
    assert.is((err as Error).name, 'ConfigurationError', (err as Error).message);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${args.join(' ')} ${JSON.stringify(env)}`);
}

test('a bad value gives one precise sentence naming the variable and the value, from the flag as from the variable', () => {
  for (const [key, text, message] of BAD) {
    const s: Setting = SETTINGS[key];
    assert.is(failure([s.flag, text]), message, `${s.flag} ${text}`);
    assert.is(failure([], { [s.env]: text }), message, `${s.env}=${text}`);
  }
});

test('every integer setting refuses what is not a decimal integer within its bounds, naming them', () => {
  const integers = entries.filter(([, s]) => s.kind === 'integer') as [SettingKey, Setting & { min: number; max?: number }][];
  assert.ok(integers.length >= 13, `${integers.length} integer settings`);
  for (const [key, s] of integers) {
    const bad = [
      'x',
      '1.5',
      '1e3',
      '0x10',
      '+5',
      ' ',
      String(s.min - 1),
      ...(s.max === undefined ? ['9007199254740993'] : [String(s.max + 1)]),
    ];
    for (const text of bad.filter((t) => t !== '-1' || s.min === 0)) {
      if (text.trim() === '') continue; // an empty value is not given
      const message = failure([...context(key), s.flag, text]);
      assert.ok(message.startsWith(`${s.env} must be `) && message.endsWith(` not '${text}'.`), `${s.flag} ${text}: ${message}`);
      assert.ok(message.includes(`${s.min}`), `${message} names the least value`);
    }
    assert.is(parse([...context(key), s.flag, ` ${s.min} `])[fieldOf(key, s)], s.min, `${s.flag}: the least value, spaces around it`);
    if (s.max !== undefined) assert.is(parse([s.flag, String(s.max)])[fieldOf(key, s)], s.max, `${s.flag}: the greatest value`);
  }
});

test('checks across settings: direct URL, opaque issuer, embedded port, distinct ports, the wait within the statement timeout', () => {
  assert.is(
    failure(['--database-direct-url', 'postgresql://db/benchmarks']),
    'DATABASE_DIRECT_URL names the database of DATABASE_URL reached without PgBouncer: set DATABASE_URL too.',
  );
  assert.is(
    failure(['--oidc-issuer', 'https://a.example', '--oidc-opaque-issuer', 'https://b.example']),
    "OIDC_OPAQUE_ISSUER must be one of the trusted issuers (OIDC_ISSUERS), not 'https://b.example'.",
  );
  assert.is(
    parse(['--oidc-issuer', 'https://a.example', '--oidc-opaque-issuer', 'https://a.example/']).oidcOpaqueIssuer,
    'https://a.example/',
  );
  assert.is(
    parse(['--demo', '--oidc-opaque-issuer', 'https://demo.example']).oidcOpaqueIssuer,
    'https://demo.example',
    'the demo trusts its own',
  );
  assert.is(
    failure(['--database-url', 'postgresql://db/benchmarks', '--database-port', '5433']),
    'DATABASE_PORT is the port of the embedded PostgreSQL: leave it out with DATABASE_URL.',
  );
  assert.is(failure(['--port', '8080', '--database-port', '8080']), 'PORT and DATABASE_PORT must differ, not both 8080.');
  assert.is(
    failure(['--demo', '--database-port', '9000'], { BENCHMARKS_DEMO_ISSUER_PORT: '9000' }),
    'DATABASE_PORT and BENCHMARKS_DEMO_ISSUER_PORT must differ, not both 9000.',
  );
  assert.is(
    parse(['--database-port', '9000'], { BENCHMARKS_DEMO_ISSUER_PORT: '9000' }).databasePort,
    9000,
    'no demo, no provider port taken',
  );
  assert.is(parse(['--port', '0', '--database-port', '0']).port, 0, 'two free ports do not clash');
  assert.is(parse(['--expensive-list-wait', '1m']).expensiveListWaitMs, 15_000, 'at most the statement timeout');
  assert.is(parse(['--expensive-list-wait', '1m', '--statement-timeout', '0']).expensiveListWaitMs, 60_000, 'no statement timeout, no cap');
});

test('--no-migrate and --migrate false; WORKERS=auto; a switch without a value', () => {
  assert.is(parse(['--no-migrate']).migrate, false);
  assert.is(parse(['--migrate', 'false']).migrate, false);
  assert.is(parse([], { MIGRATE: 'no' }).migrate, false);
  assert.is(parse([], { WORKERS: 'auto' }).workers, Math.min(256, availableParallelism()));
  assert.throws(() => parse(['--demo', 'yes']), /too many arguments|unknown command/i, '--demo takes no value');
});

test('`benchmarks-server <command> --help` lists every setting the command takes, with its variable and default', () => {
  const cmd = program();
  for (const name of ['start', 'migrate', 'import-origin'] as const) {
    const command = cmd.commands.find((c) => c.name() === name)!;
    const help = command.helpInformation();
    const takes = settingsOf(name);
    for (const [key, s] of entries) {
      const listed = help.includes(`${s.flag}${s.arg ? ` ${s.arg}` : ''} `) && help.includes(`env: ${s.env})`);
      assert.is(
        listed,
        takes.some(([k]) => k === key),
        `${name} --help and ${s.flag}`,
      );
      const option = command.options.find((o) => o.long === s.flag);
      assert.is(option?.envVar, takes.some(([k]) => k === key) ? s.env : undefined, `${name} ${s.flag}`);
    }
    for (const [, s] of takes)
      assert.ok(help.includes(`(default: ${s.shown ?? (s.default || 'none')})`), `${name} --help: the default of ${s.flag}`);
  }
  const start = cmd.commands.find((c) => c.name() === 'start')!;
  assert.ok(start.options.some((o) => o.long === '--no-migrate'));
  assert.ok(settingsOf('start').length >= 49, `${settingsOf('start').length} settings`);
  const importOrigin = cmd.commands.find((c) => c.name() === 'import-origin')!;
  for (const own of ['--from', '--source-timezone', '--batch-size', '--json', '--report']) {
    assert.ok(
      importOrigin.options.some((o) => o.long === own),
      `import-origin ${own}`,
    );
  }
});

test('docs/configuration.md: its settings table is what the declarations give (npm run gen:settings)', () => {
  const doc = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');
  assert.is(doc, withSettingsTable(doc), 'the table is stale: run `npm run gen:settings` and commit docs/configuration.md');
  const table = settingsTable();
  for (const [, s] of entries) assert.ok(table.includes(`| \`${s.env}\` |`), s.env);
  assert.ok(doc.includes(`${TABLE_BEGIN}\n${table}\n${TABLE_END}`));
  // A stale table is noticed: one changed cell makes the document differ.
  assert.is.not(doc.replace('| `8080` |', '| `8081` |'), withSettingsTable(doc.replace('| `8080` |', '| `8081` |')));
  const explained = [...doc.matchAll(/^- \*\*`(--[a-z-]+)/gm)].map((m) => m[1]);
  assert.ok(explained.length >= 40, `${explained.length} settings explained`);
  for (const flag of explained)
    assert.ok(
      entries.some(([, s]) => s.flag === flag),
      `docs/configuration.md explains ${flag}, which is no setting`,
    );
});

test.run();
