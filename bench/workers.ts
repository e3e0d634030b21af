/**
 * `npm run bench:workers [-- options]`: what each added worker process gives on this machine.
 * The same load (reads of single results and of result list pages, spread over the
 * data set) against `benchmarks-server start --workers N` for N = 1 … cores, on the benchmark's
 * kept data set (run `npm run bench -- --keep` once first) and the harness's PostgreSQL settings.
 *
 *   --workers <list>      worker counts, e.g. 1,2 (default 1 … os.availableParallelism())
 *   --connections <n>     concurrent connections (default 16: enough to keep every worker busy)
 *   --duration <s>        seconds per measured run (default 10), after a 3 s warm-up
 *   --rounds <n>          alternate the worker counts this many times (default 2; the best run counts)
 *   --data-dir <dir>      the kept data set (default bench/results/data)
 *
 * Writes bench/results/workers.json and prints a Markdown table for docs/performance.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { startBenchDatabase } from './database.ts';
import { runHttpLoad, type HttpRequestSpec, type HttpRunStats } from './http-load.ts';
import { productionNodeArgs } from './server-process.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Options {
  workers: number[];
  connections: number;
  duration: number;
  rounds: number;
  dataDir: string;
}

function parseArgs(argv: string[]): Options {
  const cores = availableParallelism();
  const o: Options = {
    workers: Array.from({ length: cores }, (_, i) => i + 1),
    connections: 16,
    duration: 10,
    rounds: 2,
    dataDir: join(ROOT, 'bench', 'results', 'data'),
  };
  for (let i = 0; i < argv.length; i++) {
    const value = () => argv[++i] ?? '';
    const arg = argv[i]!;
    if (arg === '--workers') o.workers = value().split(',').map(Number);
    else if (arg === '--connections') o.connections = Number(value());
    else if (arg === '--duration') o.duration = Number(value());
    else if (arg === '--rounds') o.rounds = Number(value());
    else if (arg === '--data-dir') o.dataDir = value();
    else throw new Error(`unknown option ${arg}`);
  }
  if (o.workers.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--workers is a list of positive integers');
  return o;
}

const log = (message: string) => console.error(`[workers ${new Date().toISOString().slice(11, 19)}] ${message}`);

/** A server with N workers on the data set's database; resolves once /health answers. */
async function startServer(databaseUrl: string, workers: number, port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [...productionNodeArgs(), '--import', join(ROOT, 'scripts/dev/register.js'), join(ROOT, 'packages/server/src/cli.ts'), 'start'],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'production',
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        WORKERS: String(workers),
        LOG_LEVEL: 'warn',
        ACCESS_LOG: 'false',
        // The load comes from one address: the limits would refuse it.
        RATE_LIMIT: '0',
        READ_RATE_LIMIT: '0',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('the server did not answer /health within 120 s');
    await new Promise((r) => setTimeout(r, 250));
  }
  // Every worker listening: node:cluster starts them one after the other.
  const seen = new Set<string>();
  while (seen.size < workers && Date.now() < deadline) {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`, { headers: { connection: 'close' } });
    seen.add(res.headers.get('x-worker') ?? 'single');
    await res.text();
    if (workers === 1) break;
  }
  return child;
}

async function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Reads of single results and of list pages of one benchmark, spread over the data set. */
async function variants(client: () => Promise<pg.Client>): Promise<HttpRequestSpec[]> {
  const db = await client();
  try {
    const ids = (await db.query<{ id: string }>('select id from result tablesample system (0.1) where not hidden limit 400')).rows;
    const benchmarks = (await db.query<{ id: string }>('select id from benchmark order by id')).rows;
    const out: HttpRequestSpec[] = ids.map(({ id }) => ({ method: 'GET', path: `/api/v1/results/${id}` }));
    benchmarks.forEach(({ id }, i) => {
      out.push({ method: 'GET', path: `/api/v1/results?benchmark_id=${id}&per_page=20&page=${1 + (i % 5)}` });
    });
    return out;
  } finally {
    await db.end();
  }
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  if (!existsSync(join(o.dataDir, 'bench-manifest.json'))) {
    throw new Error(`no kept data set in ${o.dataDir}: run \`npm run bench -- --keep\` first`);
  }
  const db = await startBenchDatabase(o.dataDir, log);
  const runs: { workers: number; round: number; stats: HttpRunStats; load: number }[] = [];
  try {
    const specs = await variants(() => db.client());
    log(`${specs.length} request variants; workers ${o.workers.join(', ')}; ${o.connections} connections; ${o.duration} s a run`);
    const port = 18_080;
    for (let round = 1; round <= o.rounds; round++) {
      for (const workers of o.workers) {
        const server = await startServer(db.url, workers, port);
        try {
          await runHttpLoad(`http://127.0.0.1:${port}`, specs, o.connections, 3);
          const stats = await runHttpLoad(`http://127.0.0.1:${port}`, specs, o.connections, o.duration);
          runs.push({ workers, round, stats, load: loadavg()[0]! });
          log(
            `round ${round}, ${workers} worker(s): ${stats.okPerSecond} 2xx/s, p50 ${stats.latencyMs.p50} ms, p99 ${stats.latencyMs.p99} ms, ` +
              `non-2xx ${stats.non2xx}, errors ${stats.errors}`,
          );
        } finally {
          await stopServer(server);
        }
      }
    }
  } finally {
    await db.stop();
  }
  const best = o.workers.map((workers) => {
    const mine = runs.filter((r) => r.workers === workers);
    return mine.reduce((a, b) => (b.stats.okPerSecond > a.stats.okPerSecond ? b : a));
  });
  const base = best[0]!.stats.okPerSecond;
  const rows = best.map((r, i) => {
    const previous = i === 0 ? null : best[i - 1]!.stats.okPerSecond;
    return {
      workers: r.workers,
      okPerSecond: r.stats.okPerSecond,
      p50: r.stats.latencyMs.p50,
      p99: r.stats.latencyMs.p99,
      vsOne: Math.round((r.stats.okPerSecond / base) * 100) / 100,
      addedWorkerGain: previous ? Math.round(((r.stats.okPerSecond - previous) / previous) * 100) : null,
      all: runs.filter((x) => x.workers === r.workers).map((x) => x.stats.okPerSecond),
    };
  });
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', 'workers.json'),
    `${JSON.stringify({ at: new Date().toISOString(), cores: availableParallelism(), options: { ...o, dataDir: undefined }, rows }, null, 2)}\n`,
  );
  console.log('| workers | 2xx/s (best of runs) | each run | vs 1 worker | gain of the added worker | p50 ms | p99 ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(
      `| ${r.workers} | ${r.okPerSecond} | ${r.all.join(', ')} | ×${r.vsOne} | ${r.addedWorkerGain === null ? '' : `${r.addedWorkerGain > 0 ? '+' : ''}${r.addedWorkerGain}%`} | ${r.p50} | ${r.p99} |`,
    );
  }
}

await main();
