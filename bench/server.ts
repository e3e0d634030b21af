/**
 * The API server as users run it (`node <the Dockerfile's NODE_OPTIONS> bin/benchmarks-server.js start`, NODE_ENV production), in
 * a process of its own so that its memory is measured alone: the RSS is sampled every 200 ms from /proc/<pid>/status.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@benchmarks/server';
import { r1, sleep } from './measure.ts';

/** The repository's root. */
export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type ServerProcess = Awaited<ReturnType<typeof startServerProcess>>;
type Sample = { ms: number; mb: number };

const readRssMb = async (pid: number) =>
  Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1] ?? 0) / 1024;

/**
 * The Node flags of a production server, read from the Dockerfile's `ENV NODE_OPTIONS=…` (its heap
 * budget, docs/deploy.md), then BENCH_SERVER_NODE_ARGS (e.g. --cpu-prof when looking for a hot spot).
 */
export function serverNodeArgs(): string[] {
  const m = /^ENV NODE_OPTIONS=(?:"([^"]*)"|(\S+))\s*$/m.exec(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  if (!m) throw new Error('The Dockerfile sets no NODE_OPTIONS: the benchmark runs the server as the image does.');
  return [...(m[1] ?? m[2]!).split(' '), ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ')].filter(Boolean);
}

/** Starts the server with these environment variables (DATABASE_URL, OIDC_ISSUERS…) and waits for /health. */
export async function startServerProcess(env: Record<string, string>, log: (message: string) => void) {
  const port = await freePort();
  const vars = { ...process.env, NODE_ENV: 'production', HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env };
  const args = [...serverNodeArgs(), join(ROOT, 'bin/benchmarks-server.js'), 'start'];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: vars, stdio: ['ignore', 'inherit', 'inherit'] });
  const pid = child.pid!;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (const until = Date.now() + 120_000; !(await fetch(`${url}/api/v1/health`).catch(() => null))?.ok; await sleep(100)) {
    if (child.exitCode !== null) throw new Error(`the server exited during start-up (code ${child.exitCode})`);
    if (Date.now() > until) throw new Error('the server did not answer /health within 2 minutes');
  }
  // The samples of the current measurement window, and the peak over the life of the process.
  let [overall, sampling, current] = [0, false, { peak: 0, start: 0, series: [] as Sample[] }];
  const timer = setInterval(() => {
    if (sampling) return;
    sampling = true;
    void readRssMb(pid).then((mb) => {
      sampling = false;
      overall = Math.max(overall, mb);
      current.peak = Math.max(current.peak, mb);
      current.series.push({ ms: Math.round(performance.now() - current.start), mb: r1(mb) });
    });
  }, 200);
  timer.unref();
  log(`server started at ${url} (pid ${pid})`);
  return {
    url,
    pid,
    rssMb: () => readRssMb(pid),
    /** Starts a measurement window; `end` gives its peak RSS (MB) and samples (ms since its start, MB). */
    window() {
      const w = { peak: 0, start: performance.now(), series: [] as Sample[] };
      current = w;
      return { end: () => ({ peakMb: r1(w.peak), samples: w.series.length, series: w.series.slice() }) };
    },
    peakMb: () => r1(overall),
    async stop() {
      clearInterval(timer);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}
