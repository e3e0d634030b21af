/** Ports on this machine: a free one, whether one can be listened on. */
import { createServer } from 'node:net';
import { ConfigurationError } from '../core/configuration-error.ts';

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

/** Whether `port` can be listened on at `host` now: the error code (EADDRINUSE, EACCES…) when not. */
export async function portUnavailable(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen(port, host, () => server.close(() => resolve(undefined)));
  });
}

/** One clear ConfigurationError when the embedded PostgreSQL cannot listen on `port` (`--database-port`). */
export async function checkDatabasePort(port: number): Promise<void> {
  const why = await portUnavailable('127.0.0.1', port);
  if (!why) return;
  throw new ConfigurationError(
    `Port ${port} on 127.0.0.1 for the embedded PostgreSQL cannot be used (${why === 'EADDRINUSE' ? 'already in use' : why}): ` +
      'choose another with --database-port (DATABASE_PORT), or leave it out for any free port.',
  );
}
