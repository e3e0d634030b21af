/** The server's test harness: a real server on a fresh database, trusting a real OpenID provider. */
import { startTestServer as start, type TestServer } from '../../../server/test/support/harness.ts';

export type { TestServer };

export function startTestServer(label: string): Promise<TestServer> {
  return start({}, label);
}
