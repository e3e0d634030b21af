/**
 * Which test files share a Node process, and running one such group (scripts/dev/test-group.ts hosts
 * it) with a result per file. Loading tsx and the shared modules costs a process about 2.5 s of
 * processor time before its first test; a group pays it once.
 *
 * A file runs alone, in a process of its own, when
 * - a line `// test: own process: <reason>` is among its first lines (it changes what the whole
 *   process shares: signal handlers, global state of a library, memory it measures), or
 * - scripts/test-durations.json (checked in) gives it SOLO_SECONDS or more: a long file in a group
 *   would hold up the files after it, and gains little from sharing. The durations of the last run
 *   here do not decide it: on a loaded machine every file looks slow.
 * The others are dealt, the slowest first, each to the group with the least time so far, into as
 * many groups as GROUP_FILES files a group makes (a file of unknown duration counts as
 * UNKNOWN_SECONDS); the groups and the lone files then start the slowest first.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type Durations, endedChildrenCpuMs, orderBySlowest, type Report } from './test-order.ts';

export const SOLO_SECONDS = 30;
export const GROUP_FILES = 8;
export const UNKNOWN_SECONDS = 8;

/** The reason a file gives for running alone (`// test: own process: <reason>` near its top), if any. */
export function ownProcessReason(source: string): string | undefined {
  const match = /^\/\/ test: own process(?::\s*(.*))?$/m.exec(source.slice(0, 4000));
  return match ? match[1]?.trim() || 'marked' : undefined;
}

/** Why `file` runs alone (its marker, or its checked-in duration), if it does. */
export function runsAlone(file: string, source: string, checkedIn: Durations): string | undefined {
  const seconds = checkedIn[file];
  return ownProcessReason(source) ?? (seconds !== undefined && seconds >= SOLO_SECONDS ? `takes ${seconds}s` : undefined);
}

/**
 * `files` in groups, the slowest group first (a group's duration is the sum of its files'); the files
 * in `alone` each in a group of their own.
 */
export function groupFiles(files: string[], durations: Durations, alone: ReadonlySet<string> = new Set()): string[][] {
  const seconds = (f: string) => durations[f] ?? UNKNOWN_SECONDS;
  const ordered = orderBySlowest(files, durations);
  const shared = ordered.filter((f) => !alone.has(f));
  const groups = [
    ...ordered.filter((f) => alone.has(f)).map((f) => ({ files: [f], seconds: seconds(f) })),
    ...Array.from({ length: Math.ceil(shared.length / GROUP_FILES) }, () => ({ files: [] as string[], seconds: 0 })),
  ];
  const open = groups.slice(groups.length - Math.ceil(shared.length / GROUP_FILES));
  for (const file of shared) {
    const least = open.filter((g) => g.files.length < GROUP_FILES).reduce((a, b) => (b.seconds < a.seconds ? b : a));
    least.files.push(file);
    least.seconds += seconds(file);
  }
  // Stable: groups of equal duration keep their order.
  return groups
    .map((g, i) => ({ ...g, i }))
    .sort((a, b) => b.seconds - a.seconds || a.i - b.i)
    .map((g) => g.files);
}

/** What became of one file of a group. */
export interface FileOutcome extends Report {
  file: string;
  /** Its output alone (as far as the group's output can be split: stderr may interleave). */
  output: string;
  ms: number;
  /** Processor time of the process while it ran the file (the first file pays the start), with the processes it waited for. */
  cpuMs: number | undefined;
  timedOut: boolean;
}

export interface GroupOutcome {
  files: FileOutcome[];
  /** Processor time of the whole process and the processes it waited for, when known. */
  cpuMs: number | undefined;
}

interface StartEvent {
  event: 'start';
  index: number;
  at: number;
}
interface EndEvent extends Report {
  event: 'end';
  index: number;
  at: number;
  ms: number;
  cpuMs: number;
  problems: string[];
}
type GroupEvent = StartEvent | EndEvent | { event: 'exit'; code: number } | { event: 'lingering'; message: string };

function readEvents(file: string): GroupEvent[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const events: GroupEvent[] = [];
  // A line cut short by a kill is not an event.
  for (const line of text.split('\n')) {
    try {
      events.push(JSON.parse(line) as GroupEvent);
    } catch {}
  }
  return events;
}

export interface GroupOptions {
  root: string;
  env: NodeJS.ProcessEnv;
  /** A file still running after this long is killed with its group. */
  fileTimeoutMs: number;
  /** How the timeout was given, for the message. */
  fileTimeout: string;
  /** Where the group writes its report (removed afterwards). */
  reportFile: string;
}

/**
 * Ended children's processor time when last read, first as the first group starts (after the build and the
 * cluster's initdb: neither is a file's): a group's is the growth when it ends.
 */
let childrenCpuMs: number | undefined | null = null;

