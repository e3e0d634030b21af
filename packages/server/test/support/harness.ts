import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildConfig, type RawConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import { startIssuer, type IssuerAccount, type RunningIssuer } from '@benchmarks/demo/issuer';
import { createMigratedTestDatabase, releaseTestDatabase } from './database.ts';
import type { Logger } from '../../src/core/logger.ts';

export const ADMIN_ENTITLEMENT = 'urn:test:group:benchmarks-admins#test';

export interface HttpResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as is (for malformed or non-JSON bodies). */
  rawBody?: string;
  contentType?: string;
  query?: Record<string, string | number | boolean | (string | number)[] | undefined>;
  headers?: Record<string, string>;
}

export interface TestServer {
  server: RunningServer;
  issuer: RunningIssuer;
  /** http://127.0.0.1:port */
  url: string;
  /** http://127.0.0.1:port/api/v1 */
  api: string;
  databaseUrl: string;
  /** A real JWT from the test provider for `sub` (created with an email sub@test.example). */
  token(sub: string, options?: { admin?: boolean; ttlSeconds?: number; email?: string }): Promise<string>;
  /** A registered user: returns its token. */
  user(sub: string): Promise<string>;
  /** A registered administrator: returns its token. */
  admin(sub?: string): Promise<string>;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<HttpResponse<T>>;
  close(): Promise<void>;
}

/** Encodes a query object: arrays repeat the key. */
export function queryString(query: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined) continue;
    for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

export interface TestServerOptions {
  logger?: Logger;
  /**
   * Runs the server on an embedded PostgreSQL of its own (in a temporary directory), as a server
   * without DATABASE_URL does, and gives its log lines to this logger: for tests of what
   * PostgreSQL logs. Without it, the server gets a fresh database of the test cluster.
   */
  databaseLogger?: Logger;
  /** The schema compile budget of this server (SCHEMA_COMPILE budget chosen by the test). */
  schemaBudgetMs?: number;
}

/**
 * A real server on a fresh database of the test cluster, trusting a real OpenID provider that runs
 * in this process. Nothing is mocked.
 */
export async function startTestServer(overrides: RawConfig = {}, label = 'test', options: TestServerOptions = {}): Promise<TestServer> {
  const issuer = await startIssuer();
  let dataDir: string | undefined;
  if (options.databaseLogger) {
    dataDir = await mkdtemp(join(tmpdir(), 'benchmarks-pg-'));
    await chmod(dataDir, 0o755); // PostgreSQL runs as the postgres user when we are root
  }
  const databaseUrl = dataDir ? undefined : await createMigratedTestDatabase(label);
  const config = buildConfig({
    host: '127.0.0.1',
    port: '0',
    databaseUrl,
    dataDir,
    oidcIssuer: issuer.issuer,
    adminEntitlement: ADMIN_ENTITLEMENT,
    logLevel: process.env.TEST_LOG_LEVEL ?? 'silent',
    // Tests send many writes from one identity; rate-limit.test.ts turns the limit on.
    rateLimit: '0',
    // Off by default; on here, far above what a test reads from its one address, so that every read
    // passes through the limiter. bounded-work.test.ts tests a limit that refuses.
    readRateLimit: '100000/60s',
    ...overrides,
  });
  const server = await startServer(config, {
    logger: options.logger,
    databaseLogger: options.databaseLogger,
    schemaBudgetMs: options.schemaBudgetMs,
  });
  const api = `${server.url}/api/v1`;

  const accounts = new Set<string>();
  const token: TestServer['token'] = async (sub, options = {}) => {
    const key = `${sub}|${options.admin ? 'a' : 'u'}|${options.email ?? ''}`;
    if (!accounts.has(key)) {
      const account: IssuerAccount = {
        sub,
        email: options.email ?? `${sub}@test.example`,
        email_verified: true,
        entitlements: options.admin ? [ADMIN_ENTITLEMENT] : [],
      };
      issuer.addAccount(account);
      accounts.add(key);
    }
    return issuer.mintAccessToken({ sub, ttlSeconds: options.ttlSeconds });
  };

  const request: TestServer['request'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    const res = await fetch(`${api}${path}${queryString(options.query)}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if (/json/.test(res.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text);
    return { status: res.status, headers: res.headers, body: parsed as any, text };
  };

  const registerWith = async (tok: string) => {
    const res = await request('POST', '/users/self', { token: tok });
    if (res.status !== 200 && res.status !== 201) throw new Error(`registration failed: ${res.status} ${res.text}`);
    return tok;
  };

  return {
    server,
    issuer,
    url: server.url,
    api,
    databaseUrl: databaseUrl ?? (server.context.orm.config.get('clientUrl') as string),
    token,
    user: async (sub) => registerWith(await token(sub)),
    admin: async (sub = 'admin') => registerWith(await token(sub, { admin: true })),
    request,
    close: async () => {
      await server.close();
      await issuer.close();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
      else await releaseTestDatabase();
    },
  };
}
