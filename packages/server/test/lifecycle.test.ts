/**
 * The lifecycle of a server: what a start opens goes on one disposal stack (core/disposal.ts) and is
 * released last first, on a failed start at any step and on stop, each step even when another fails.
 * Leaks are counted from outside: the database's sessions (pg_stat_activity), the process's active
 * handles, its child processes.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { buildConfig, type RawConfig } from '../src/config.ts';
import { DisposalStack, ReleaseError } from '../src/core/disposal.ts';
import { ConfigurationError } from '../src/core/errors.ts';
import type { Logger } from '../src/core/logger.ts';
import { startServer } from '../src/server.ts';
import { createTestDatabase, releaseTestDatabase } from './support/database.ts';

interface Line {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps its lines. */
function recorder(): Logger & { lines: Line[]; released(): string[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      void lines.push({ level, msg, fields });
  return {
    lines,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    flush: () => {},
    released: () => lines.filter((l) => l.msg === 'released' || l.msg === 'release failed').map((l) => String(l.fields.resource)),
  };
}

let databaseUrl: string;
let databaseName: string;

test.before(async () => {
  databaseUrl = await createTestDatabase('lifecycle');
  databaseName = new URL(databaseUrl).pathname.slice(1);
});
test.after(async () => {
  await releaseTestDatabase();
});

/** The sessions open on a database of the test cluster (default: the test database), by application_name (this query's own excluded). */
async function sessions(url = databaseUrl): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, application_name: 'lifecycle-test' });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      'select application_name as name from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() order by 1',
      [new URL(url).pathname.slice(1)],
    );
    return rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

/** The session count once it settles at `expected` (a backend leaves pg_stat_activity shortly after its client ends). */
async function sessionsSettled(expected: number, url = databaseUrl): Promise<string[]> {
  let now = await sessions(url);
  for (let i = 0; i < 30 && now.length !== expected; i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = await sessions(url);
  }
  return now;
}

/** What keeps this process alive, as Node counts it (sockets, servers, timers, child processes; not a file read in flight). */
function handles(): string[] {
  return process
    .getActiveResourcesInfo()
    .filter((kind) => kind !== 'TTYWrap' && !kind.startsWith('FSReq'))
    .sort();
}

async function handlesSettled(expected: string[]): Promise<string[]> {
  let now = handles();
  for (let i = 0; i < 30 && now.join() !== expected.join(); i++) {
    await new Promise((r) => setTimeout(r, 100));
    now = handles();
  }
  return now;
}

