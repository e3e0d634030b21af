/** Ports on this machine: a free one, whether one can be listened on. */
import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { ConfigurationError } from '../core/errors.ts';

/** The lowest port `freePort` draws: above 10080, the highest of fetch's "bad ports". */
const LOWEST_DRAWN = 10_081;

/** The first port the system gives outgoing connections (Linux's `ip_local_port_range`, else IANA's 49152). */
export function outgoingPortsStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(first) && first > 0) return first;
  } catch {}
  return 49_152;
}

/**
 * A free loopback port for a listener started next, drawn below the ports of outgoing connections,
 * where the system's own choice may be taken by a connection before the bind. The system's choice
 * when that range starts too low, or 20 draws find nothing free.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const end = outgoingPortsStart();
  if (end - LOWEST_DRAWN >= 1000)
    for (let i = 0; i < 20; i++) {
      const port = LOWEST_DRAWN + randomInt(end - LOWEST_DRAWN);
      if (!(await portUnavailable(host, port))) return port;
    }
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
