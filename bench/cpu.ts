/**
 * Where the CPU goes during a run (Linux /proc; elsewhere nothing is reported): the server process,
 * PostgreSQL (postmaster and backends), the load generator (this process, autocannon, pgbench) and
 * everything else on the machine. On a shared 2-core machine a run's throughput is bounded by
 * `2 cores / (server + PostgreSQL + client CPU per request)`, and CPU used by other programs during
 * a run makes its figures lower than they should be: the report shows it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { cpus } from 'node:os';

/** Linux reports process times in clock ticks of 1/100 s on every architecture Node supports. */
const TICK_MS = 10;

interface ProcTimes {
  ppid: number;
  /** utime + stime */
  self: number;
  /** cutime + cstime: reaped children */
  children: number;
}

function readProc(pid: number): ProcTimes | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields after the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14)
    return { ppid: Number(f[1]), self: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
  } catch {
    return null;
  }
}

function allProcesses(): Map<number, ProcTimes> {
  const out = new Map<number, ProcTimes>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const t = readProc(Number(name));
    if (t) out.set(Number(name), t);
  }
  return out;
}

/** Busy and total ticks of the whole machine. */
function machineTicks(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line;
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

export const cpuAccounting = existsSync('/proc/stat');

export interface CpuGroups {
  server: number;
  postgres: number;
}

export interface CpuUsage {
  /** CPU milliseconds per second of wall time, per group (1000 = one core fully busy). */
  serverMsPerS: number;
  postgresMsPerS: number;
  clientMsPerS: number;
  otherMsPerS: number;
  /** Share of the whole machine used by programs that are not part of the benchmark. */
  otherPercent: number;
  idlePercent: number;
  /** CPU milliseconds of each group in the window. */
  serverMs: number;
  postgresMs: number;
  clientMs: number;
}

type Snapshot = { at: number; machine: { busy: number; total: number }; groups: { server: number; postgres: number; client: number } };

function subtree(procs: Map<number, ProcTimes>, root: number, exclude: Set<number>): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, t] of procs) {
    const list = children.get(t.ppid) ?? [];
    list.push(pid);
    children.set(t.ppid, list);
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    if (exclude.has(pid) || !procs.has(pid)) continue;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

function snapshot(groups: CpuGroups): Snapshot {
  const procs = allProcesses();
  const sum = (pids: number[], withChildren: number[]) =>
    pids.reduce((s, pid) => s + procs.get(pid)!.self, 0) + withChildren.reduce((s, pid) => s + (procs.get(pid)?.children ?? 0), 0);
  const server = subtree(procs, groups.server, new Set());
  const postgres = subtree(procs, groups.postgres, new Set());
  const client = subtree(procs, process.pid, new Set([groups.server, groups.postgres]));
  return {
    at: performance.now(),
    machine: machineTicks(),
    groups: {
      server: sum(server, [groups.server]),
      postgres: sum(postgres, [groups.postgres]),
      // Reaped children of this process (pgbench) count as client; the server and PostgreSQL are not reaped before the end.
      client: sum(client, [process.pid]),
    },
  };
}

/** Measures a window: `start()` then `stop()`. Null where /proc is missing. */
export function cpuMeter(groups: CpuGroups): { stop(): CpuUsage | null } {
  if (!cpuAccounting) return { stop: () => null };
  const first = snapshot(groups);
  return {
    stop() {
      const last = snapshot(groups);
      const seconds = (last.at - first.at) / 1000;
      const ms = (a: number, b: number) => Math.max(0, (b - a) * TICK_MS);
      const server = ms(first.groups.server, last.groups.server);
      const postgres = ms(first.groups.postgres, last.groups.postgres);
      const client = ms(first.groups.client, last.groups.client);
      const busy = ms(first.machine.busy, last.machine.busy);
      const total = Math.max(1, ms(first.machine.total, last.machine.total));
      const other = Math.max(0, busy - server - postgres - client);
      const r = (v: number) => Math.round(v);
      return {
        serverMsPerS: r(server / seconds),
        postgresMsPerS: r(postgres / seconds),
        clientMsPerS: r(client / seconds),
        otherMsPerS: r(other / seconds),
        otherPercent: Math.round((1000 * other) / total) / 10,
        idlePercent: Math.round((1000 * (total - busy)) / total) / 10,
        serverMs: r(server),
        postgresMs: r(postgres),
        clientMs: r(client),
      };
    },
  };
}

/**
 * Waits (at most `maxSeconds`) until the machine is quiet: less than `busyPercent` of it used over a
 * second while the benchmark itself is idle. Returns the seconds waited and the last busy share.
 */
export async function waitForQuiet(maxSeconds: number, busyPercent = 15): Promise<{ waited: number; busyPercent: number }> {
  if (!cpuAccounting || maxSeconds <= 0) return { waited: 0, busyPercent: 0 };
  const started = performance.now();
  let share = 100;
  for (;;) {
    const a = machineTicks();
    await new Promise((r) => setTimeout(r, 1000));
    const b = machineTicks();
    share = (100 * (b.busy - a.busy)) / Math.max(1, b.total - a.total);
    const waited = (performance.now() - started) / 1000;
    if (share < busyPercent || waited >= maxSeconds) return { waited: Math.round(waited), busyPercent: Math.round(share) };
  }
}

export const coreCount = cpus().length;
