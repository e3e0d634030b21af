/**
 * No process outlives the server, and none blocks the next start (db/postmaster.ts, db/leftover.ts,
 * exit.ts): the embedded PostgreSQL ends when the server ends, however it ends (SIGKILL, an uncaught
 * exception, SIGTERM or SIGINT sent to the `npm` that started it, SIGKILL of the primary of
 * `--workers`), and the next start on the same data directory serves. Real processes, real signals.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  SOURCE_BIN,
  alive,
  postgresGone,
  postgresProcessesFor,
  recordedPostmasterPid,
  runServer,
  serverEnv,
  serving,
  onTerminal,
  watch,
  waitFor,
  type ServerProcess,
} from './support/process.ts';
import { WATCHDOG_NAME } from '../src/db/postmaster.ts';
import { RETRY_DELAYS_MS } from '../src/db/restarts.ts';

/** Generous: only a hang fails it, on a loaded machine too. The watchdog stops the cluster within a second or two (several tests log how long it took). */
const GONE_MS = 30_000;

let dir: string;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'benchmarks-lifecycle-'));
  await chmod(dir, 0o755); // PostgreSQL runs as the postgres user when we are root
});
test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function start(dataDir: string, more: string[] = [], env: Record<string, string> = {}): ServerProcess {
  return runServer(['start', '--port', '0', '--data-dir', dataDir, ...more], env);
}

/** Starts again on `dataDir`, checks it serves, and stops it cleanly. */
async function nextStartServes(dataDir: string): Promise<void> {
  const s = start(dataDir);
  try {
    const url = await serving(s);
    assert.is((await fetch(`${url}/api/v1/ready`)).status, 200);
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.is(await s.exited, 0, s.stderr());
  await postgresGone(dataDir, GONE_MS);
}

/** The lines above info logged once the server served: those of its stop. */
function aboveInfoAtStop(s: ServerProcess): string[] {
  const stderr = s.stderr();
  return stderr
    .slice(stderr.indexOf('serving on'))
    .split('\n')
    .filter((l) => /"level":"(warn|error)"/.test(l));
}

test('SIGKILL of the server: its PostgreSQL is gone within seconds, and the next start serves', async () => {
  const dataDir = join(dir, 'sigkill');
  const s = start(dataDir);
  await serving(s);
  assert.ok(recordedPostmasterPid(dataDir) && alive(recordedPostmasterPid(dataDir)!), 'the cluster runs');
  s.child.kill('SIGKILL');
  await s.exited;
  const ms = await postgresGone(dataDir, GONE_MS);
  console.log(`    PostgreSQL gone ${ms} ms after the server's SIGKILL`);
  await nextStartServes(dataDir);
});

test('an uncaught exception ends the server: its PostgreSQL is gone, and the next start serves', async () => {
  const dataDir = join(dir, 'crash');
  const crash = join(dir, 'crash-on-sigusr2.cjs');
  await writeFile(crash, `process.on('SIGUSR2', () => { throw new Error('crash for the test'); });\n`);
  const s = start(dataDir, [], { NODE_OPTIONS: `--require ${crash}` });
  await serving(s);
  s.child.kill('SIGUSR2');
  assert.is.not(await s.exited, 0);
  assert.match(s.stderr(), /crash for the test/);
  await postgresGone(dataDir, GONE_MS);
  await nextStartServes(dataDir);
});

/**
 * The server started by npm as a user starts it: `npm start` in a project whose start script runs
 * it, or `npm exec` (npx). npm runs the command under a shell. It runs from the sources through tsx
 * (bin/benchmarks-server.js, `npm start` in a clone): these tests keep that start-up covered, while
 * the other tests start the compiled server.
 */
async function npmProject(name: string, dataDir: string): Promise<string> {
  const project = join(dir, `project-${name}`);
  await mkdir(project, { recursive: true });
  const script = `${process.execPath} ${SOURCE_BIN} start --port 0 --data-dir ${dataDir}`;
  await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'npm-parent', private: true, scripts: { start: script } }));
  return project;
}

async function npm(command: 'start' | 'exec', dataDir: string): Promise<ServerProcess> {
  const project = await npmProject(command, dataDir);
  const args =
    command === 'start' ? ['start'] : ['exec', '--yes', '--', process.execPath, SOURCE_BIN, 'start', '--port', '0', '--data-dir', dataDir];
  return watch(spawn('npm', args, { cwd: project, env: serverEnv(), stdio: ['ignore', 'pipe', 'pipe'] }));
}

for (const command of ['start', 'exec'] as const) {
  test(`SIGTERM to \`npm ${command}\`: the server stops cleanly and leaves no process`, async () => {
    const dataDir = join(dir, `npm-${command}`);
    const s = await npm(command, dataDir);
    await serving(s);
    s.child.kill('SIGTERM');
    await s.exited;
    // npm passes SIGTERM to the shell it ran the command under, which ends, not to the server: the
    // server notices that its parent ended.
    const ms = await postgresGone(dataDir, GONE_MS, true);
    console.log(`    server and PostgreSQL gone ${ms} ms after SIGTERM to npm ${command}`);
    await s.closed; // the server's last lines read
    assert.match(s.stderr(), /"msg":"stopped"/, 'stopped cleanly');
    assert.equal(aboveInfoAtStop(s), [], 'nothing above info');
  });
}

