/**
 * The error catalogue. Every error the service returns is an AppError rendered as
 * application/problem+json (RFC 9457) by the problem middleware.
 */
export interface ErrorDetail {
  in: 'body' | 'query' | 'path' | 'header' | 'json';
  path: string;
  message: string;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

export function titleOf(status: number): string {
  return TITLES[status] ?? 'Error';
}

export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly detail: string;
  readonly errors?: ErrorDetail[];
  /** Extra response headers, e.g. WWW-Authenticate or Allow. */
  readonly headers: Record<string, string>;
  /** Extra members of the problem body (RFC 9457 extensions), e.g. `count`. */
  readonly extensions: Record<string, unknown>;

  constructor(
    status: number,
    code: string,
    detail: string,
    options: { errors?: ErrorDetail[]; headers?: Record<string, string>; extensions?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extensions = options.extensions ?? {};
  }
}

/** A start that cannot go on for a reason the operator can fix: printed as one line, exit code 1 (exit.ts). */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

/** RFC 6750: a 401 names the scheme, and the error when a token was sent but refused. */
export function unauthorized(code: string, detail: string, tokenSent: boolean): AppError {
  // The detail may quote a token's claims: only printable ASCII goes into a header (RFC 6750 §3).
  const description = detail
    .replace(/["\\]/g, "'")
    .replace(/[^\x20-\x7e]/g, '?')
    .slice(0, 300);
  const challenge = tokenSent
    ? `Bearer realm="benchmarks", error="invalid_token", error_description="${description}"`
    : 'Bearer realm="benchmarks"';
  return new AppError(401, code, detail, { headers: { 'WWW-Authenticate': challenge } });
}

export const errors = {
  badRequest: (code: string, detail: string) => new AppError(400, code, detail),
  forbidden: (code: string, detail: string) => new AppError(403, code, detail),
  notFound: (kind: string, id: string) => new AppError(404, 'NOT_FOUND', `${kind} ${id} was not found.`),
  conflict: (code: string, detail: string, extensions?: Record<string, unknown>) => new AppError(409, code, detail, { extensions }),
  validation: (detail: string, details: ErrorDetail[] = [], code = 'VALIDATION_FAILED') =>
    new AppError(422, code, detail, { errors: details }),
  unavailable: (code: string, detail: string, retryAfterSec = 5) =>
    new AppError(503, code, detail, { headers: { 'Retry-After': String(retryAfterSec) } }),
};
