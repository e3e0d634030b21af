/** The server's test harness: a real server on a fresh database, trusting a real OpenID provider. */
import { startTestServer as start, type TestServer } from '../../../server/test/support/harness.ts';

export type { TestServer };

/** `overrides`: server settings as their environment variables would give them, e.g. `{ exportConcurrency: '1' }`. */
export function startTestServer(label: string, overrides: Parameters<typeof start>[0] = {}): Promise<TestServer> {
  return start(overrides, label);
}