test('Ctrl-C on the terminal of `npm start`: the server stops cleanly, PostgreSQL does not hear it, nothing left', async () => {
  const dataDir = join(dir, 'terminal');
  const project = await npmProject('terminal', dataDir);
  const s = onTerminal('npm start', { cwd: project, env: { LOG_FORMAT: 'json' } });
  await serving(s);
  s.type('\x03');
  await s.closed; // npm's exit code says it was interrupted
  await postgresGone(dataDir, GONE_MS, true);
  const output = s.stdout();
  assert.match(output, /"msg":"stopped"/, 'stopped cleanly');
  // PostgreSQL runs in a process group of its own: the terminal's SIGINT reaches the server alone,
  // which closes its connections before it stops the cluster.
  assert.not.match(output.slice(output.indexOf('serving on')), /"level":"(warn|error)"/, output);
});

test('SIGKILL of the primary of --workers 2: the workers and PostgreSQL are gone, and the next start serves', async () => {
  const dataDir = join(dir, 'workers');
  const s = start(dataDir, ['--workers', '2']);
  await serving(s);
  s.child.kill('SIGKILL');
  await s.exited;
  // The workers end when their channel to the primary closes, the cluster when the watchdog's pipe does.
  const ms = await postgresGone(dataDir, GONE_MS, true);
  console.log(`    workers and PostgreSQL gone ${ms} ms after the primary's SIGKILL`);
  await nextStartServes(dataDir);
});

/** The processes of the watchdog (db/postmaster.ts) of `dataDir`'s cluster. */
function watchdogPids(dataDir: string): number[] {
  return postgresProcessesFor(dataDir)
    .filter((line) => line.includes(WATCHDOG_NAME))
    .map((line) => Number(line.trim().split(' ')[0]));
}

test('a cluster left running by a server that ended is stopped by the next start, which serves', async () => {
  const dataDir = join(dir, 'orphan');
  const s = start(dataDir);
  await serving(s);
  const postmaster = recordedPostmasterPid(dataDir)!;
  // As when the server and its watchdog are killed together, or a server older than the watchdog is killed.
  // The server is stopped first: on a loaded machine it could otherwise see its watchdog end, between
  // the kills, and stop the cluster itself.
  s.child.kill('SIGSTOP');
  for (const pid of watchdogPids(dataDir)) process.kill(pid, 'SIGKILL');
  s.child.kill('SIGKILL');
  await s.exited;
  await new Promise((r) => setTimeout(r, 1000));
  assert.ok(alive(postmaster), 'the cluster runs on, its server gone');

  const next = start(dataDir);
  try {
    await serving(next);
    const line = next.logLines().find((l) => l.msg === 'stopped the embedded PostgreSQL left running by a server that ended');
    assert.equal(line && { level: line.level, pid: line.pid }, { level: 'warn', pid: postmaster });
    assert.not.ok(alive(postmaster));
  } finally {
    next.child.kill('SIGTERM');
  }
  assert.is(await next.exited, 0, next.stderr());
  await postgresGone(dataDir, GONE_MS, true);
});

test('a stale postmaster.pid, naming a process that ended or another live process, does not stop the next start', async () => {
  const dataDir = join(dir, 'orphan');
  const ended = spawn('true');
  await new Promise((r) => ended.on('exit', r));
  // This test's own process: alive, and not a postmaster (as after a container restart reuses ids).
  for (const pid of [ended.pid!, process.pid]) {
    await writeFile(join(dataDir, 'postgres', 'postmaster.pid'), `${pid}\n${join(dataDir, 'postgres')}\n`);
    await nextStartServes(dataDir);
  }
});

test('a second start on the data directory of a live server: one clear line, exit 1, the first serves on', async () => {
  const dataDir = join(dir, 'live');
  const first = start(dataDir);
  try {
    const url = await serving(first);
    const postmaster = recordedPostmasterPid(dataDir);
    const second = start(dataDir);
    assert.is(await second.exited, 1, second.stderr());
    assert.equal(second.plainErrorLines(), [
      `benchmarks-server: The data directory ${dataDir} is in use: the server of process ${first.child.pid} runs its embedded PostgreSQL (process ${postmaster}). Stop that server first, or give this one another --data-dir.`,
    ]);
    assert.is(recordedPostmasterPid(dataDir), postmaster);
    assert.is((await fetch(`${url}/api/v1/ready`)).status, 200);
  } finally {
    first.child.kill('SIGTERM');
  }
  assert.is(await first.exited, 0, first.stderr());
});

