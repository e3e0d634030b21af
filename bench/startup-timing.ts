/**
 * Wall time of short commands (the CLI) and of a server's start, and the server's resident memory.
 * Every child runs the same Node as the harness with a clean environment (startup-process.ts).
 */
import { readFileSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import { percentile } from './stats.ts';
import { cleanEnv, track } from './startup-process.ts';
import { productionNodeArgs } from './server-process.ts';

export interface Timing {
  medianMs: number;
  p90Ms: number;
  samplesMs: number[];
  /** Median CPU time (user + system, 10 ms ticks) of the process and what it waited for. */
  cpuMedianMs: number;
}

export interface Command {
  key: string;
  /** As shown in the report. */
  label: string;
  /** Arguments of `node`. */
  args: string[];
}

const r1 = (v: number) => Math.round(v * 10) / 10;

const median = (values: number[]) =>
  r1(
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    ),
  );

/**
 * CPU milliseconds from /proc/<pid>/stat: utime + stime (every thread), plus cutime + cstime (the
 * children it has waited for) when `children`. Linux counts in ticks of 1/100 s. Other programs
 * loading the machine change CPU time much less than wall time: the figure to trust on a busy one.
 */
function cpuMs(pid: number | 'self', children: boolean): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat
    .slice(stat.lastIndexOf(')') + 2)
    .split(' ')
    .map(Number);
  // after the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
  return (children ? f[13]! + f[14]! : f[11]! + f[12]!) * 10;
}

/** The processes whose parent is `pid` (tsx's esbuild service, for one). */
function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // ended meanwhile
      }
    });
}

export function timing(samples: number[], cpuSamples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    medianMs: r1(percentile(sorted, 50)),
    p90Ms: r1(percentile(sorted, 90)),
    samplesMs: samples.map(r1),
    cpuMedianMs: median(cpuSamples),
  };
}

/** Wall time and CPU time of one run; the CPU is what our reaped children's account grew by. */
function timeOnce(cwd: string, args: string[]): Promise<{ ms: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const cpuBefore = cpuMs('self', true);
    const started = performance.now();
    const child = track(process.execPath, args, { cwd, env: cleanEnv(), stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - started;
      if (code === 0) resolve({ ms, cpu: cpuMs('self', true) - cpuBefore });
      else reject(new Error(`node ${args.join(' ')} exited with ${code}`));
    });
  });
}

/**
 * Times each command `runs` times. The commands take turns (one round runs each once) so that a
 * burst of load from elsewhere on the machine falls on all of them alike; one unmeasured round first
 * fills the file cache (and tsx's compile cache, which a developer running from a clone has warm).
 */
export async function timeCommands(cwd: string, commands: Command[], runs: number): Promise<Record<string, Timing>> {
  const samples = new Map<string, { ms: number; cpu: number }[]>(commands.map((c) => [c.key, []]));
  for (let round = -1; round < runs; round++) {
    for (const c of commands) {
      const run = await timeOnce(cwd, c.args);
      if (round >= 0) samples.get(c.key)!.push(run);
    }
  }
  return Object.fromEntries(
    commands.map((c) => {
      const runs = samples.get(c.key)!;
      return [
        c.key,
        timing(
          runs.map((r) => r.ms),
          runs.map((r) => r.cpu),
        ),
      ];
    }),
  );
}

export interface ServerStart {
  /** Spawn to the `serving on …` log line. */
  listenMs: number;
  /** Spawn to the first 200 of GET /api/v1/health. */
  healthMs: number;
  /** CPU time of the server process (all its threads) and of its child processes until then. */
  cpuMs: number;
  /** VmRSS after `idleSeconds` without requests. */
  idleRssMb: number;
  /** VmRSS of its child processes then (tsx's esbuild service; none when compiled). */
  childRssMb: number;
  /** VmRSS shortly after the warm-up requests. */
  warmRssMb: number;
}

export interface ServerOptions {
  cwd: string;
  /** The server's entry point (`bin/benchmarks-server.js` or `packages/server/dist/cli.js`). */
  entry: string;
  databaseUrl: string;
  dataDir: string;
  idleSeconds: number;
  warmupRequests: number;
  env?: Record<string, string>;
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return r1(Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? 0) / 1024);
}

/** Resolves with the URL of the `serving on …` JSON log line; rejects if the process ends first. */
function servingUrl(stderr: NodeJS.ReadableStream, exited: Promise<number | null>): Promise<string> {
  return new Promise((resolve, reject) => {
    let pending = '';
    const tail: string[] = [];
    stderr.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 20) tail.shift();
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg?.startsWith('serving on ') && entry.url) resolve(entry.url);
        } catch {
          // not a log line (a warning from Node, say): kept in the tail for the error message
        }
      }
    });
    void exited.then((code) => reject(new Error(`the server exited with ${code} before serving:\n${tail.join('\n')}`)));
  });
}

async function get(url: string): Promise<number> {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.status;
}

/**
 * Starts the server as the container image runs it (its Node flags, NODE_ENV=production), measures
 * it, and stops it with SIGTERM as an orchestrator would, waiting for it to exit.
 */
export async function measureServerStart(o: ServerOptions): Promise<ServerStart> {
  const args = [
    ...productionNodeArgs(),
    o.entry,
    'start',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--database-url',
    o.databaseUrl,
    '--data-dir',
    o.dataDir,
  ];
  const started = performance.now();
  const child = track(process.execPath, args, {
    cwd: o.cwd,
    env: cleanEnv({ NODE_ENV: 'production', ...o.env }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const url = await servingUrl(child.stderr!, exited);
    const listenMs = performance.now() - started;
    // The server listens before it logs, so the first request normally succeeds; retry regardless.
    while ((await get(`${url}/api/v1/health`).catch(() => 0)) !== 200) await sleep(5);
    const healthMs = performance.now() - started;
    const cpu = childrenOf(child.pid!).reduce((sum, pid) => sum + cpuMs(pid, false), cpuMs(child.pid!, false));
    await sleep(o.idleSeconds * 1000);
    const idleRssMb = await rssMb(child.pid!);
    let childRssMb = 0;
    for (const pid of childrenOf(child.pid!)) childRssMb += await rssMb(pid);
    for (let i = 0; i < o.warmupRequests; i++) {
      const path = i % 2 ? '/api/v1/benchmarks' : '/api/v1/health';
      const status = await get(url + path);
      if (status !== 200) throw new Error(`GET ${path} answered ${status}`);
    }
    await sleep(Math.min(2, o.idleSeconds) * 1000);
    const warmRssMb = await rssMb(child.pid!);
    return { listenMs: r1(listenMs), healthMs: r1(healthMs), cpuMs: cpu, idleRssMb, childRssMb: r1(childRssMb), warmRssMb };
  } finally {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killer);
  }
}
