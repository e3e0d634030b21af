/**
 * Runs the real `benchmarks` CLI as a subprocess, bundled from its sources (support/cli-bundle.ts;
 * bin/benchmarks.js runs the same sources through tsx, ten times the CPU per command), with a clean
 * environment: its own HOME and config file, nothing inherited from the developer's shell.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cliBundle } from './cli-bundle.ts';

/** The CLI bundled from its current sources. */
export const BIN = await cliBundle();
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (an empty stdin otherwise). */
  input?: string;
  cwd?: string;
}

export interface TerminalOptions {
  env?: Record<string, string | undefined>;
  /** The terminal's width (`stty cols`); unset, the terminal says 0 and the CLI falls back to COLUMNS. */
  columns?: number;
}

export interface TerminalResult {
  code: number | null;
  /** What the terminal showed: stdout and stderr together, line ends as `\n`. */
  output: string;
}

/** A sandbox: a temporary HOME and config file, removed by `cleanup`. */
export interface Sandbox {
  dir: string;
  configPath: string;
  env: Record<string, string>;
  readConfig(): Promise<any>;
  run(args: string[], options?: CliOptions): Promise<CliResult>;
  /** Runs the CLI on a pseudo-terminal (util-linux `script`): stdout and stderr are a terminal. */
  runInTerminal(args: string[], options?: TerminalOptions): Promise<TerminalResult>;
  start(args: string[], options?: CliOptions): Running;
  cleanup(): Promise<void>;
}

export interface Running {
  child: ChildProcess;
  stderr(): string;
  /** Resolves with the first match of `pattern` in stderr. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<CliResult>;
}

function launch(args: string[], env: Record<string, string | undefined>, options: CliOptions = {}): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd ?? ROOT,
    env: { PATH: process.env.PATH, NO_COLOR: '1', ...env, ...options.env } as NodeJS.ProcessEnv,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const watchers: (() => void)[] = [];
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => {
    stderr += d;
    for (const w of watchers) w();
  });
  child.stdin!.end(options.input ?? '');
  const exited = new Promise<CliResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return {
    child,
    stderr: () => stderr,
    exited,
    // A hang guard: the CLI can take over 10 s to start on a loaded machine.
    waitForStderr: (pattern, timeoutMs = 120_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`stderr never matched ${pattern}; got:\n${stderr}`)), timeoutMs);
        const check = () => {
          const m = pattern.exec(stderr);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          }
        };
        watchers.push(check);
        check();
        void exited.then(() =>
          setTimeout(() => {
            clearTimeout(timer);
            if (!pattern.exec(stderr)) reject(new Error(`the process exited before stderr matched ${pattern}:\n${stderr}`));
          }, 10),
        );
      }),
  };
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function inTerminal(args: string[], env: Record<string, string | undefined>, options: TerminalOptions = {}): Promise<TerminalResult> {
  const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
  const stty = options.columns === undefined ? '' : `stty cols ${options.columns} rows 50; `;
  const child = spawn('script', ['-qefc', `${stty}exec ${command}`, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TERM: 'xterm', ...env, ...options.env } as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, output: output.replace(/\r\n/g, '\n') })));
}

export async function sandbox(): Promise<Sandbox> {
  const dir = await mkdtemp(join(tmpdir(), 'benchmarks-cli-test-'));
  const configPath = join(dir, 'config', 'benchmarks.json');
  const env = { HOME: dir, BENCHMARKS_CONFIG: configPath };
  return {
    dir,
    configPath,
    env,
    readConfig: async () => JSON.parse(await readFile(configPath, 'utf8')),
    run: (args, options) => launch(args, env, options).exited,
    runInTerminal: (args, options) => inTerminal(args, env, options),
    start: (args, options) => launch(args, env, options),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

/** A port nothing listens on: bound, then released. */
export async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Every non-empty line. */
export const lines = (text: string) => text.split(/\r?\n/).filter((l) => l.trim() !== '');
