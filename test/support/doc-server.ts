/**
 * The demo the documentation's examples talk to: `benchmarks-server start --demo` as a user starts
 * it (the compiled server of packages/server/dist, as the package installs it, built first when the
 * build is not that of the sources: scripts/current-build.ts), on a fresh database of the test
 * cluster, with its two tokens.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createMigratedTestDatabase, releaseTestDatabase } from '../../packages/server/test/support/database.ts';
import { currentBuild } from '../../scripts/current-build.ts';
import { within } from '../../packages/server/test/support/process.ts';
import { ROOT, cleanEnv, start } from './run.ts';

export interface Demo {
  /** The service root, `http://127.0.0.1:<port>`. */
  url: string;
  /** `<url>/api/v1`. */
  api: string;
  /** The demo user (not registered yet) and the registered demo administrator. */
  userToken: string;
  adminToken: string;
  /** The built-in OpenID provider, the issuer of the tokens. */
  issuer: string;
  /** Its database (a fresh one of the test cluster). */
  databaseUrl: string;
  /** Stops the server (SIGTERM, then its process group). */
  close(): Promise<void>;
}

export interface DemoOptions {
  /** A directory of its own (the provider's keys). */
  dataDir: string;
  /** Whether the sample catalogue is seeded (`--demo-seed`). */
  seed: boolean;
  label: string;
}

export async function startDemo(options: DemoOptions): Promise<Demo> {
  await currentBuild(ROOT);
  const databaseUrl = await createMigratedTestDatabase(options.label);
  await mkdir(options.dataDir, { recursive: true });
  const args = [join(ROOT, 'packages', 'server', 'dist', 'cli.js'), 'start', '--demo', '--port', '0', '--data-dir', options.dataDir];
  args.push('--database-url', databaseUrl, '--demo-seed', String(options.seed), '--log-level', 'warn');
  const server = start(process.execPath, args, { cwd: options.dataDir, env: cleanEnv(), timeoutMs: 15 * 60_000 });
  const close = async () => {
    server.child.kill('SIGTERM');
    await within(server.exited, 20_000, undefined);
    await server.kill();
    await releaseTestDatabase();
  };
  try {
    const [, admin] = await server.waitFor('stdout', /Demo admin token[^\n]*\n(\S+)/, 180_000);
    const [, url] = /\(demo\) at (http:\/\/\S+?)\/? /.exec(server.stdout()) ?? [];
    const [, user] = /Demo user token[^\n]*\n(\S+)/.exec(server.stdout()) ?? [];
    const [, issuer] = /Built-in OpenID provider: (http:\/\/\S+)/.exec(server.stdout()) ?? [];
    if (!url || !user || !issuer) throw new Error(`the demo printed no URL, user token or provider:\n${server.stdout()}`);
    return { url, api: `${url}/api/v1`, userToken: user, adminToken: admin!, issuer, databaseUrl, close };
  } catch (err) {
    await close();
    throw err;
  }
}
