/**
 * The demo's sample catalogue (`benchmarks-server start --demo`, as `benchmarks-demo` runs it):
 * `--demo-seed false` (BENCHMARKS_DEMO_SEED) starts empty; seeding happens once in the life of a
 * database, never again after everything was deleted, and never into a catalogue that held data.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoTokens, postgresProcessesFor, runServer, serving, type ServerProcess } from './support/process.ts';

let dir: string;
/** Demos still running: a failed assertion leaves none behind. */
const running = new Set<ServerProcess>();

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-demo-seed-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after.each(async () => {
  for (const s of running) {
    s.child.kill('SIGKILL');
    await s.exited;
  }
  running.clear();
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Demo {
  process: ServerProcess;
  api: string;
  admin: string;
}

async function startDemo(dataDir: string, args: string[] = [], env: Record<string, string> = {}): Promise<Demo> {
  // Port 0 and the URL the server prints: a port picked free beforehand may be taken by then (another
  // test run beside this one, or the demo provider's port remembered in the data directory).
  const server = runServer(['start', '--demo', '--port', '0', '--data-dir', dataDir, ...args], env);
  running.add(server);
  const { admin } = await demoTokens(server);
  return { process: server, api: `${await serving(server)}/api/v1`, admin };
}

async function stop(demo: Demo): Promise<void> {
  demo.process.child.kill('SIGTERM');
  assert.is(await demo.process.exited, 0, demo.process.stderr());
  running.delete(demo.process);
}

/** How many items each catalogue list and the result list hold (everything seeded or created by the admin is approved). */
async function catalogue(demo: Demo): Promise<Record<string, number>> {
  const items = async (path: string) => {
    const res = await call(demo, 'GET', `${path}?per_page=100`);
    assert.is(res.status, 200, path);
    return ((await res.json()) as { items: { id: string }[] }).items;
  };
  const sites = await items('/sites');
  let flavors = 0;
  for (const site of sites) flavors += (await items(`/sites/${site.id}/flavors`)).length;
  return {
    benchmarks: (await items('/benchmarks')).length,
    sites: sites.length,
    flavors,
    tags: (await items('/tags')).length,
    results: (await items('/results')).length,
  };
}

async function call(demo: Demo, method: string, path: string, json?: unknown): Promise<Response> {
  return fetch(`${demo.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${demo.admin}`, ...(json ? { 'content-type': 'application/json' } : {}) },
    body: json ? JSON.stringify(json) : undefined,
  });
}

/** Deletes every benchmark, site and tag (and so every flavor and result) through the API. */
async function deleteEverything(demo: Demo): Promise<void> {
  for (const list of ['benchmarks', 'sites', 'tags']) {
    const res = await call(demo, 'GET', `/${list}?per_page=100`);
    for (const item of ((await res.json()) as { items: { id: string }[] }).items) {
      const deleted = await call(demo, 'DELETE', `/${list}/${item.id}?cascade=true`);
      assert.is(deleted.status, 204, `DELETE /${list}/${item.id}: ${await deleted.text()}`);
    }
  }
}

const EMPTY = { benchmarks: 0, sites: 0, flavors: 0, tags: 0, results: 0 };
const SEEDED = { benchmarks: 1, sites: 3, flavors: 5, tags: 3, results: 40 };

function logged(demo: Demo, msg: RegExp): boolean {
  return demo.process.logLines().some((l) => msg.test(String(l.msg)));
}

test('--demo-seed false starts empty; the next start seeds once; after deleting everything no start seeds again', async () => {
  const dataDir = join(dir, 'seed-once');
  const empty = await startDemo(dataDir, ['--demo-seed', 'false']);
  assert.equal(await catalogue(empty), EMPTY, 'started empty');
  assert.ok(logged(empty, /not seeded: --demo-seed false/), empty.process.stderr());
  await stop(empty);

  const seeded = await startDemo(dataDir);
  assert.equal(await catalogue(seeded), SEEDED, 'a database never seeded, with an empty catalogue, is seeded');
  assert.ok(logged(seeded, /^demo catalogue seeded$/));
  await deleteEverything(seeded);
  assert.equal(await catalogue(seeded), EMPTY);
  await stop(seeded);

  const again = await startDemo(dataDir);
  assert.equal(await catalogue(again), EMPTY, 'not seeded again after everything was deleted');
  assert.ok(logged(again, /seeded only once per database/), again.process.stderr());
  await stop(again);
  assert.equal(postgresProcessesFor(dataDir), []);
});

test('BENCHMARKS_DEMO_SEED=false starts empty; a catalogue that held data is never seeded, even once emptied', async () => {
  const dataDir = join(dir, 'held-data');
  const empty = await startDemo(dataDir, [], { BENCHMARKS_DEMO_SEED: 'false' });
  assert.equal(await catalogue(empty), EMPTY);
  const created = await call(empty, 'POST', '/tags', { name: 'own-tag', description: 'the operator’s own' });
  assert.is(created.status, 201, await created.text());
  await stop(empty);

  const kept = await startDemo(dataDir);
  assert.equal(await catalogue(kept), { ...EMPTY, tags: 1 }, 'the sample catalogue is not mixed into data of its own');
  assert.ok(logged(kept, /already holds data/), kept.process.stderr());
  await deleteEverything(kept);
  await stop(kept);

  const later = await startDemo(dataDir);
  assert.equal(await catalogue(later), EMPTY, 'nor seeded once that data was deleted');
  await stop(later);
});

test('a --demo-seed that is not a boolean ends with one clear line and exit 1', async () => {
  const s = runServer(['start', '--demo', '--port', '0', '--data-dir', join(dir, 'bad'), '--demo-seed', 'maybe']);
  assert.is(await s.exited, 1);
  assert.equal(s.plainErrorLines(), [`benchmarks-server: BENCHMARKS_DEMO_SEED must be true or false, not 'maybe'.`]);
});

test.run();
