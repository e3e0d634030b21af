/**
 * The measuring instruments: latency summaries; HTTP load with autocannon; the raw SQL baseline with
 * pgbench or a node-postgres loop; and where the CPU goes (Linux /proc) during a run.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** Percentiles by nearest rank over every sample. */
export function summarize(samples: number[]) {
  const sorted = Array.from(Float64Array.from(samples).sort());
  const at = (p: number) => r2(sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0);
  const mean = sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : 0;
  return { count: sorted.length, mean: r2(mean), p50: at(50), p95: at(95), p99: at(99), max: r2(sorted.at(-1) ?? 0) };
}
export type LatencySummary = ReturnType<typeof summarize>;
export const r2 = (v: number) => Math.round(v * 100) / 100;
export const r1 = (v: number) => Math.round(v * 10) / 10;
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
/** `text` parsed as JSON, or `otherwise` when it is not JSON. */
export function parseJson(text: string, otherwise: unknown): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return otherwise;
  }
}
/** Polls `done` every `ms` until it is true (or `maxSeconds` have passed); the seconds waited. */
export async function waitUntil(done: () => Promise<boolean>, ms: number, maxSeconds = Number.POSITIVE_INFINITY): Promise<number> {
  const started = performance.now();
  while (!(await done()) && performance.now() - started < maxSeconds * 1000) await sleep(ms);
  return (performance.now() - started) / 1000;
}
/** Lines `[name hh:mm:ss] message`, on stderr unless told. */
export function logger(name: string, write = console.error) {
  return (message: string) => write(`[${name} ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/** A request: its path and query already URL-encoded. */
export type HttpRequestSpec = { method: 'GET' | 'POST'; path: string; headers?: Record<string, string>; body?: string };
export type HttpRunStats = Awaited<ReturnType<typeof runHttpLoad>>;
/** The part of autocannon 9's API used here (the package ships no types). */
type Result = Record<'duration' | '2xx' | 'errors' | 'timeouts' | 'non2xx', number> & {
  statusCodeStats: Record<string, { count: number }>;
  latency: Record<'p50' | 'p97_5' | 'p99', number>;
};
type Autocannon = (options: object, done: (err: Error | null, r: Result) => void) => { on(e: 'response', f: (...a: any[]) => void): void };
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/**
 * `connections` keep-alive connections send requests for `seconds`, each the next of `variants`;
 * latency percentiles from every 2xx response as autocannon times it (autocannon's own have no p95).
 * `responses` of any status, `ok` those 2xx, and their rates.
 */
export function runHttpLoad(baseUrl: string, variants: HttpRequestSpec[], connections: number, seconds: number) {
  let next = 0;
  const setupRequest = (request: object) => {
    const v = variants[next++ % variants.length]!;
    return { ...request, method: v.method, path: v.path, headers: { accept: 'application/json', ...v.headers }, body: v.body ?? '' };
  };
  const latencies: number[] = [];
  let [responses, bytes] = [0, 0];
  const stats = ({ duration, latency, statusCodeStats, errors, timeouts, non2xx, ...r }: Result) => {
    const answers = {
      connections,
      seconds: duration,
      responses,
      ok: r['2xx'],
      rps: r1(responses / duration),
      okPerSecond: r1(r['2xx'] / duration),
    };
    const autocannonMs = { p50: latency.p50, p97_5: latency.p97_5, p99: latency.p99 };
    const statusCodes = Object.fromEntries(Object.entries(statusCodeStats).map(([code, { count }]) => [code, count]));
    const meanResponseBytes = responses ? Math.round(bytes / responses) : 0;
    return { ...answers, latencyMs: summarize(latencies), autocannonMs, errors, timeouts, non2xx, statusCodes, meanResponseBytes };
  };
  return new Promise<ReturnType<typeof stats>>((resolve, reject) => {
    const options = { url: baseUrl, connections, duration: seconds, timeout: 120, requests: [{ setupRequest }] };
    const instance = autocannon(options, (err, r) => (err ? reject(err) : resolve(stats(r))));
    instance.on('response', (_client, status: number, resBytes: number, ms: number) => {
      responses++;
      bytes += resBytes;
      if (status >= 200 && status < 300) latencies.push(ms);
    });
  });
}

export type BaselineTool = 'pgbench' | 'node';
export type SqlTarget = { host: string; port: number; user: string; password: string; database: string };
export type SqlRunStats = Awaited<ReturnType<typeof runSqlLoad>>;

let pgbenchChecked: string | null | undefined;
export function pgbenchVersion(): string | null {
  if (pgbenchChecked === undefined) {
    const r = spawnSync('pgbench', ['--version'], { encoding: 'utf8' });
    pgbenchChecked = r.status === 0 ? r.stdout.trim() : null;
  }
  return pgbenchChecked;
}

/** A statement without its final semicolon. */
export const statement = (sql: string) => sql.trim().replace(/;\s*$/, '');
/** A connected node-postgres client of the baseline. */
export async function baselineClient(target: SqlTarget) {
  const client = new pg.Client({ ...target, application_name: 'bench-baseline' });
  await client.connect();
  return client;
}

/** The SQL baseline: a transaction is a variant's statements; pgbench picks one of 100 scripts at random, node goes round-robin. */
export async function runSqlLoad(tool: BaselineTool, run: SqlRun) {
  if (run.scripts.length === 0) throw new Error('no SQL to run');
  const latencies: number[] = [];
  const stats = tool === 'pgbench' ? await pgbench(run, latencies) : await loop(run, latencies);
  return { tool, connections: run.connections, ...stats, latencyMs: summarize(latencies) };
}
type SqlRun = { target: SqlTarget; scripts: string[][]; connections: number; seconds: number; workDir: string };

async function pgbench({ target, scripts, connections, seconds, workDir }: SqlRun, latencies: number[]) {
  const dir = join(workDir, `pgbench-${process.pid}-${Date.now()}`);
  mkdirSync(dir, { recursive: true });
  const files = scripts.slice(0, 100).map((statements, i) => {
    writeFileSync(join(dir, `script-${i}.sql`), statements.map((s) => `${statement(s)};\n`).join(''));
    return ['-f', `${join(dir, `script-${i}.sql`)}@1`];
  });
  // -n: no vacuum of pgbench's own tables; -T takes whole seconds.
  const whole = Math.max(1, Math.ceil(seconds));
  const args = `-n -M simple -c ${connections} -j ${Math.min(connections, 2)} -T ${whole} -l -p ${target.port}`.split(' ');
  args.push('--log-prefix', join(dir, 'log'), '-h', target.host, '-U', target.user, ...files.flat(), target.database);
  const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn('pgbench', args, { env: { ...process.env, PGPASSWORD: target.password, PGAPPNAME: 'bench-baseline' } });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  // Log lines: client_id transaction_no time(µs) script_no time_epoch time_us
  for (const name of readdirSync(dir).filter((f) => f.startsWith('log')))
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n'))
      if (line.split(' ').length >= 6) latencies.push(Number(line.split(' ')[2]) / 1000);
  rmSync(dir, { recursive: true, force: true });
  const tps = /tps = ([\d.]+) \(without initial connection time\)/.exec(out.stdout);
  const processed = /number of transactions actually processed: (\d+)/.exec(out.stdout);
  const failed = Number(/number of failed transactions: (\d+)/.exec(out.stdout)?.[1] ?? 0);
  if (!tps && out.code !== 0) throw new Error(`pgbench failed (exit ${out.code}): ${out.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  return {
    seconds: whole,
    transactions: processed ? Number(processed[1]) : latencies.length,
    tps: tps ? r1(Number(tps[1])) : 0,
    errors: failed + (out.code === 0 ? 0 : Math.max(1, (out.stderr.match(/aborted/g) ?? []).length)),
    firstError: /(client \d+ aborted[^\n]*|ERROR:[^\n]*)/.exec(out.stderr)?.[1] ?? null,
  };
}

async function loop({ target, scripts, connections, seconds }: SqlRun, latencies: number[]) {
  let errors = 0;
  let firstError: string | null = null;
  const clients = await Promise.all(Array.from({ length: connections }, () => baselineClient(target)));
  const started = performance.now();
  try {
    await Promise.all(
      clients.map(async (client, k) => {
        for (let i = k; performance.now() < started + seconds * 1000; i++) {
          const t0 = performance.now();
          try {
            for (const sql of scripts[i % scripts.length]!) await client.query(statement(sql));
            latencies.push(performance.now() - t0);
          } catch (err) {
            errors++;
            firstError ??= (err as Error).message;
            await client.query('rollback').catch(() => {});
          }
        }
      }),
    );
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  const elapsed = (performance.now() - started) / 1000;
  return { seconds: r2(elapsed), transactions: latencies.length, tps: r1(latencies.length / elapsed), errors, firstError };
}

// ---------------------------------------------------------------- CPU
// On a shared 2-core machine a run's throughput is bounded by 2 cores / (server + PostgreSQL + client
// CPU per request), and CPU other programs use during a run lowers its figures: the report shows it.

export const coreCount = cpus().length;
const cpuAccounting = existsSync('/proc/stat');
/** Linux reports process times in clock ticks of 1/100 s on every architecture Node supports. */
const TICK_MS = 10;

/** Busy and total ticks of the whole machine (user nice system idle iowait irq softirq steal). */
function machineTicks(): { busy: number; total: number } {
  const t = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1, 9).map(Number);
  const busy = t[0]! + t[1]! + t[2]! + t[5]! + t[6]! + t[7]!;
  return { busy, total: busy + t[3]! + t[4]! };
}

export type CpuGroups = { server: number; postgres: number };

/** CPU ticks of the server's, PostgreSQL's and this process's trees (their own and their reaped children's), and of the machine. */
function snapshot(groups: CpuGroups) {
  const procs = new Map<number, { ppid: number; self: number; children: number }>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // after the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.set(Number(name), { ppid: Number(f[1]), self: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) });
    } catch {
      // exited meanwhile
    }
  }
  const tree = (root: number, exclude: number[] = []) => {
    let sum = procs.get(root)?.children ?? 0;
    for (const stack = [root]; stack.length; ) {
      const pid = stack.pop()!;
      if (exclude.includes(pid) || !procs.has(pid)) continue;
      sum += procs.get(pid)!.self;
      for (const [child, t] of procs) if (t.ppid === pid) stack.push(child);
    }
    return sum;
  };
  // Reaped children of this process (pgbench) count as client; the server and PostgreSQL are not reaped before the end.
  const client = tree(process.pid, [groups.server, groups.postgres]);
  return { at: performance.now(), machine: machineTicks(), server: tree(groups.server), postgres: tree(groups.postgres), client };
}

