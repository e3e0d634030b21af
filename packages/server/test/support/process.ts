/**
 * The real `benchmarks-server` command in a child process, for tests of start-up, shutdown and the
 * demo.
 *
 * `BIN` is the compiled server, packages/server/dist/cli.js: the `benchmarks-server` users install,
 * and a start costs about 1.6 s of processor time instead of 2.7 s through tsx. Importing this module
 * makes the build current first (scripts/current-build.ts): `npm test` did that before the first
 * file, so it only builds when a file is run alone after a source changed.
 *
 * `SOURCE_BIN` is bin/benchmarks-server.js, the sources through tsx, as `npm start` in a clone runs
 * them: the tests whose subject is that start it (`npm start` and `npm exec` in process-lifecycle and
 * startup-interrupt). The worker threads loading their sources are covered by the in-process test
 * servers, which run the sources (changes.test.ts: the change-point segmentation worker).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const SOURCE_BIN = new URL('../../../../bin/benchmarks-server.js', import.meta.url).pathname;
// Imported by its path: this project cannot name the scripts project, which builds on it.
const currentBuildModule = new URL('../../../../scripts/current-build.ts', import.meta.url).href;
await ((await import(currentBuildModule)) as { currentBuild: () => Promise<string> }).currentBuild();
export const BIN = new URL('../../../server/dist/cli.js', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Settles once it exited and its stdout and stderr are closed: every process that held them (its children too) ended, and all they wrote was read. */
  closed: Promise<void>;
  /** The stderr lines that are not JSON log lines. */
  plainErrorLines: () => string[];
  /** The JSON log lines of stderr, parsed. */
  logLines: () => Record<string, unknown>[];
}

/** The environment a server started by a test runs in: none of the settings the test runner may have. */
export function serverEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, DATABASE_URL: '', OIDC_ISSUERS: '', BENCHMARKS_DEMO_SEED: '', LOG_FORMAT: '', ...env };
}

/** The compiled server (`BIN`) with `args`. */
export function runServer(args: string[], env: Record<string, string> = {}): ServerProcess {
  return watch(spawn(process.execPath, [BIN, ...args], { env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] }));
}

/** A ServerProcess of a child started otherwise (npm, a terminal), its stdout and stderr piped. */
export function watch(child: ChildProcess): ServerProcess {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  const lines = () => err.split('\n').filter((l) => l.trim());
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    closed,
    plainErrorLines: () => lines().filter((l) => !l.startsWith('{')),
    logLines: () =>
      lines()
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/**
 * Polls `check` until it holds; fails after `ms`. The limit only ends a wait that would never end: a
 * server process takes over 10 s to start on a loaded machine.
 */
export async function waitFor(check: () => boolean, what: string | (() => string), ms = 120_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * What `promise` gives, or `late` when it takes longer than `ms`. The timer ends with the race: one
 * left pending would keep the test's process running for the rest of `ms` (the test runner fails a
 * file whose process does not end soon after it).
 */
export async function within<T, L>(promise: Promise<T>, ms: number, late: L): Promise<T | L> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<L>((resolve) => (timer = setTimeout(() => resolve(late), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The processes whose command line names the embedded cluster of `dataDir` (its postmaster). */
export function postgresProcessesFor(dataDir: string): string[] {
  const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.split('\n').filter((line) => line.includes(join(dataDir, 'postgres')) && !line.includes('ps -eo'));
}

/** Whether a process of this pid still runs (a zombie, ended but not reaped, does not). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // "pid (name) S ...": the state follows the name in parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** The pid of the postmaster recorded in the cluster's postmaster.pid, if any. */
export function recordedPostmasterPid(dataDir: string): number | undefined {
  try {
    return Number(readFileSync(join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
  } catch {
    return undefined;
  }
}

/** The demo's two tokens, once it printed them. */
export async function demoTokens(s: ServerProcess): Promise<{ user: string; admin: string }> {
  await waitFor(
    () => /Demo admin token[^\n]*\n(\S+)/.test(s.stdout()),
    () => `the demo tokens (stderr: ${s.stderr().slice(-2000)})`,
  );
  const user = /Demo user token[^\n]*\n(\S+)/.exec(s.stdout())![1]!;
  const admin = /Demo admin token[^\n]*\n(\S+)/.exec(s.stdout())![1]!;
  return { user, admin };
}

/**
 * `command` run by a shell on a terminal of its own (util-linux `script`), as a user runs it: its
 * stdout and stderr both arrive as the ServerProcess's stdout (with CRLF line ends), and `type`
 * writes to the terminal (`\x03` is Ctrl-C: SIGINT to the terminal's foreground process group).
 * The exit code is the command's. `exec`: an interactive shell leaves Ctrl-C to its foreground job,
 * but a `sh -c` that does not replace itself (dash, when $SHELL is /bin/sh) dies of the SIGINT and
 * `script` reports 130 whatever the command does.
 */
export function onTerminal(
  command: string,
  options: { cwd?: string; env?: Record<string, string> } = {},
): ServerProcess & { type(text: string): void } {
  const child = spawn('script', ['-qefc', `exec ${command}`, '/dev/null'], {
    cwd: options.cwd,
    env: serverEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return { ...watch(child), type: (text) => child.stdin!.write(text) };
}

/** Waits until the server serves (its "serving on" line, on stderr or on a terminal); returns its URL. Fails when it exits first. */
export async function serving(s: ServerProcess, ms = 120_000): Promise<string> {
  const url = () => /serving on (http:\/\/\S+?)["\s]/.exec(s.stderr() + s.stdout())?.[1];
  await waitFor(
    () => url() !== undefined || s.child.exitCode !== null,
    () => `the server to serve (stderr: ${s.stderr().slice(-3000)})`,
    ms,
  );
  if (!url()) throw new Error(`the server ended before it served (code ${s.child.exitCode}): ${s.stderr().slice(-3000)}`);
  return url()!;
}

/** The processes whose command line names `dataDir`: the server's (`--data-dir`) and its cluster's (postmaster, watchdog). */
export function processesNaming(dataDir: string): string[] {
  const ps = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' });
  return ps.split('\n').filter((line) => line.includes(dataDir) && !line.includes('ps -eo'));
}

/**
 * Waits until no process names the cluster of `dataDir` (postmaster, watchdog), or with `all`
 * none names `dataDir` at all (the server too); returns how long that took, in ms.
 */
export async function postgresGone(dataDir: string, ms: number, all = false): Promise<number> {
  const started = Date.now();
  const left = () => (all ? processesNaming(dataDir) : postgresProcessesFor(dataDir));
  await waitFor(
    () => left().length === 0,
    () => `no process of ${dataDir} (left: ${left().join(' | ')})`,
    ms,
  );
  return Date.now() - started;
}
