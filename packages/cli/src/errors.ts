/**
 * Exit codes and the one place that turns any failure into one clear line on stderr.
 * 0 ok, 1 error, 2 usage, 4 not authenticated or not allowed (CONVENTIONS 12).
 */
import {
  ApiError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  IncompleteResponseError,
  NotFoundError,
  PermissionError,
  ServerError,
  TimeoutError,
  ValidationError,
} from '@benchmarks/sdk';
import { paint } from './terminal.ts';

export const EXIT = { OK: 0, ERROR: 1, USAGE: 2, AUTH: 4 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A known failure: its message is the whole story, already saying what to do. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.ERROR,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command was called wrongly (exit 2). */
export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.USAGE);
  }
}

/** Not logged in, login expired, or not allowed (exit 4). */
export class AuthError extends CliError {
  constructor(message: string) {
    super(message, EXIT.AUTH);
  }
}

const LOGIN_HINT = 'run `benchmarks login` or pass --token';

/**
 * Why the server refused the token, said plainly: the server's own detail is for its logs (it may
 * name claims, endpoints and settings), and nested in our sentence it read as two layers of internals.
 */
const TOKEN_REFUSALS: Record<string, string> = {
  TOKEN_EXPIRED: 'Not authenticated: the access token has expired',
  TOKEN_NOT_YET_VALID: "Not authenticated: the access token is not valid yet (check this machine's clock)",
  INVALID_AUDIENCE: 'Not authenticated: the access token is meant for another service',
  UNTRUSTED_ISSUER: 'Not authenticated: the access token comes from an identity provider this server does not trust',
};

/** One line for a 401, e.g. `Not authenticated: the server does not accept this access token; run ...` (the stack with DEBUG has the server's detail). */
function tokenRefused(code: string): string {
  if (code === 'MISSING_TOKEN') return `Not logged in: ${LOGIN_HINT}.`;
  return `${TOKEN_REFUSALS[code] ?? 'Not authenticated: the server does not accept this access token'}; ${LOGIN_HINT}.`;
}

/** ` (/a: must be number; ...)`: the first five problems and how many more, or '' without any. */
export function problemList(errors: readonly { path?: string; message: string }[]): string {
  const details = errors.map((e) => (e.path && e.path !== '/' ? `${e.path}: ${e.message}` : e.message));
  const shown = details.slice(0, 5).join('; ') + (details.length > 5 ? `; and ${details.length - 5} more` : '');
  return shown ? ` (${shown})` : '';
}

/** The reason an API error gives, with each listed problem: `422 SCHEMA_VIOLATION: ... (/a: must be number)`. */
export function apiReason(err: ApiError): string {
  return `${err.status} ${err.code}: ${err.detail}${problemList(err.errors.filter((e) => !err.detail.includes(e.message)))}`;
}

const known = (message: string, exitCode: ExitCode = EXIT.ERROR) => ({ message, exitCode });

/** A known error as one line and its exit code; `undefined` for an unexpected one. */
export function describeKnown(err: unknown): { message: string; exitCode: ExitCode } | undefined {
  if (err instanceof CliError) return known(err.message, err.exitCode);
  if (err instanceof AuthenticationError) return known(tokenRefused(err.code), EXIT.AUTH);
  if (err instanceof PermissionError) {
    if (err.code === 'NOT_REGISTERED')
      return known('Not registered: run `benchmarks register` to accept the terms of use first.', EXIT.AUTH);
    if (err.code === 'NOT_ADMIN') return known('Not allowed: this needs an administrator of the service.', EXIT.AUTH);
    return known(`Not allowed: ${err.detail}`, EXIT.AUTH);
  }
  if (err instanceof NotFoundError) return known(`Not found: ${err.detail}`);
  if (err instanceof ValidationError) {
    // A query parameter the server refused came from an option: the command was called wrongly.
    const fromOptions = err.errors.length > 0 && err.errors.every((e) => e.in === 'query');
    return fromOptions ? known(`Invalid option: ${apiReason(err)}`, EXIT.USAGE) : known(`Refused by the server: ${apiReason(err)}`);
  }
  if (err instanceof ConflictError) return known(`${err.detail} [${err.code}]`);
  if (err instanceof ServerError) return known(`The server failed (${err.status} ${err.code}): ${err.detail}. Try again later.`);
  if (err instanceof ApiError) return known(`The server refused the request: ${apiReason(err)}`);
  if (err instanceof TimeoutError) {
    return known(`No answer from ${err.request.url} within ${err.timeoutMs / 1000} s: check the server address (--server) or try again.`);
  }
  if (err instanceof IncompleteResponseError) return known(`${err.message}. What was written before is incomplete.`);
  if (err instanceof ConnectionError) {
    return known(`${err.message}. Check the server address (--server, BENCHMARKS_SERVER) and your network.`);
  }
  return undefined;
}

/** Prints the error on stderr and returns the exit code. Stacks only with DEBUG set; `Error:` in red with `color`. */
export function reportError(
  err: unknown,
  stderr: { write(s: string): unknown },
  env: Record<string, string | undefined>,
  color = false,
): ExitCode {
  const debug = Boolean(env.DEBUG) && env.DEBUG !== '0';
  const known = describeKnown(err);
  if (known) {
    stderr.write(`${paint(color, 'red', 'Error:')} ${known.message}\n`);
    if (debug && err instanceof Error && !(err instanceof CliError)) stderr.write(`${err.stack}\n`);
    return known.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  stderr.write(
    `Unexpected error: ${message}\n` +
      'This is a bug in benchmarks; please report it with the command you ran' +
      (debug ? '.\n' : ' and the output of the same command with DEBUG=1.\n'),
  );
  if (debug && err instanceof Error) stderr.write(`${err.stack}\n`);
  return EXIT.ERROR;
}
