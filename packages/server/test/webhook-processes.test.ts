/**
 * Webhook deliveries across real `benchmarks-server` processes on one database: a process killed
 * (SIGKILL) with attempts in flight and events not yet fanned out leaves them to the next one, with
 * their ids; two processes deliver every attempt once. Endpoints and events are written with SQL.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../src/db/embedded.ts';
import { createMigratedTestDatabase, releaseTestDatabase } from './support/database.ts';
import { runServer, type ServerProcess, waitFor, within } from './support/process.ts';
import { type Receiver, startReceiver, status, until } from './support/receiver.ts';

const ISS = 'https://issuer.test';
const ENV = { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_POLL_INTERVAL: '20ms', WEBHOOK_TIMEOUT: '2s', WEBHOOK_RETRY_DELAY: '100ms' };

let db: pg.Client;
let receiver: Receiver;
const secret = `whsec_${randomBytes(24).toString('base64')}`;

test.after(async () => {
  await receiver?.close();
  await releaseTestDatabase();
});

/** A database with one user and its endpoint at the receiver. */
async function setUp(label: string): Promise<string> {
  await receiver?.close();
  const url = await createMigratedTestDatabase(label);
  db = new pg.Client({ connectionString: url });
  await db.connect();
  receiver = await startReceiver();
  await db.query(`insert into app_user (iss, sub, registration_datetime, terms_version) values ($1, 'alice', now(), '2024-01')`, [ISS]);
  await db.query(`insert into webhook_endpoint (id, user_iss, user_sub, url, secret) values ($1, $2, 'alice', $3, $4)`, [
    randomUUID(),
    ISS,
    receiver.url,
    secret,
  ]);
  return url;
}

async function emit(n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  await db.query(
    `insert into alert_event (id, user_iss, user_sub, type, data) select id, $2, 'alice', 'change.detected', '{}' from unnest($1::uuid[]) id`,
    [ids, ISS],
  );
  return ids;
}

async function start(url: string): Promise<ServerProcess> {
  const s = runServer(['start', '--port', String(await freePort()), '--database-url', url], ENV);
  await waitFor(
    () => /serving on/.test(s.stderr()) || s.child.exitCode !== null,
    () => `serving (stderr: ${s.stderr()})`,
  );
  return s;
}

async function stop(s: ServerProcess): Promise<void> {
  s.child.kill('SIGTERM');
  const code = await within(s.exited, 60_000, 'late' as const);
  if (code === 'late') s.child.kill('SIGKILL');
  assert.is(code, 0, s.stderr());
}

const ids = () => receiver.received.map((got) => String(got.headers['webhook-id']));

test('a process killed with attempts in flight: the next start delivers them, and the events written meanwhile, with their ids', async () => {
  const url = await setUp('webhook_kill');
  receiver.answer = () => undefined; // hangs: the attempts stay in flight
  const first = await start(url);
  const inFlight = await emit(3);
  await until(() => receiver.received.length === 3, 'three attempts in flight');
  first.child.kill('SIGKILL');
  await first.exited;
  const meanwhile = await emit(2);
  receiver.received.length = 0;
  receiver.answer = status(204);
  const second = await start(url);
  try {
    await until(() => receiver.received.length === 5, 'five deliveries', 30_000);
    assert.equal(ids().sort(), [...inFlight, ...meanwhile].sort());
    for (const got of receiver.received) new Webhook(secret).verify(got.body, got.headers as Record<string, string>);
    const succeeded = async () => (await db.query("select count(*)::int as n from webhook_delivery where state = 'succeeded'")).rows[0].n;
    await until(async () => (await succeeded()) === 5, 'five deliveries recorded');
    assert.is(receiver.received.length, 5, 'each once');
  } finally {
    await stop(second);
    await db.end();
  }
});

test('two processes on one database: every attempt made once', async () => {
  const url = await setUp('webhook_two');
  receiver.answer = (_n, _got, res) => setTimeout(() => res.writeHead(204).end(), 50);
  const [a, b] = await Promise.all([start(url), start(url)]);
  try {
    const sent = await emit(40);
    await until(() => receiver.received.length >= 40, 'forty deliveries', 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.is(receiver.received.length, 40, 'no attempt twice');
    assert.equal(ids().sort(), sent.sort());
    const { rows } = await db.query(
      "select count(*)::int as n, sum(attempts)::int as attempts from webhook_delivery where state = 'succeeded'",
    );
    assert.equal(rows[0], { n: 40, attempts: 40 });
  } finally {
    await Promise.all([stop(a), stop(b)]);
    await db.end();
  }
});

test.run();
