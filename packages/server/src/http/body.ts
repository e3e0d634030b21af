/**
 * Request bodies: read by co-body (encoding, declared length, size limit), parsed by @hapi/bourne
 * (no `__proto__` keys), the two halves of co-body's JSON parser called apart so that a large body is
 * read holding one place and parsed holding another (services/runtime/admission.ts).
 */
import type Koa from 'koa';
import * as coBody from 'co-body';
import Bourne from '@hapi/bourne';
import { AppError } from '../core/errors.ts';
import { LARGE_BODY_BYTES } from '../services/runtime/admission.ts';

/** Checks the body is JSON in UTF-8 before reading it; none, small, or large (LARGE_BODY_BYTES or more, or chunked). */
export function checkBodyHeaders(ctx: Koa.Context): 'none' | 'small' | 'large' {
  const declared = ctx.request.length ?? 0;
  const chunked = ctx.get('transfer-encoding') !== '';
  const hasBody = declared > 0 || chunked;
  if (hasBody && !ctx.is('application/json', 'application/*+json')) {
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON with Content-Type: application/json.');
  }
  // JSON is UTF-8 (RFC 8259); a body declared in another charset would be read as garbage.
  const charset = hasBody ? ctx.request.charset : '';
  if (charset && !/^utf-?8$/i.test(charset)) {
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', `The request body must be UTF-8 JSON, not ${charset.slice(0, 40)}.`);
  }
  if (!hasBody) return 'none';
  return chunked || declared >= LARGE_BODY_BYTES ? 'large' : 'small';
}

/** Body reading and parsing errors (co-body, raw-body, bourne) as problems. */
export function bodyProblem(err: unknown, limitBytes: number): AppError {
  if (err instanceof AppError) return err;
  const status = (err as { status?: number }).status;
  if (status === 413) return new AppError(413, 'BODY_TOO_LARGE', `The request body is larger than ${limitBytes} bytes.`);
  if (status === 415) return new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported; send UTF-8 JSON.');
  if (/prototype/i.test((err as Error)?.message ?? '')) {
    return new AppError(400, 'MALFORMED_JSON', 'The request body contains a "__proto__" key, which is not accepted.');
  }
  return new AppError(400, 'MALFORMED_JSON', 'The request body is not valid JSON.');
}

/** The body as UTF-8 text, at most `limitBytes` of it (413 beyond, before reading when declared). */
export async function readBodyText(ctx: Koa.Context, limitBytes: number): Promise<string> {
  try {
    return await coBody.text(ctx, { limit: limitBytes, encoding: 'utf8' });
  } catch (err) {
    throw bodyProblem(err, limitBytes);
  }
}

/** Parses JSON text as co-body does with `strict: false` (any JSON value; an empty body stays ''). */
export function parseJsonText(text: string, limitBytes: number): unknown {
  try {
    return text ? Bourne.parse(text, { protoAction: 'error' }) : text;
  } catch (err) {
    throw bodyProblem(err, limitBytes);
  }
}
