/**
 * The embedded PostgreSQL's own log (its stderr), line by line, at the level of each message. With
 * the default `log_line_prefix` a line reads `2026-11-24 06:00:00.000 UTC [1234] WARNING:  message`:
 * the severity is found by its two-space separator whatever the prefix. Continued lines (a tab
 * first) and DETAIL, HINT, ... lines are logged at the level of the message before them.
 */
import type { Logger, LogLevel } from '../core/logger.ts';

export type LoggedLevel = Exclude<LogLevel, 'silent'>;

/**
 * PostgreSQL's severities as the server's levels. An ERROR fails a statement this server answers
 * itself (a 409, a 503 it logs): a warning, so that `error` lines stay FATAL and PANIC.
 */
export const SEVERITY_LEVELS: Record<string, LoggedLevel> = {
  DEBUG: 'debug',
  DEBUG1: 'debug',
  DEBUG2: 'debug',
  DEBUG3: 'debug',
  DEBUG4: 'debug',
  DEBUG5: 'debug',
  LOG: 'info',
  INFO: 'info',
  NOTICE: 'info',
  WARNING: 'warn',
  ERROR: 'warn',
  FATAL: 'error',
  PANIC: 'error',
};

/**
 * Sessions ended because their client vanished (an export cut short, a process that died): FATAL
 * for PostgreSQL, yet no other session is touched: `info`, as a client going away is in the server's log.
 */
const CLIENT_VANISHED = /^(connection to client lost|unexpected EOF on client connection with an open transaction)$/;

/** Lines that add to the message before them. */
const ATTACHED = new Set(['DETAIL', 'HINT', 'CONTEXT', 'STATEMENT', 'QUERY', 'LOCATION']);

const LINE = /^(?:(.*?)\s)?(DEBUG[1-5]?|LOG|INFO|NOTICE|WARNING|ERROR|FATAL|PANIC|DETAIL|HINT|CONTEXT|STATEMENT|QUERY|LOCATION): {2}(.*)$/;
const PID = /\[(\d+)\]\s*$/;

export interface PostgresLogLine {
  /** PostgreSQL's severity (`WARNING`), or `DETAIL`, `HINT`, ... for a line attached to the message before. */
  severity: string;
  /** The server's level: the severity's, or that of the message a continuation belongs to. */
  level: LoggedLevel;
  message: string;
  /** The backend's process id, when the line prefix shows it. */
  pid?: number;
  /** The line as PostgreSQL wrote it, without its prefix (for error messages). */
  text: string;
}

/**
 * Splits the cluster's output (chunks of any length) into lines, each with its level. Lines without
 * a severity (initdb's, those before logging starts) are `LOG`, unless they continue the message before.
 */
export class PostgresLogReader {
  private partial = '';
  private lastLevel: LoggedLevel | undefined;

  constructor(private readonly onLine: (line: PostgresLogLine) => void) {}

  write(chunk: string): void {
    const lines = (this.partial + chunk).split(/\r?\n/);
    this.partial = lines.pop() ?? '';
    for (const line of lines) this.line(line);
  }

  /** Whatever is left of a last line without its newline. */
  flush(): void {
    const rest = this.partial;
    this.partial = '';
    if (rest) this.line(rest);
  }

  private line(raw: string): void {
    if (!raw.trim()) return;
    const continued = /^\s/.test(raw) && this.lastLevel !== undefined;
    const parsed = continued ? undefined : parsePostgresLogLine(raw);
    if (!parsed) {
      const message = raw.trim();
      const level = continued ? this.lastLevel! : 'info';
      if (!continued) this.lastLevel = level;
      this.onLine({ severity: continued ? 'CONTINUED' : 'LOG', level, message, text: message });
      return;
    }
    const attached = ATTACHED.has(parsed.severity);
    const level = attached ? (this.lastLevel ?? 'info') : CLIENT_VANISHED.test(parsed.message) ? 'info' : SEVERITY_LEVELS[parsed.severity]!;
    if (!attached) this.lastLevel = level;
    this.onLine({ ...parsed, level });
  }
}

/** One line's severity, message and pid; undefined when the line shows no severity. */
export function parsePostgresLogLine(raw: string): Omit<PostgresLogLine, 'level'> | undefined {
  const m = LINE.exec(raw.trimEnd());
  if (!m) return undefined;
  const pid = m[1] ? PID.exec(m[1])?.[1] : undefined;
  const severity = m[2]!;
  const message = m[3]!.trim();
  return { severity, message, ...(pid ? { pid: Number(pid) } : {}), text: `${severity}:  ${message}` };
}

/** Writes each line to `logger` at its level, as `{msg: 'postgres', severity, message, pid}`. */
export function logPostgresLine(logger: Logger, line: PostgresLogLine): void {
  const fields: Record<string, unknown> = { severity: line.severity, message: line.message };
  if (line.pid !== undefined) fields.pid = line.pid;
  logger[line.level]('postgres', fields);
}