/** GET /ready: its status and problem code. */
async function ready(url: string): Promise<{ status: number; code?: string }> {
  const res = await fetch(`${url}/api/v1/ready`, { signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
  if (!res) return { status: 0 };
  const body = (await res.json().catch(() => ({}))) as { code?: string };
  return { status: res.status, code: body.code };
}

/** The answers of GET /ready until one satisfies `done` (or 30 s passed: the last one). */
async function readyUntil(url: string, done: (answer: { status: number; code?: string }) => boolean) {
  let answer = await ready(url);
  for (const until = Date.now() + 30_000; !done(answer) && Date.now() < until; answer = await ready(url)) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return answer;
}

/**
 * Kills the postmaster of `dataDir` while its directory is unreadable to PostgreSQL, so that starting
 * it again fails and is tried again until the directory is readable again: what /ready answers
 * meanwhile, and once it runs again.
 */
async function killPostmaster(url: string, dataDir: string) {
  const databaseDir = join(dataDir, 'postgres');
  await chmod(databaseDir, 0o000);
  try {
    process.kill(recordedPostmasterPid(dataDir)!, 'SIGKILL');
    const during = await readyUntil(url, (a) => a.code === 'DATABASE_RESTARTING');
    await chmod(databaseDir, 0o700);
    return { during, after: await readyUntil(url, (a) => a.status === 200) };
  } finally {
    await chmod(databaseDir, 0o700);
  }
}

test('the postmaster killed under a running server: /ready says DATABASE_RESTARTING, then it runs again', async () => {
  const dataDir = join(dir, 'restart');
  const s = start(dataDir);
  try {
    const url = await serving(s);
    const postmaster = recordedPostmasterPid(dataDir)!;
    const { during, after } = await killPostmaster(url, dataDir);
    assert.equal(during, { status: 503, code: 'DATABASE_RESTARTING' });
    assert.is(after.status, 200, 'ready again');
    await waitFor(
      () => s.logLines().some((l) => l.msg === 'the embedded PostgreSQL runs again'),
      () => `the restart (stderr: ${s.stderr().slice(-3000)})`,
    );
    const ended = s.logLines().find((l) => l.msg === 'the embedded PostgreSQL ended unexpectedly: starting it again');
    assert.equal(ended && [ended.level, ended.ended], ['error', 'signal SIGKILL']);
    assert.is.not(recordedPostmasterPid(dataDir), postmaster);
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.is(await s.exited, 0, s.stderr());
  await postgresGone(dataDir, GONE_MS, true);
});

test("--workers 2, the postmaster killed: the primary starts it again, the workers' /ready says so meanwhile", async () => {
  const dataDir = join(dir, 'restart-workers');
  const s = start(dataDir, ['--workers', '2']);
  try {
    const { during, after } = await killPostmaster(await serving(s), dataDir);
    assert.equal(during, { status: 503, code: 'DATABASE_RESTARTING' });
    assert.is(after.status, 200, 'ready again');
  } finally {
    s.child.kill('SIGTERM');
  }
  assert.is(await s.exited, 0, s.stderr());
  await postgresGone(dataDir, GONE_MS, true);
});

for (const workers of [[], ['--workers', '2']]) {
  test(`the postmaster killed and unable to start again ${workers.join(' ')}: the server runs on, /ready 503 DATABASE_FAILED says why, reads 503; SIGTERM ends it`, async () => {
    const dataDir = join(dir, `failed${workers.length}`);
    const s = start(dataDir, workers);
    const databaseDir = join(dataDir, 'postgres');
    try {
      const url = await serving(s);
      await chmod(databaseDir, 0o000);
      process.kill(recordedPostmasterPid(dataDir)!, 'SIGKILL');
      // 1 + 2 + 4 s of retries, each start failing at once.
      assert.equal(await readyUntil(url, (a) => a.code === 'DATABASE_FAILED'), { status: 503, code: 'DATABASE_FAILED' });
      const problem = (await (await fetch(`${url}/api/v1/ready`)).json()) as { reason?: string };
      assert.is(problem.reason, 'the embedded PostgreSQL ended unexpectedly (signal SIGKILL) and could not be started again');
      assert.is((await fetch(`${url}/api/v1/health`)).status, 200, 'alive');
      const read = await fetch(`${url}/api/v1/sites`);
      assert.equal([read.status, ((await read.json()) as { code?: string }).code], [503, 'DATABASE_UNAVAILABLE']);
      assert.is(s.child.exitCode, null, 'still running');
    } finally {
      await chmod(databaseDir, 0o700);
      s.child.kill('SIGTERM');
    }
    assert.is(await s.exited, 0, s.stderr());
    assert.equal(s.plainErrorLines(), [], s.stderr());
    const given = s.logLines().find((l) => l.msg === 'the embedded PostgreSQL is given up');
    assert.is(given?.level, 'error');
    assert.match(String(given?.error), /^The embedded PostgreSQL ended unexpectedly \(signal SIGKILL\) and could not be started again: /);
    const retries = s.logLines().filter((l) => l.msg === 'the embedded PostgreSQL did not start again: trying once more');
    assert.equal(
      retries.map((l) => [l.level, l.retryInMs]),
      RETRY_DELAYS_MS.map((ms) => ['warn', ms]),
    );
    await postgresGone(dataDir, GONE_MS, true);
  });
}

test.run();
