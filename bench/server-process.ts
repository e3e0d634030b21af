/**
 * Starts the API server in a child process (`node <the Dockerfile's NODE_OPTIONS> --import tsx
 * bench/server-child.ts`, NODE_ENV production, as the container image runs it) so that its memory
 * can be measured on its own: the resident set size is sampled every 200 ms from
 * /proc/<pid>/status (or `ps -o rss= -p <pid>` where there is no /proc), and the peak is kept per
 * measurement window.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RawConfig } from '../packages/server/src/config.ts';
import type { CapturedStatement, ChildMessage, ParentMessage } from './server-child.ts';

const CHILD = fileURLToPath(new URL('./server-child.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SAMPLE_INTERVAL_MS = 200;

export interface ServerProcess {
  url: string;
  pid: number;
  /** Current resident set size in MB. */
  rssMb(): Promise<number>;
  /**
   * Starts a measurement window; `end` returns its peak RSS (MB), the number of samples and the
   * samples themselves (ms since the window started, MB).
   */
  window(): { end(): RssWindow };
  /** Peak RSS over the whole life of the process so far (MB). */
  peakMb(): number;
  capture(on: boolean): void;
  /** The statements recorded since the last drain. */
  drain(): Promise<CapturedStatement[]>;
  memoryUsage(): Promise<NodeJS.MemoryUsage>;
  stop(): Promise<void>;
}

async function readRssKb(pid: number): Promise<number> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    if (m) return Number(m[1]);
  } catch {
    // no /proc: fall back to ps
  }
  return new Promise((resolve) => {
    execFile('ps', ['-o', 'rss=', '-p', String(pid)], (err, stdout) => resolve(err ? 0 : Number(stdout.trim()) || 0));
  });
}

/**
 * The Node flags of a production server, read from the Dockerfile's `ENV NODE_OPTIONS=…` (the heap
 * budget; docs/deploy.md, Memory). Without it V8 sizes the heap for the machine (4 GB here) and lets
 * garbage of finished requests pile up to several times the live heap before collecting it.
 */
export function productionNodeArgs(): string[] {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const m = /^ENV NODE_OPTIONS=(?:"([^"]*)"|(\S+))\s*$/m.exec(dockerfile);
  if (!m) throw new Error('The Dockerfile sets no NODE_OPTIONS: the benchmark runs the server as the image does.');
  return (m[1] ?? m[2]!).split(' ').filter(Boolean);
}

/** The server's Node flags: production's, then BENCH_SERVER_NODE_ARGS (which may override them). */
export function serverNodeArgs(): string[] {
  // BENCH_SERVER_NODE_ARGS: extra Node flags for the server, e.g. --cpu-prof when looking for a hot spot.
  return [...productionNodeArgs(), ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
}

/** The RSS of the server over a measurement window. */
export interface RssWindow {
  peakMb: number;
  samples: number;
  series: { ms: number; mb: number }[];
}

export async function startServerProcess(config: RawConfig, log: (message: string) => void): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [...serverNodeArgs(), '--import', join(ROOT, 'scripts/dev/register.js'), CHILD], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'production', BENCH_SERVER_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pid = child.pid!;
  let nextId = 1;
  const waiting = new Map<number, (message: ChildMessage) => void>();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let ready: (url: string) => void;
  let failed: (err: Error) => void;
  const started = new Promise<string>((res, rej) => {
    ready = res;
    failed = rej;
  });
  child.on('message', (message: ChildMessage) => {
    if (message.type === 'ready') ready(message.url);
    else if (message.type === 'failed') failed(new Error(`the server did not start: ${message.message}`));
    else waiting.get(message.id)?.(message);
  });
  child.once('exit', (code, signal) => failed(new Error(`the server exited during start-up (code ${code}, signal ${signal})`)));
  const url = await started;

  let overall = 0;
  let windowPeak = 0;
  let windowSamples = 0;
  let windowStart = performance.now();
  let windowSeries: { ms: number; mb: number }[] = [];
  let sampling = false;
  const timer = setInterval(() => {
    if (sampling) return;
    sampling = true;
    void readRssKb(pid).then((kb) => {
      sampling = false;
      const mb = kb / 1024;
      overall = Math.max(overall, mb);
      windowPeak = Math.max(windowPeak, mb);
      windowSamples++;
      windowSeries.push({ ms: Math.round(performance.now() - windowStart), mb: Math.round(mb * 10) / 10 });
    });
  }, SAMPLE_INTERVAL_MS);
  timer.unref();

  const request = <T extends ChildMessage>(make: (id: number) => ParentMessage): Promise<T> => {
    const id = nextId++;
    return new Promise((resolve) => {
      waiting.set(id, (m) => {
        waiting.delete(id);
        resolve(m as T);
      });
      child.send(make(id));
    });
  };
  log(`server started at ${url} (pid ${pid})`);

  return {
    url,
    pid,
    rssMb: async () => (await readRssKb(pid)) / 1024,
    window() {
      windowPeak = 0;
      windowSamples = 0;
      windowStart = performance.now();
      const series: { ms: number; mb: number }[] = [];
      windowSeries = series;
      return {
        end: () => ({ peakMb: Math.round(windowPeak * 10) / 10, samples: windowSamples, series: series.slice() }),
      };
    },
    peakMb: () => Math.round(overall * 10) / 10,
    capture(on) {
      child.send({ type: 'capture', on } satisfies ParentMessage);
    },
    drain: async () => (await request<Extract<ChildMessage, { type: 'drained' }>>((id) => ({ type: 'drain', id }))).statements,
    memoryUsage: async () => (await request<Extract<ChildMessage, { type: 'memory' }>>((id) => ({ type: 'memory', id }))).usage,
    async stop() {
      clearInterval(timer);
      if (child.exitCode === null && child.signalCode === null) {
        child.send({ type: 'stop' } satisfies ParentMessage);
        const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
}
