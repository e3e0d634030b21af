/**
 * `benchmarks-server start --workers N` (src/cluster.ts, src/worker.ts): the primary starts the
 * embedded PostgreSQL, applies the migrations and runs the demo's provider once; its workers share
 * one port, trust that provider, name themselves in `X-Worker` and in their log lines; a worker
 * killed is forked again (later each time it dies soon after it started); SIGTERM stops them all
 * cleanly and leaves no process. Real processes, real PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { restartDelay } from '../src/cluster.ts';
import { buildConfig, MAX_WORKERS } from '../src/config.ts';
import { freePort } from '../src/db/embedded.ts';
import { program } from '../src/program.ts';
import {
  alive,
  demoTokens,
  postgresProcessesFor,
  processesNaming,
  runServer,
  waitFor,
  type ServerProcess,
  within,
} from './support/process.ts';

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-workers-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('WORKERS: default 1, auto is one per core, checked; --workers / WORKERS on the command line', () => {
  assert.is(buildConfig({}).workers, 1);
  assert.is(buildConfig({ workers: '3' }).workers, 3);
  assert.is(buildConfig({ workers: 'auto' }).workers, Math.min(MAX_WORKERS, availableParallelism()));
  for (const bad of ['0', '-1', '2.5', 'many', String(MAX_WORKERS + 1)])
    assert.throws(() => buildConfig({ workers: bad }), /WORKERS must be an integer from 1 to 256, or auto/, bad);
  const start = program().commands.find((c) => c.name() === 'start')!;
  assert.is(start.options.find((o) => o.long === '--workers')?.envVar, 'WORKERS');
  assert.is(start.options.find((o) => o.long === '--migrate')?.envVar, 'MIGRATE');
  assert.ok(start.options.some((o) => o.long === '--no-migrate'));
});

test('a worker that dies soon after it started waits 1 s, then 2, 4, … at most 30 s; one that served a while none', () => {
  assert.equal([0, 1, 2, 3, 5, 6, 20].map(restartDelay), [0, 1000, 2000, 4000, 16_000, 30_000, 30_000]);
});

/** One GET on a connection of its own (the cluster hands out connections, not requests). */
function get(port: number, path: string, token?: string): Promise<{ status: number; worker: number }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: `/api/v1${path}`, agent: false, headers: token ? { authorization: `Bearer ${token}` } : {} },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, worker: Number(res.headers['x-worker']) }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The answers of `path` until each of `workers` answered (at most 40 requests). */
async function fromEach(port: number, path: string, workers: number[], token?: string) {
  const seen = new Map<number, number>();
  for (let i = 0; i < 40 && workers.some((w) => !seen.has(w)); i++) {
    const { status, worker } = await get(port, path, token);
    seen.set(worker, status);
  }
  return seen;
}

/** Worker id → pid, from the primary's `worker started` lines. */
function started(s: ServerProcess): Map<number, number> {
  return new Map(s.logLines().flatMap((l) => (l.msg === 'worker started' ? [[l.worker as number, l.pid as number]] : [])));
}

/** The primary's line about the end of worker `id`. */
function ended(s: ServerProcess, id: number): Record<string, unknown> | undefined {
  return s.logLines().find((l) => l.msg === 'worker ended: forking another' && l.worker === id);
}