/**
 * Runs `files` (paths relative to `root`) in one process hosted by scripts/dev/test-group.ts; their
 * outcomes in order. A file whose suites did not all finish, that was running when the process died
 * or was killed, or that never ran because of it, fails with a message saying so; so does the last
 * file when the process ends with an error after its files (a late crash, or killed after
 * TEST_FILE_TIMEOUT because something a file left open kept it running).
 */
export function runGroup(files: string[], options: GroupOptions): Promise<GroupOutcome> {
  const { root, env, fileTimeoutMs, fileTimeout, reportFile } = options;
  const started = Date.now();
  const mark = `[test group ${randomBytes(6).toString('hex')}]`;
  rmSync(reportFile, { force: true });
  if (childrenCpuMs === null) childrenCpuMs = endedChildrenCpuMs();
  return new Promise((resolve) => {
    const args = [
      '--import',
      join(root, 'scripts/dev/register.js'),
      join(root, 'scripts/dev/test-group.ts'),
      ...files.map((f) => join(root, f)),
    ];
    const child = spawn(process.execPath, args, {
      cwd: root,
      env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0', TEST_REPORT: reportFile, TEST_GROUP_MARK: mark },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));

    // The timeout runs from the start (or end) of the file last heard of.
    let timedOut: number | undefined;
    const poll = setInterval(() => {
      const events = readEvents(reportFile).filter((e): e is StartEvent | EndEvent => e.event === 'start' || e.event === 'end');
      const last = events.at(-1);
      const since = last ? last.at : started;
      if (Date.now() - since < fileTimeoutMs) return;
      timedOut = last?.event === 'start' ? last.index : Math.min(files.length - 1, last ? last.index + 1 : 0);
      clearInterval(poll);
      child.kill('SIGKILL');
    }, 500);

    child.on('close', (code, signal) => {
      clearInterval(poll);
      const cpuNow = endedChildrenCpuMs();
      const cpuMs = cpuNow === undefined || childrenCpuMs == null ? undefined : cpuNow - childrenCpuMs;
      childrenCpuMs = cpuNow;
      const events = readEvents(reportFile);
      rmSync(reportFile, { force: true });

      // The output of each file: what follows its mark, up to the next.
      const parts = output.split(new RegExp(`^${mark.replace(/[[\]]/g, '\\$&')} (\\d+)$`, 'm'));
      const outputs = files.map(() => '');
      outputs[0] = parts[0] ?? '';
      for (let i = 1; i + 1 < parts.length; i += 2) {
        const index = Number(parts[i]);
        if (index < files.length) outputs[index] += parts[i + 1];
      }

      const ended =
        timedOut !== undefined
          ? `was killed after TEST_FILE_TIMEOUT (${fileTimeout})`
          : code === 0
            ? 'ended'
            : signal
              ? `was killed by ${signal}`
              : `exited with code ${code}`;
      const lingering = events.find((e) => e.event === 'lingering');
      const outcomes: FileOutcome[] = files.map((file, index) => {
        const start = events.find((e): e is StartEvent => e.event === 'start' && e.index === index);
        const end = events.find((e): e is EndEvent => e.event === 'end' && e.index === index);
        if (end) {
          const { suites, finished, passed, failed, skipped } = end;
          return {
            file,
            suites,
            finished,
            passed,
            failed,
            skipped,
            output: outputs[index]!,
            ms: end.ms,
            cpuMs: end.cpuMs,
            timedOut: false,
          };
        }
        const empty = { suites: 0, finished: 0, passed: 0, failed: 1, skipped: 0, cpuMs: undefined };
        if (start) {
          const why =
            timedOut === index ? `timed out after TEST_FILE_TIMEOUT (${fileTimeout})` : `its process ${ended} before its suites finished`;
          const message = `\n[test runner] ${file} did not finish: ${why}\n`;
          return { file, ...empty, output: outputs[index] + message, ms: Date.now() - start.at, timedOut: timedOut === index };
        }
        const running = events.findLast((e): e is StartEvent => e.event === 'start');
        const cause =
          timedOut === index
            ? `timed out after TEST_FILE_TIMEOUT (${fileTimeout}) before it started`
            : running
              ? `not run: its group's process ${ended} during ${files[running.index]}`
              : `not run: its group's process ${ended} before its first file started`;
        return { file, ...empty, output: `${outputs[index]}\n[test runner] ${file} ${cause}\n`, ms: 0, timedOut: timedOut === index };
      });
      // Every file ended, yet the process failed afterwards: the last file is charged with it.
      const last = outcomes.at(-1)!;
      const allEnded = files.every((_, i) => events.some((e) => e.event === 'end' && e.index === i));
      if (allEnded && (code !== 0 || signal)) {
        last.failed++;
        const names = files.length > 1 ? ` (a file of this group left it: ${files.join(', ')})` : '';
        last.output += `\n[test runner] after its last file the process ${ended}${lingering && 'message' in lingering ? `; ${lingering.message}` : ''}${names}\n`;
      }
      resolve({ files: outcomes, cpuMs });
    });
  });
}