/** Measures the window from now to `stop()`: null where /proc is missing. */
export function cpuMeter(groups: CpuGroups) {
  if (!cpuAccounting) return { stop: () => null };
  const first = snapshot(groups);
  return {
    stop() {
      const last = snapshot(groups);
      const seconds = (last.at - first.at) / 1000;
      const ms = (k: 'server' | 'postgres' | 'client') => Math.max(0, (last[k] - first[k]) * TICK_MS);
      const [server, postgres, client] = [ms('server'), ms('postgres'), ms('client')];
      const busy = Math.max(0, (last.machine.busy - first.machine.busy) * TICK_MS);
      const total = Math.max(1, (last.machine.total - first.machine.total) * TICK_MS);
      const other = Math.max(0, busy - server - postgres - client);
      const perS = (v: number) => Math.round(v / seconds);
      const rates = { serverMsPerS: perS(server), postgresMsPerS: perS(postgres), clientMsPerS: perS(client), otherMsPerS: perS(other) };
      // Shares of the whole machine used by programs outside the benchmark, and idle.
      const share = (v: number) => Math.round((1000 * v) / total) / 10;
      const shares = { otherPercent: share(other), idlePercent: share(total - busy) };
      return { ...rates, ...shares, serverMs: Math.round(server), postgresMs: Math.round(postgres), clientMs: Math.round(client) };
    },
  };
}
export type CpuUsage = NonNullable<ReturnType<ReturnType<typeof cpuMeter>['stop']>>;

/** Waits (at most `maxSeconds`) until less than 15 % of the machine is used over a second; the seconds waited. */
export async function waitForQuiet(maxSeconds: number): Promise<{ waited: number }> {
  if (!cpuAccounting || maxSeconds <= 0) return { waited: 0 };
  const started = performance.now();
  for (;;) {
    const a = machineTicks();
    await sleep(1000);
    const b = machineTicks();
    const waited = (performance.now() - started) / 1000;
    if ((100 * (b.busy - a.busy)) / Math.max(1, b.total - a.total) < 15 || waited >= maxSeconds) return { waited: Math.round(waited) };
  }
}
