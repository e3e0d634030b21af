/**
 * GET /results:export against clients that misbehave, on a server with an embedded PostgreSQL of
 * its own (so that its log lines can be read): readers that stop reading are cut off after
 * EXPORT_STALL_TIMEOUT and their places and connections freed; a steady reader is cut off at
 * EXPORT_MAX_DURATION; an export whose database connection dies ends at once; a client cutting an
 * export short is logged at info, and PostgreSQL logs nothing above info because of it.
 *
 * The budgets are the test's own (2 s without progress, 3 s in all), far from what the machine's
 * speed changes: the slow clients read nothing, or read steadily far faster than the stall limit.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { get } from 'node:http';
import net from 'node:net';
import { buildConfig, type ServerConfig } from '../src/config.ts';
import { createLogger } from '../src/core/logger.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';

type Line = Record<string, unknown>;

const STALL_MS = 2000;
/** Set for its own test only: elsewhere it could end a stalled export first, on a busy machine. */
const MAX_MS = 3000;
/** How long a wait for what must happen may last: a hang guard, as long as a loaded machine may need. */
const HANG_MS = 60_000;
/**
 * 1,500 results of about 20 kB: 30 MB in three cursor batches, more than the sockets of a
 * connection buffer on loopback (about 4 MB when the reader reads nothing: Linux grows a receive
 * buffer as its reader reads).
 */
const BIG = 1500;

const serverLines: Line[] = [];
const postgresLines: Line[] = [];
const capture = (into: Line[]) => createLogger('debug', (line) => into.push(JSON.parse(line) as Line));

let t: TestServer;
let seed: Seeder;
let bigBenchmark: string;
let smallBenchmark: string;
let exportBytes: number;

test.before(async () => {
  t = await startTestServer({ exportConcurrency: '2', exportStallTimeout: `${STALL_MS}ms`, exportMaxDuration: '0' }, 'export_limits', {
    logger: capture(serverLines),
    databaseLogger: capture(postgresLines),
  });
  seed = await createSeeder(t);
  bigBenchmark = (await seed.benchmark()).id;
  smallBenchmark = (await seed.benchmark()).id;
  const site = await seed.site();
  const flavor = await seed.flavor(site.id);
  const at = (i: number) => new Date(Date.UTC(2024, 0, 1, 0, 0, i));
  const base = { flavor_id: flavor.id, site_id: flavor.site_id };
  await seed.results(
    Array.from({ length: BIG }, (_, i) => ({
      ...base,
      benchmark_id: bigBenchmark,
      json: { i, pad: 'x'.repeat(20_000) },
      execution_datetime: at(i),
    })),
  );
  await seed.results([{ ...base, benchmark_id: smallBenchmark, json: { i: 0 }, execution_datetime: at(0) }]);
  exportBytes = (await (await fetch(`${t.api}/results:export?benchmark_id=${bigBenchmark}`)).arrayBuffer()).byteLength;
});
test.after(async () => {
  await t.close();
});

const loud = (l: Line) => l.level === 'warn' || l.level === 'error';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, ms: number, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(25);
  }
}

const exportConnections = async () =>
  Number(
    (
      await seed.sql<{ n: number }>("select count(*)::int as n from pg_stat_activity where application_name = 'benchmarks-server export'")
    )[0]!.n,
  );

/** No export holds a place or a database connection any more (waits a little for them to close). */
async function nothingHeld(): Promise<void> {
  await until('every export place and connection to be given back', HANG_MS, async () =>
    t.server.context.runtime.exports.active === 0 && (await exportConnections()) === 0 ? true : undefined,
  );
}

interface RawExport {
  socket: net.Socket;
  /** Reads at most `bytes` of what has arrived (the socket stays paused). */
  readSome: (bytes: number) => void;
  /** Bytes received, headers included. */
  received: () => number;
  text: () => string;
  /** When the connection closed (ms since the epoch). */
  closed: Promise<number>;
}

