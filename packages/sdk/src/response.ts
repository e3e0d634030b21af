/** Reading a response: headers, JSON or problem+json bodies, and network failures described safely. */
import { ApiError, ConnectionError, type RequestInfo } from './errors.ts';
import type { FetchResponse } from './fetch.ts';

/**
 * Response headers as a plain object with lower-case names.
 * @example
 * headersOf(response)['retry-after'];
 */
export function headersOf(response: FetchResponse): Record<string, string> {
  const out: Record<string, string> = {};
  response.headers.forEach((value, key) => {
    out[key.toLowerCase()] = value;
  });
  return out;
}

function isJson(response: FetchResponse): boolean {
  return /[/+]json\b/i.test(response.headers.get('content-type') ?? '');
}

/**
 * An error response's body: parsed JSON (problem+json) when it is JSON, else the text.
 * @example
 * const problem = parseBody(response, await response.text());
 */
export function parseBody(response: FetchResponse, text: string): unknown {
  if (!text) return undefined;
  if (!isJson(response)) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A success response's body: `undefined` for 204 or an empty body, parsed JSON, else the text.
 * @example
 * const value = parseSuccess(200, response, text, { method: 'GET', url }, (s) => s);
 */
export function parseSuccess(
  status: number,
  response: FetchResponse,
  text: string,
  request: RequestInfo,
  redact: (s: string) => string,
  requestId?: string | undefined,
): unknown {
  if (status === 204 || !text) return undefined;
  if (!isJson(response)) return text;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError({
      status,
      code: 'INVALID_RESPONSE',
      title: 'Invalid response',
      detail: redact('The response body is not valid JSON.'),
      request,
      requestId,
    });
  }
}

/**
 * The reasons of a network failure, its causes joined (`terminated: other side closed`), secrets
 * removed; `leaked` says whether the raw text held one (the raw error must then not travel along).
 * @example
 * const { reason } = failureReason(err, (s) => s.split(token).join('[REDACTED]'));
 */
export function failureReason(error: unknown, redact: (s: string) => string): { reason: string; leaked: boolean } {
  const reasons: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    const message = e instanceof Error ? e.message : String(e);
    reasons.push(typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message);
  }
  const reason = redact(reasons.filter((r) => r && r !== 'fetch failed').join(': ') || 'network error');
  return { reason, leaked: redact(reasons.join('\n')) !== reasons.join('\n') };
}

/**
 * Describes a network failure without letting the token travel along (e.g. in a custom fetch's error).
 * @example
 * throw connectionError({ method: 'GET', url }, err, (s) => s.split(token).join('[REDACTED]'));
 */
export function connectionError(
  info: RequestInfo,
  error: unknown,
  redact: (s: string) => string,
  requestId?: string | undefined,
): ConnectionError {
  const { reason, leaked } = failureReason(error, redact);
  return new ConnectionError(`Cannot reach ${info.url}: ${reason}`, info, { cause: leaked ? new Error(reason) : error, requestId });
}