/** This process's child processes (Linux). */
function children(): number[] {
  return readdirSync('/proc/self/task').flatMap((task) =>
    readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
}

function occupyPort(): Promise<{ server: Server; port: number }> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

/** A port nothing listens on (one that was free a moment ago). */
async function closedPort(): Promise<number> {
  const { server, port } = await occupyPort();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function config(raw: RawConfig) {
  return buildConfig({
    host: '127.0.0.1',
    port: '0',
    databaseUrl,
    logLevel: 'silent',
    rateLimit: '100/60s',
    readRateLimit: '1000/60s',
    ...raw,
  });
}

// The stack itself.

test('DisposalStack: releases last acquired first, each once, and logs each step with its duration', async () => {
  const logger = recorder();
  const stack = new DisposalStack(logger);
  const order: string[] = [];
  for (const name of ['a', 'b', 'c']) stack.defer(name, async () => void order.push(name));
  assert.equal(stack.names, ['a', 'b', 'c']);
  await Promise.all([stack.dispose(), stack.dispose()]);
  await stack.dispose();
  assert.equal(order, ['c', 'b', 'a']);
  assert.equal(logger.released(), ['c', 'b', 'a']);
  assert.ok(logger.lines.every((l) => l.level === 'debug' && typeof l.fields.ms === 'number'));
  assert.throws(() => stack.defer('late', () => {}), /acquired while its owner was being released/);
});

test('DisposalStack: a release that fails does not skip the others; every failure is reported', async () => {
  const stack = new DisposalStack();
  const order: string[] = [];
  stack.defer('first', () => void order.push('first'));
  stack.defer('throws', () => {
    throw new Error('one');
  });
  stack.defer('middle', () => void order.push('middle'));
  stack.defer('rejects', async () => {
    throw new Error('two');
  });
  const failure = await stack.dispose().then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(failure, ReleaseError);
  assert.instance(failure, AggregateError);
  const error = failure as ReleaseError;
  assert.equal(error.resources, ['rejects', 'throws']);
  assert.equal(
    error.errors.map((e: Error) => e.message),
    ['two', 'one'],
  );
  assert.is(error.message, '2 resources were not released cleanly: rejects (two); throws (one)');
  assert.equal(order, ['middle', 'first']);
});

// A start that fails leaves nothing open.

test('a start whose database refuses connections opens nothing and leaves nothing', async () => {
  const before = handles();
  const port = await closedPort();
  const logger = recorder();
  const failure = await startServer(config({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/none`, databaseConnectTimeout: '1s' }), {
    logger,
  }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(failure, ConfigurationError);
  assert.match((failure as Error).message, /^Cannot reach the database at postgres:\/\/postgres@127\.0\.0\.1:\d+\/none within 1s/);
  assert.equal(logger.released(), []);
  assert.equal(await handlesSettled(before), before);
});

test('--no-migrate with migrations pending: the start fails and releases the pool it had opened', async () => {
  const unmigrated = await createTestDatabase('unmigrated');
  try {
    const before = handles();
    const logger = recorder();
    const failure = await startServer(config({ databaseUrl: unmigrated, migrate: 'false', migrationTimeout: '1s' }), { logger }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.instance(failure, ConfigurationError);
    assert.match((failure as Error).message, /migrations are not applied to the database at .* this process must not apply them/);
    assert.equal(logger.released(), ['database pool']);
    assert.equal(await sessionsSettled(0, unmigrated), []);
    assert.equal(await handlesSettled(before), before);
  } finally {
    await releaseTestDatabase();
  }
});

test('a start that fails on a port in use releases every resource it had opened, last first', async () => {
  const before = { sessions: await sessionsSettled(0), handles: handles() };
  const { server: occupant, port } = await occupyPort();
  const logger = recorder();
  try {
    // A "read replica" on the primary itself: its pool and control connection are opened like a real one's.
    await startServer(config({ port: String(port), databaseReadUrl: databaseUrl }), { logger });
    assert.unreachable('the port is in use');
  } catch (err) {
    assert.instance(err, ConfigurationError);
    assert.is((err as Error).message, `Port ${port} on 127.0.0.1 is already in use: choose another with --port.`);
  } finally {
    occupant.close();
  }
  assert.equal(logger.released(), [
    'webhook deliveries',
    'change listener',
    'replica checks',
    `replica pool 127.0.0.1:${new URL(databaseUrl).port}/${databaseName}`,
    'watch refreshes',
    'changes segmenter',
    'shared rate limit (reads)',
    'shared rate limit (writes)',
    'control connection',
    'schema workers',
    'metric values',
    'database pool',
  ]);
  assert.equal(await sessionsSettled(0), before.sessions, 'no session left on the database');
  assert.equal(await handlesSettled(before.handles), before.handles, 'no socket, server or timer left');
});

test('a start that fails after the migrations (a read replica unreachable) releases what it had opened', async () => {
  const before = { sessions: await sessionsSettled(0), handles: handles() };
  const port = await closedPort();
  const logger = recorder();
  const unreachable = `postgres://postgres@127.0.0.1:${port}/replica`;
  const failure = await startServer(config({ databaseReadUrl: unreachable, databaseConnectTimeout: '1s' }), { logger }).then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  assert.ok(failure, 'the start failed');
  assert.match(String((failure as NodeJS.ErrnoException).code ?? failure!.message), /ECONNREFUSED/);
  assert.equal(logger.released(), [
    'watch refreshes',
    'changes segmenter',
    'shared rate limit (reads)',
    'shared rate limit (writes)',
    'control connection',
    'schema workers',
    'metric values',
    'database pool',
  ]);
  assert.equal(await sessionsSettled(0), before.sessions);
  assert.equal(await handlesSettled(before.handles), before.handles);
});

test('a start with the embedded PostgreSQL that fails on a port in use stops the cluster it started', async () => {
  const dataDir = await mkdtemp(join(tmpdir(), 'benchmarks-lifecycle-'));
  await chmod(dataDir, 0o755); // PostgreSQL runs as the postgres user when we are root
  const before = { children: children(), handles: handles() };
  const { server: occupant, port } = await occupyPort();
  const logger = recorder();
  try {
    const failure = await startServer(config({ databaseUrl: '', dataDir, port: String(port) }), {
      logger,
      databaseLogger: recorder(),
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.instance(failure, ConfigurationError);
    assert.equal(logger.released().slice(-2), ['database pool', 'embedded PostgreSQL']);
    assert.equal(children(), before.children, 'no child process left (the postmaster and its watchdog are gone)');
    occupant.close();
    assert.equal(await handlesSettled(before.handles), before.handles);
  } finally {
    occupant.close();
    await rm(dataDir, { recursive: true, force: true });
  }
});

// Stop.

test('stop releases everything in reverse order even when one release fails, and reports the failure', async () => {
  const before = await sessionsSettled(0);
  const handlesBefore = handles();
  const logger = recorder();
  let closedCaller = false;
  const server = await startServer(config({ databaseReadUrl: databaseUrl }), {
    logger,
    onClose: async () => {
      closedCaller = true;
    },
  });
  const ready = await fetch(`${server.url}/api/v1/ready`);
  assert.is(ready.status, 200, 'the control connection is open');
  // A schema worker thread runs once a schema is checked; the stop terminates it.
  assert.equal(await server.context.schemas.check({ type: 'object' }), null);
  assert.ok(server.context.schemas.threads >= 1, 'a schema worker thread runs');
  const open = await sessions();
  assert.ok(open.includes('benchmarks-server listener') && open.includes('benchmarks-server control'), open.join());
  // The release of the control connection closes it, then fails: the releases after it still run.
  const { control } = server.context;
  const closeControl = control.close.bind(control);
  control.close = async () => {
    await closeControl();
    throw new Error('the control connection broke while closing');
  };
  const failure = await server.close().then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.instance(failure, ReleaseError);
  assert.equal((failure as ReleaseError).resources, ['control connection']);
  assert.is(
    (failure as Error).message,
    'A resource was not released cleanly: control connection (the control connection broke while closing)',
  );
  assert.equal(logger.released(), [
    'HTTP server',
    'webhook deliveries',
    'change listener',
    'replica checks',
    `replica pool 127.0.0.1:${new URL(databaseUrl).port}/${databaseName}`,
    'watch refreshes',
    'changes segmenter',
    'shared rate limit (reads)',
    'shared rate limit (writes)',
    'control connection',
    'schema workers',
    'metric values',
    'database pool',
    'onClose',
  ]);
  assert.ok(closedCaller, "the caller's own resource was released last");
  assert.is(server.context.schemas.threads, 0, 'no schema worker thread left');
  assert.is(server.close(), server.close(), 'a second stop is the same');
  assert.equal(await sessionsSettled(0), before);
  assert.equal(await handlesSettled(handlesBefore), handlesBefore);
});

test.run();