/** An export over a plain TCP connection: the answer's first bytes are read, then nothing more unless `reading`. */
async function rawExport(benchmarkId: string): Promise<RawExport> {
  const socket = net.connect(t.server.port, '127.0.0.1');
  const chunks: Buffer[] = [];
  let received = 0;
  socket.on('data', (d: Buffer) => {
    // At once: a reader that reads little keeps its receive buffer small (Linux grows it as the reader reads).
    if (!received) socket.pause();
    received += d.length;
    if (chunks.length < 4) chunks.push(d);
  });
  socket.on('error', () => {}); // a connection cut by the server may be reset
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  socket.write(`GET /api/v1/results:export?benchmark_id=${benchmarkId} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  await until('the first bytes of the answer', HANG_MS, () => (received > 0 ? true : undefined));
  const text = () => Buffer.concat(chunks).toString('latin1');
  assert.match(text(), /^HTTP\/1\.1 200 /);
  const readSome = (bytes: number) => {
    for (let left = bytes; left > 0; ) {
      const chunk = socket.read() as Buffer | null; // counted by the 'data' listener
      if (!chunk) return;
      left -= chunk.length;
    }
  };
  return { socket, readSome, received: () => received, text, closed };
}

/** Reads the rest of what the server sends until it closes the connection: it must close within `ms`. */
async function drainUntilClosed(raw: RawExport, ms = HANG_MS): Promise<void> {
  raw.socket.resume();
  await until(
    'the server to close the connection',
    ms,
    async () => (await Promise.race([raw.closed, sleep(50).then(() => undefined)])) ?? undefined,
  );
}

test('two readers that stop reading hold both places only until EXPORT_STALL_TIMEOUT: then they are cut off, the next export streams, no connection is left', async () => {
  const postgresFrom = postgresLines.length;
  // Asked together: one after the other, on a loaded machine the first could be cut off (2 s) before the second had its place.
  const slow = await Promise.all([rawExport(bigBenchmark), rawExport(bigBenchmark)]);
  await until('both places held', HANG_MS, () => (t.server.context.runtime.exports.active === 2 ? true : undefined));
  assert.is(await exportConnections(), 2);
  const started = Date.now();
  // The third waits in line (both places are held), then gets a place freed by the stall limit.
  const third = await fetch(`${t.api}/results:export?benchmark_id=${smallBenchmark}`);
  assert.is(third.status, 200, await third.clone().text());
  assert.is((await third.text()).trimEnd().split('\n').length, 1);
  const waited = Date.now() - started;
  // Nothing but the stall limit frees a place here (no EXPORT_MAX_DURATION): the bound is a hang guard.
  assert.ok(waited < HANG_MS, `the third export waited ${waited} ms`);
  // Both slow readers are cut off (the second a little after the first), still reading nothing.
  await until('both stalled exports cut off', 5 * STALL_MS, () => (t.server.context.runtime.exports.active === 0 ? true : undefined));
  for (const raw of slow) {
    await drainUntilClosed(raw);
    assert.ok(raw.received() < exportBytes, 'the stalled answer was cut short');
  }
  await nothingHeld();
  const cuts = serverLines.filter((l) => l.reason === 'stalled');
  assert.is(cuts.length, 2, JSON.stringify(cuts));
  assert.ok(
    cuts.every((l) => l.level === 'info' && l.msg === 'answer cut short: its client accepted no data for EXPORT_STALL_TIMEOUT'),
    JSON.stringify(cuts),
  );
  await sleep(500); // PostgreSQL's lines arrive through a pipe
  assert.equal(postgresLines.slice(postgresFrom).filter(loud), [], 'PostgreSQL lines above info');
  console.log(
    `stalled export cut off and its place given to the next one ${waited} ms after the next asked (EXPORT_STALL_TIMEOUT ${STALL_MS} ms)`,
  );
});

/** Runs `work` with some settings changed (the route reads them for each export), then restores them. */
async function withSettings(settings: Partial<ServerConfig>, work: () => Promise<void>): Promise<void> {
  const config = t.server.context.config;
  const before = { ...config };
  Object.assign(config, settings);
  try {
    await work();
  } finally {
    Object.assign(config, before);
  }
}

test('a steady reader is cut off at EXPORT_MAX_DURATION, never as stalled', () =>
  withSettings({ exportMaxDurationMs: MAX_MS }, async () => {
    const started = Date.now();
    const raw = await rawExport(bigBenchmark);
    // About 3 MB a second: far more than the stall limit needs (TCP lets a paused sender go on by
    // window updates, every few hundred kilobytes read), far less than the whole export in MAX_MS.
    const reading = setInterval(() => raw.readSome(256 * 1024), 20);
    const closedAt = await Promise.race([raw.closed, new Promise<number>((r) => setTimeout(r, MAX_MS + HANG_MS, 0).unref())]);
    clearInterval(reading);
    assert.ok(closedAt > 0, 'the export was cut off');
    assert.ok(raw.received() < exportBytes, `${raw.received()} of ${exportBytes} bytes`);
    await nothingHeld();
    const cut = serverLines.find((l) => l.reason === 'too long' && Date.parse(String(l.time)) >= started);
    assert.is(cut?.level, 'info', 'logged at info as too long');
    // The server cut it then; its reader went on reading what the connection still held.
    const cutAfter = Date.parse(String(cut!.time)) - started;
    assert.ok(cutAfter >= MAX_MS, `cut off after ${cutAfter} ms`);
    console.log(`a steady reader cut off ${cutAfter} ms after it asked (EXPORT_MAX_DURATION ${MAX_MS} ms)`);
    assert.not.ok(
      serverLines.some((l) => l.reason === 'stalled' && Date.parse(String(l.time)) >= started),
      'never as stalled',
    );
  }));

test('an export whose database connection dies ends at once and gives its place back, whatever its reader does', () =>
  // No other limit may end it here.
  withSettings({ exportStallTimeoutMs: 0, exportMaxDurationMs: 0 }, async () => {
    const raw = await rawExport(bigBenchmark);
    const [backend] = await until('the export connection', HANG_MS, async () => {
      const rows = await seed.sql<{ pid: number }>("select pid from pg_stat_activity where application_name = 'benchmarks-server export'");
      return rows.length ? rows : undefined;
    });
    const terminated = Date.now();
    await seed.sql('select pg_terminate_backend(?)', [backend!.pid]);
    await until('the place given back', HANG_MS, () => (t.server.context.runtime.exports.active === 0 ? true : undefined));
    console.log(`an export's connection ended by PostgreSQL: its place given back within ${Date.now() - terminated} ms`);
    await drainUntilClosed(raw);
    assert.ok(raw.received() < exportBytes, 'the answer was cut short');
    assert.ok(
      serverLines.some((l) => l.msg === 'export ended early' && l.level === 'warn' && /connection was lost/.test(String(l.error))),
      'logged at warn',
    );
    await nothingHeld();
    assert.is((await fetch(`${t.api}/results:export?benchmark_id=${smallBenchmark}`)).status, 200, 'exports work again');
  }));

