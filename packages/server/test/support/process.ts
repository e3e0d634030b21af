/**
 * The real `benchmarks-server` command in a child process (bin/benchmarks-server.js: the sources
 * through tsx), for tests of start-up, shutdown and the demo.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const BIN = new URL('../../../../bin/benchmarks-server.js', import.meta.url).pathname;

export interface ServerProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** The exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** The stderr lines that are not JSON log lines. */
  plainErrorLines: () => string[];
  /** The JSON log lines of stderr, parsed. */
  logLines: () => Record<string, unknown>[];
}

export function runServer(args: string[], env: Record<string, string> = {}): ServerProcess {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, DATABASE_URL: '', OIDC_ISSUERS: '', BENCHMARKS_DEMO_SEED: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const lines = () => err.split('\n').filter((l) => l.trim());
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    plainErrorLines: () => lines().filter((l) => !l.startsWith('{')),
    logLines: () =>
      lines()
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/**
 * Polls `check` until it holds; fails after `ms`. The limit only ends a wait that would never end: a
 * server process started from its sources takes over 10 s to start on a loaded machine.
 */
export async function waitFor(check: () => boolean, what: string | (() => string), ms = 120_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, 100));
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
