/**
 * Free ports for the listeners the server starts next (the embedded PostgreSQL, the demo's provider):
 * drawn below the ports of outgoing connections, so that a connection made before the listener
 * binds cannot take its port.
 */
import { createServer, type Server } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { freePort, outgoingPortsStart, portUnavailable } from '../src/db/ports.ts';

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
const close = (server: Server) => new Promise((resolve) => server.close(resolve));

test('a free port is below the ports of outgoing connections, above those fetch refuses, can be listened on, and differs from call to call', async () => {
  const start = outgoingPortsStart();
  assert.ok(start > 10_081, `the system's outgoing ports start at ${start}`);
  const ports = await Promise.all(Array.from({ length: 200 }, () => freePort()));
  // 10080 is the highest of fetch's "bad ports": a server there could not be reached by fetch.
  for (const port of ports) assert.ok(port > 10_080 && port < start, `${port} is drawn from 10081 to ${start - 1}`);
  assert.ok(new Set(ports).size >= 180, `drawn at random: ${ports.join(', ')}`);
  const server = await listen(ports[0]!);
  await close(server);
});

test('a port in use is named as such', async () => {
  const server = await listen(await freePort());
  try {
    assert.is(await portUnavailable('127.0.0.1', (server.address() as { port: number }).port), 'EADDRINUSE');
  } finally {
    await close(server);
  }
});

test.run();
