/**
 * The server's logger: pino, one JSON object per line, written asynchronously to stderr, or one
 * readable line per event (`--log-format pretty`). A line written while a request is handled carries
 * its `requestId`; credentials and email addresses never reach a line, as keys or in free text.
 */
import { pino, type DestinationStream } from 'pino';
import { requestStorage } from './request-context.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
/** `--log-format`: readable lines (`pretty`), JSON lines (`json`), or pretty on a terminal and JSON otherwise (`auto`). */
export type LogFormat = 'pretty' | 'json' | 'auto';
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'pretty', 'json'];

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** Writes out every line still buffered, before returning (called before the process exits). */
  flush(): void;
}

/** Keys whose value is never logged, at any depth pino's paths reach (top level and two below). */
const SECRET_KEYS = [
  'authorization',
  'cookie',
  'token',
  'accessToken',
  'access_token',
  'refresh_token',
  'id_token',
  'password',
  'secret',
  'client_secret',
  'email',
];
export const REDACT_PATHS = SECRET_KEYS.flatMap((key) => [key, `*.${key}`, `*.*.${key}`]);
const REDACTED = '[redacted]';

/**
 * What a free-text value may quote: an email address (a database error quotes the statement with
 * its values), a bearer or basic credential, a JWT.
 */
const IN_TEXT: [RegExp, string][] = [
  [/[\w.!#$%&*+/=?^{|}~-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/g, '[email]'],
  [/\b(Bearer|Basic)\s+[^\s"',;]+/gi, '$1 [redacted]'],
  [/\beyJ[\w-]*\.[\w-]+\.[\w-]*/g, '[token]'],
];

export function scrub(text: string): string {
  let out = text;
  for (const [pattern, replacement] of IN_TEXT) out = out.replace(pattern, replacement);
  return out;
}

function scrubValues(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrub(value);
  if (depth <= 0 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubValues(v, depth - 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubValues(v, depth - 1);
  return out;
}

/** stderr through pino's asynchronous destination, one for the process (written out at its exit). */
let stderr: DestinationStream | undefined;

function sharedStderr(): DestinationStream {
  stderr ??= pino.destination({ dest: 2, sync: false });
  return stderr;
}

/**
 * How the loggers created from now on without `write` write: `json`, or `pretty` (pino-pretty here,
 * synchronously, so that the lines before an exit are never lost); `auto`: pretty on a terminal.
 */
export async function useLogFormat(format: LogFormat): Promise<void> {
  const pretty = format === 'pretty' || (format === 'auto' && Boolean(process.stderr.isTTY));
  if (!pretty) return;
  const { default: prettyStream } = await import('pino-pretty');
  stderr = prettyStream({
    destination: 2,
    sync: true,
    colorize: Boolean(process.stderr.isTTY) && !process.env.NO_COLOR,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    // The fields named `error` hold a message, not an Error: on the line like the others.
    errorLikeObjectKeys: [],
  });
}

/** A logger at `level`, to stderr; given `write`, each line goes to it synchronously instead (for tests). */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  const destination = write ? ({ write } satisfies DestinationStream) : sharedStderr();
  const log = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => scrubValues(fields, 4) as Record<string, unknown>,
      },
      redact: { paths: REDACT_PATHS, censor: REDACTED },
      // A fresh object each time: pino merges the line's fields into it.
      mixin: () => {
        const requestId = requestStorage.getStore()?.requestId;
        return requestId === undefined ? {} : { requestId };
      },
    },
    destination,
  );
  const at = (lvl: Exclude<LogLevel, 'silent'>) => (msg: string, fields?: Record<string, unknown>) => {
    if (log.isLevelEnabled(lvl)) log[lvl](fields ?? {}, scrub(msg));
  };
  return {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    flush: () => {
      // Best effort: a closed destination or a pipe that would block is left to pino's exit hook.
      try {
        (destination as { flushSync?: () => void }).flushSync?.();
      } catch {}
    },
  };
}
