import { AppError, errors } from '../core/errors.ts';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH']);

/**
 * Aborts that another try usually clears: serialization failure, deadlock, lock not available
 * (`lock_timeout`, `NOWAIT`). MikroORM converts the first two to DeadlockException.
 */
const TRANSIENT_CODES = new Set(['40001', '40P01', '55P03']);
const TRANSIENT_NAMES = new Set(['DeadlockException', 'LockWaitTimeoutException']);

type DbError = { code?: string; name?: string; message?: string; cause?: unknown; constraint?: string } | null;

// Decisions go by codes and class names; messages only where nothing else tells: 57014
// (query_canceled) does not say why, and pg and tarn raise some connection failures without a code.

/**
 * Whether a transaction failed for a transient reason (db/transaction.ts repeats it once): the codes
 * above, or 57014 from `statement_timeout` (in a write transaction, a lock wait), not from a cancel.
 */
export function isTransientDatabaseError(err: unknown, depth = 0): boolean {
  const e = err as DbError;
  if (!e || typeof e !== 'object' || depth > 5) return false;
  const code = String(e.code ?? '');
  if (TRANSIENT_CODES.has(code) || TRANSIENT_NAMES.has(e.name ?? '')) return true;
  if (code === '57014' && /statement timeout|lock timeout/i.test(e.message ?? '')) return true;
  return e.cause !== undefined && e.cause !== err && isTransientDatabaseError(e.cause, depth + 1);
}

/** Database exceptions as problems, in one place: null for one that is not the database's. */
export function mapDatabaseError(err: unknown): AppError | null {
  const e = err as DbError;
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
  if (TRANSIENT_CODES.has(code) || TRANSIENT_NAMES.has(e.name ?? '')) {
    // db/transaction.ts already tried a transaction again; either way nothing was applied.
    return errors.unavailable(
      'DATABASE_BUSY',
      'Concurrent requests kept the database from completing this one (deadlock, serialization failure or lock timeout). Try again.',
      1,
    );
  }
  // Cancelled for a client gone away (db/request-scope.ts) or by an operator: not a timeout, never retried.
  if (code === 'REQUEST_ABANDONED' || (code === '57014' && /user request/i.test(e.message ?? ''))) {
    return errors.unavailable(
      'REQUEST_CANCELLED',
      'The request was cancelled before it completed (its client went away, or the server is stopping). Try again.',
      1,
    );
  }
  // Insufficient resources (class 53): nothing was stored; it clears when the operator acts, or by itself.
  if (code === '53100') {
    return errors.unavailable('DATABASE_DISK_FULL', 'The database has no disk space left: nothing was stored. Try again later.', 60);
  }
  if (/^53[0-9A-Z]{3}$/.test(code)) {
    return errors.unavailable(
      'DATABASE_INSUFFICIENT_RESOURCES',
      'The database ran out of memory or connections: nothing was stored. Try again shortly.',
    );
  }
  if (code === '57014') {
    return errors.unavailable(
      'DATABASE_TIMEOUT',
      'The database cancelled the request: it took longer than allowed. Try again later or narrow the request.',
    );
  }
  if (
    CONNECTION_CODES.has(code) ||
    e.name === 'KnexTimeoutError' ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P03' ||
    e.name === 'ConnectionException' ||
    // pg's connection timeout ("timeout expired") and its query_timeout (db/orm.ts: the server did not answer at all).
    /Connection terminated|connect ECONNREFUSED|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error|Client was closed|Timeout acquiring a connection/i.test(
      e.message ?? '',
    )
  ) {
    return errors.unavailable('DATABASE_UNAVAILABLE', 'The database is unavailable. Try again shortly.');
  }
  if (e.cause && e.cause !== err) return mapDatabaseError(e.cause);
  return null;
}