test('--workers 2 --demo: one provider and one port for both workers, a killed worker forked again, SIGTERM stops everything', async () => {
  const dataDir = join(dir, 'demo');
  const port = await freePort();
  const s = runServer(['start', '--demo', '--workers', '2', '--port', String(port), '--data-dir', dataDir], { LOG_LEVEL: 'debug' });
  let pids: number[] = [];
  try {
    const tokens = await demoTokens(s);
    assert.is(s.stdout().match(/Demo admin token/g)?.length, 1, 'the demo runs once, in the primary');
    assert.is(s.stderr().match(/serving on/g)?.length, 1);
    const workers = started(s);
    assert.equal([...workers.keys()].sort(), [1, 2]);
    assert.is(new Set(workers.values()).size, 2, 'two processes');
    assert.not.ok([...workers.values()].includes(s.child.pid!), 'neither is the primary');

    // Both workers answer on the one port, trust the demo's provider, and see the database ready.
    assert.equal([...(await fromEach(port, '/health', [1, 2]))].sort(), [
      [1, 200],
      [2, 200],
    ]);
    assert.equal([...(await fromEach(port, '/ready', [1, 2]))].sort(), [
      [1, 200],
      [2, 200],
    ]);
    assert.equal([...(await fromEach(port, '/users/self:try_admin', [1, 2], tokens.admin))].sort(), [
      [1, 204],
      [2, 204],
    ]);
    // Log lines are written asynchronously (pino): wait for the six requests' lines to arrive.
    const requestLines = () => s.logLines().filter((l) => l.msg === 'request');
    for (const until = Date.now() + 60_000; requestLines().length < 6 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    const requests = requestLines();
    assert.ok(requests.length >= 6, `request lines logged: ${JSON.stringify(s.logLines().slice(-8))}`);
    assert.ok(
      requests.every((l) => l.worker === 1 || l.worker === 2),
      'every request line names its worker',
    );

    // Killed: forked again as worker 3; killed again at once: forked again after a longer pause.
    process.kill(workers.get(1)!, 'SIGKILL');
    await waitFor(
      () => started(s).has(3),
      () => `worker 3 (stderr: ${s.stderr().slice(-2000)})`,
    );
    assert.is(ended(s, 1)?.signal, 'SIGKILL');
    assert.not.ok(alive(workers.get(1)!));
    assert.equal([...(await fromEach(port, '/health', [2, 3]))].sort(), [
      [2, 200],
      [3, 200],
    ]);
    process.kill(started(s).get(3)!, 'SIGKILL');
    await waitFor(
      () => started(s).has(4),
      () => `worker 4 (stderr: ${s.stderr().slice(-2000)})`,
    );
    const [first, second] = [ended(s, 1)!.delayMs as number, ended(s, 3)!.delayMs as number];
    assert.ok(second >= 1000 && second > first, `a quick death waits longer each time (${first} ms, then ${second} ms)`);
    assert.equal([...(await fromEach(port, '/health', [2, 4]))].sort(), [
      [2, 200],
      [4, 200],
    ]);
    pids = [...started(s).values()];
  } finally {
    s.child.kill('SIGTERM');
  }
  const code = await within(s.exited, 60_000, 'late' as const);
  if (code === 'late') s.child.kill('SIGKILL');
  assert.is(code, 0, s.stderr().slice(-3000));
  const stopped = s.logLines().filter((l) => l.msg === 'stopped');
  assert.equal(stopped.map((l) => l.worker).sort(), [2, 4, undefined], 'each worker, then the primary, stopped');
  assert.is(stopped.find((l) => l.worker === undefined)?.clean, true);
  assert.equal(
    pids.filter((pid) => alive(pid)),
    [],
    'no worker left',
  );
  assert.equal(postgresProcessesFor(dataDir), [], 'no PostgreSQL process left');
  assert.equal(processesNaming(dataDir), [], 'nothing left');
});

test('--workers 2 on a port in use: one clear line, exit 1, nothing left running', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as { port: number }).port;
  const dataDir = join(dir, 'busy');
  try {
    const s = runServer(['start', '--workers', '2', '--port', String(port), '--data-dir', dataDir]);
    assert.is(await s.exited, 1, s.stderr());
    const lines = s.plainErrorLines();
    assert.is(lines.length, 1, `one clear line, got:\n${s.stderr()}`);
    assert.match(lines[0]!, new RegExp(`^benchmarks-server: Port ${port} on 127\\.0\\.0\\.1 is already in use`));
    assert.equal(processesNaming(dataDir), [], 'no worker, no PostgreSQL left');
  } finally {
    blocker.close();
  }
});

test.run();