test('a client cutting an export short is logged at info, and PostgreSQL logs nothing above info because of it', async () => {
  const serverFrom = serverLines.length;
  const postgresFrom = postgresLines.length;
  // A reader that goes away halfway, while it reads (a batch is being fetched then)...
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve, reject) => {
      const req = get(`${t.api}/results:export?benchmark_id=${bigBenchmark}`, { agent: false }, (res) => {
        let read = 0;
        res.on('data', (d: Buffer) => {
          read += d.length;
          if (read >= 2_000_000) req.destroy();
        });
        res.on('error', () => {});
        res.on('close', resolve);
      });
      req.on('error', (err) => ((err as { code?: string }).code === 'ECONNRESET' ? undefined : reject(err)));
    });
  }
  // ...and one that resets its connection while the export waits for it.
  const raw = await rawExport(bigBenchmark);
  await sleep(200);
  raw.socket.resetAndDestroy();
  await nothingHeld();
  await sleep(500); // PostgreSQL's lines arrive through a pipe
  const server = serverLines.slice(serverFrom);
  const cuts = server.filter((l) => l.msg === 'client went away before the end of its answer');
  assert.is(cuts.length, 4, JSON.stringify(server.filter((l) => l.msg !== 'request')));
  assert.ok(
    cuts.every((l) => l.level === 'info' && l.path === '/api/v1/results:export' && typeof l.requestId === 'string'),
    JSON.stringify(cuts),
  );
  assert.equal(server.filter(loud), [], 'server lines above info');
  assert.equal(postgresLines.slice(postgresFrom).filter(loud), [], 'PostgreSQL lines above info');
  // The cursors' connections were ended cleanly, not dropped halfway through a fetch.
  assert.equal(
    postgresLines.slice(postgresFrom).filter((l) => l.severity === 'FATAL'),
    [],
    'sessions ended by a vanished client',
  );
});

test('EXPORT_STALL_TIMEOUT and EXPORT_MAX_DURATION: 30 s and 60 min by default, durations or 0, one clear line otherwise', () => {
  const defaults = buildConfig({});
  assert.is(defaults.exportStallTimeoutMs, 30_000);
  assert.is(defaults.exportMaxDurationMs, 3_600_000);
  const set = buildConfig({ exportStallTimeout: '1500ms', exportMaxDuration: '0' });
  assert.equal([set.exportStallTimeoutMs, set.exportMaxDurationMs], [1500, 0]);
  assert.throws(() => buildConfig({ exportStallTimeout: 'soon' }), /^EXPORT_STALL_TIMEOUT must be a duration .* not 'soon'\.$/);
  assert.throws(() => buildConfig({ exportMaxDuration: '25h' }), /EXPORT_MAX_DURATION must be a duration/);
});

test.run();
