/**
 * The order in which scripts/test.ts starts the test files: the slowest first, so that the run does
 * not end waiting for one long file started last. A file's duration comes from the last run on this
 * machine (`.test-durations.json`, ignored by git), else from the checked-in defaults
 * (`scripts/test-durations.json`: every file, in seconds of a CI run on a 2-processor machine, a
 * grouped file's own time within its group; scripts/test-groups.ts runs those of 30 s or more
 * alone); a file known to neither comes after those, in path order.
 */
import { readFileSync, writeFileSync } from 'node:fs';

/** Seconds a file took, by its path relative to the repository. */
export type Durations = Record<string, number>;

/** What uvu counted for a test file (scripts/dev/test-group.ts reports it as the file ends). */
export interface Report {
  /** Suites queued, and those that finished. */
  suites: number;
  finished: number;
  passed: number;
  /** Tests that failed or never ran (their suite's `before` hook threw). */
  failed: number;
  skipped: number;
}

/** The durations in `file`; none when it is missing or not a JSON object of numbers. */
export function readDurations(file: string): Durations {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] >= 0));
}

/** Writes `durations` to `file`, slowest first, in whole tenths of a second. */
export function writeDurations(file: string, durations: Durations): void {
  const sorted = Object.entries(durations)
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([f, s]) => [f, Math.round(s * 10) / 10]);
  writeFileSync(file, `${JSON.stringify(Object.fromEntries(sorted), null, 2)}\n`);
}

/** `files` with the slowest known first, then the unknown ones in path order. */
export function orderBySlowest(files: string[], durations: Durations): string[] {
  const seconds = (f: string) => durations[f] ?? -1;
  return [...files].sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
}

/**
 * The processor time (user and system, in ms) of this process's children that have ended and been
 * waited for, with theirs: Linux's `/proc/self/stat`, in clock ticks of 10 ms. `undefined` elsewhere.
 */
export function endedChildrenCpuMs(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // After the command name in parentheses: state is field 3; cutime and cstime are fields 16 and 17.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) * 10;
  } catch {
    return undefined;
  }
}
