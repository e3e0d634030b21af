/**
 * The server's test harness, loaded at run time. The SDK's TypeScript project may not include server
 * files (the server depends on the SDK, not the reverse), so the harness is imported by a computed
 * URL that tsc does not follow, and typed here by the few members these tests use.
 */
export interface TestServer {
  /** http://127.0.0.1:port */
  url: string;
  /** http://127.0.0.1:port/api/v1 */
  api: string;
  /** A real JWT of the test OpenID provider for `sub` (unregistered). */
  token(sub: string, options?: { admin?: boolean; ttlSeconds?: number; email?: string }): Promise<string>;
  /** The token of a registered user. */
  user(sub: string): Promise<string>;
  /** The token of a registered administrator. */
  admin(sub?: string): Promise<string>;
  close(): Promise<void>;
}

const harness = new URL('../../../server/test/support/harness.ts', import.meta.url).href;

export async function startTestServer(label: string): Promise<TestServer> {
  const mod = (await import(harness)) as { startTestServer(overrides: object, label: string): Promise<TestServer> };
  return mod.startTestServer({}, label);
}
