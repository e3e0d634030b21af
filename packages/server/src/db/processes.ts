/**
 * What the operating system says of another process: whether it runs, its parent and its command
 * line. From /proc on Linux (container images often have no `ps`), from `ps` elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Its arguments, joined by spaces. */
  command: string;
}

/** The process `pid`, or undefined when none runs under that id (an ended process not yet reaped included). */
export function processInfo(pid: number): ProcessInfo | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  if (process.platform === 'linux') return fromProc(pid);
  try {
    const out = execFileSync('ps', ['-o', 'ppid=,stat=,command=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    const m = /^(\d+)\s+(\S+)\s+(.*)$/.exec(out);
    if (!m || m[2]!.startsWith('Z')) return undefined;
    return { pid, ppid: Number(m[1]), command: m[3]! };
  } catch {
    return undefined;
  }
}

function fromProc(pid: number): ProcessInfo | undefined {
  try {
    // "pid (name) S ppid ...": the name may hold spaces and parentheses, the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z' || state === 'X') return undefined;
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0+$/, '').replaceAll('\0', ' ');
    return { pid, ppid: Number(ppid), command };
  } catch {
    return undefined;
  }
}
