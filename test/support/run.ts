/**
 * Processes as a user starts them: a clean environment, a time bound on everything, and a way to
 * see what is still running afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, relative, isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import { within } from '../../packages/server/test/support/process.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const isInside = (path: string, dir: string) => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * PATH and HOME only: nothing of `npm test` (npm_* and npm_config_* variables, NODE_OPTIONS with
 * the TypeScript loader, TEST_DATABASE_URL), and no PATH entry that `npm run` added
 * (node_modules/.bin of this repository holds a `benchmarks` that would hide a broken tarball).
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir && !isInside(dir, ROOT) && !/node_modules[\\/]\.bin$/.test(dir) && !dir.includes('node-gyp-bin'));
  const node = dirname(process.execPath); // the Node running this test, for the `#!/usr/bin/env node` bins
  return {
    PATH: [node, ...path.filter((dir) => dir !== node)].join(delimiter),
    HOME: process.env.HOME ?? homedir(),
    NO_COLOR: '1',
    // swagger-ui-dist pulls in @scarf/scarf, whose install script would try to reach the internet.
    SCARF_ANALYTICS: 'false',
    ...extra,
  };
}

export interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Running {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<Outcome>;
  /** Resolves with the first match of `pattern` in stdout or stderr; rejects on timeout or exit. */
  waitFor(stream: 'stdout' | 'stderr', pattern: RegExp, ms: number): Promise<RegExpMatchArray>;
  /** Kills the process and everything it started (its process group), if still running. */
  kill(): Promise<void>;
}

export interface StartOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Killed after this long, whatever happens (default 2 minutes). */
  timeoutMs?: number;
}

/** Starts `command` in its own process group, so that `kill()` also reaches what it spawned. */
export function start(command: string, args: string[], options: StartOptions): Running {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: options.env ?? cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += d));
  child.stderr!.on('data', (d) => (out.stderr += d));
  let done = false;
  const exited = new Promise<Outcome>((resolve) => {
    child.on('error', (err) => {
      out.stderr += String(err);
      done = true;
      resolve({ code: null, signal: null, ...out });
    });
    child.on('close', (code, signal) => {
      done = true;
      resolve({ code, signal, ...out });
    });
  });
  const killGroup = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  const timer = setTimeout(() => {
    out.stderr += `\n[test] killed after ${options.timeoutMs ?? 120_000} ms\n`;
    killGroup();
  }, options.timeoutMs ?? 120_000);
  void exited.then(() => clearTimeout(timer));
  return {
    child,
    stdout: () => out.stdout,
    stderr: () => out.stderr,
    exited,
    waitFor: (stream, pattern, ms) =>
      new Promise((resolve, reject) => {
        const until = Date.now() + ms;
        const poll = setInterval(() => {
          const match = pattern.exec(out[stream]);
          if (match) resolve(match);
          else if (done || Date.now() > until)
            reject(
              new Error(
                `${done ? 'exited' : `no ${pattern} within ${ms} ms`}; ${stream}:\n${out[stream]}\nother:\n${out[stream === 'stdout' ? 'stderr' : 'stdout']}`,
              ),
            );
          else return;
          clearInterval(poll);
        }, 100);
      }),
    kill: async () => {
      killGroup();
      if (!done) await within(exited, 5_000, undefined);
    },
  };
}

/** Runs a command to its end (bounded by `timeoutMs`) and returns its exit code and output. */
export async function run(command: string, args: string[], options: StartOptions): Promise<Outcome> {
  const p = start(command, args, options);
  try {
    return await p.exited;
  } finally {
    await p.kill();
  }
}

/** Runs a command that must succeed; throws with its output otherwise. */
export async function ok(command: string, args: string[], options: StartOptions): Promise<Outcome> {
  const o = await run(command, args, options);
  if (o.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${o.code ?? o.signal}:\n${o.stdout}\n${o.stderr}`);
  return o;
}

/** Processes (other than this one) whose command line mentions `text`: pid and command line. */
export function processesMentioning(text: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
      if (cmdline.includes(text)) found.push(`${pid} ${cmdline}`);
    } catch {
      // exited meanwhile
    }
  }
  return found;
}
