/**
 * The API server as the benchmark runs it: a child process started by server-process.ts with
 * `node --import tsx bench/server-child.ts`, configured from BENCH_SERVER_CONFIG (the raw options of
 * `buildConfig`), in production mode. It talks to the harness over IPC:
 *
 * - sends `{ type: 'ready', url }` once listening (or `{ type: 'failed', message }`);
 * - `{ type: 'capture', on }`: while on, every SQL statement the server sends to PostgreSQL for an
 *   HTTP request is recorded at the driver (a wrapper around pg.Client#query, installed only while
 *   capturing); the work of its background jobs (watch refreshes, webhook deliveries) is left out;
 * - `{ type: 'drain', id }` answers `{ type: 'drained', id, statements }` with the statements
 *   recorded since the last drain;
 * - `{ type: 'memory', id }` answers `{ type: 'memory', id, usage }` (process.memoryUsage());
 * - `{ type: 'stop' }` or a closed IPC channel closes the server and exits.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Server } from 'node:http';
import pg from 'pg';
import { buildConfig, type RawConfig } from '../packages/server/src/config.ts';
import { startServer, type RunningServer } from '../packages/server/src/server.ts';

export interface CapturedStatement {
  text: string;
  values: unknown[];
}

export type ChildMessage =
  | { type: 'ready'; url: string }
  | { type: 'failed'; message: string }
  | { type: 'drained'; id: number; statements: CapturedStatement[] }
  | { type: 'memory'; id: number; usage: NodeJS.MemoryUsage };

export type ParentMessage =
  | { type: 'capture'; on: boolean }
  | { type: 'drain'; id: number }
  | { type: 'memory'; id: number }
  | { type: 'stop' };

type QueryFn = (...args: unknown[]) => unknown;
const proto = pg.Client.prototype as unknown as { query: QueryFn };
const originalQuery = proto.query;
let captured: CapturedStatement[] = [];

/** Set for everything an HTTP request runs, however deep in its promises. */
const inRequest = new AsyncLocalStorage<true>();
const emit = Server.prototype.emit as (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
  return event === 'request' ? inRequest.run(true, () => emit.call(this, event, ...args)) : emit.call(this, event, ...args);
};

function capturingQuery(this: unknown, ...args: unknown[]): unknown {
  if (!inRequest.getStore()) return originalQuery.apply(this, args);
  const first = args[0] as string | { text?: unknown; values?: unknown } | undefined;
  if (typeof first === 'string') captured.push({ text: first, values: Array.isArray(args[1]) ? (args[1] as unknown[]) : [] });
  else if (first && typeof first.text === 'string')
    captured.push({ text: first.text, values: Array.isArray(first.values) ? first.values : [] });
  return originalQuery.apply(this, args);
}

function send(message: ChildMessage): void {
  process.send?.(message);
}

let server: RunningServer | undefined;
let stopping = false;

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  try {
    await server?.close();
  } finally {
    process.exit(0);
  }
}

process.on('message', (message: ParentMessage) => {
  switch (message.type) {
    case 'capture':
      proto.query = message.on ? capturingQuery : originalQuery;
      if (message.on) captured = [];
      break;
    case 'drain':
      send({ type: 'drained', id: message.id, statements: captured });
      captured = [];
      break;
    case 'memory':
      send({ type: 'memory', id: message.id, usage: process.memoryUsage() });
      break;
    case 'stop':
      void stop();
      break;
  }
});
process.on('disconnect', () => void stop());
process.on('SIGTERM', () => void stop());

try {
  const raw = JSON.parse(process.env.BENCH_SERVER_CONFIG ?? '{}') as RawConfig;
  server = await startServer(buildConfig(raw));
  send({ type: 'ready', url: server.url });
} catch (err) {
  send({ type: 'failed', message: (err as Error).stack ?? String(err) });
  process.exit(1);
}
