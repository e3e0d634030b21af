import { AppError } from '../http/errors.ts';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/** Database exceptions mapped in one place: unique 409, foreign key 409, connection loss 503. */
export function mapDatabaseError(err: unknown): AppError | null {
  const e = err as { code?: string; name?: string; message?: string; cause?: unknown; constraint?: string } | null;
  if (!e || typeof e !== 'object') return null;
  const code = String(e.code ?? '');
  if (code === '23505' || e.name === 'UniqueConstraintViolationException') {
    return new AppError(409, 'DUPLICATE', 'An item with the same unique fields already exists.');
  }
  if (code === '23503' || e.name === 'ForeignKeyConstraintViolationException') {
    return new AppError(409, 'REFERENCED', 'The item is referenced by other items, or refers to one that is gone.');
  }
  // Data exceptions (class 22: a value out of range, an invalid text representation such as a
  // lone surrogate in JSON, ...) and "too complex" (54xxx) come from what the client sent.
  if (/^22[0-9A-Z]{3}$/.test(code) || code === '54001' || code === '54000') {
    return new AppError(422, 'INVALID_VALUE', 'A value is outside what the database can store or compare.');
  }
  if (
    CONNECTION_CODES.has(code) ||
    e.name === 'KnexTimeoutError' ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P03' ||
    e.name === 'ConnectionException' ||
    /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|Client has encountered a connection error|Timeout acquiring a connection/i.test(
      e.message ?? '',
    )
  ) {
    return new AppError(503, 'DATABASE_UNAVAILABLE', 'The database is unavailable. Try again shortly.', {
      headers: { 'Retry-After': '5' },
    });
  }
  if (e.cause && e.cause !== err) return mapDatabaseError(e.cause);
  return null;
}
