/**
 * Idempotency keys of creating requests (`Idempotency-Key`; docs/security.md, "Retried uploads").
 * The key row is written in the transaction that stores what the request created, holding the
 * answer: both are committed or neither is, so a crash can never leave a stored result without its
 * key, and a retry after an error (nothing stored) simply runs again. A transaction-level advisory
 * lock on (uploader, key) makes a second request with the key wait for nothing: it is answered 409
 * IDEMPOTENCY_KEY_IN_USE while the first one runs; afterwards the stored answer is replayed.
 */
import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { IDEMPOTENCY_KEY_TTL_HOURS } from '@benchmarks/sdk/contract';
import { AppError } from '../../core/errors.ts';
import { JsonText, Reply } from '../../core/reply.ts';
import { prepared } from '../../db/bound-driver.ts';
import { transaction } from '../../db/transaction.ts';

/** A creating request that carries a key. */
export interface KeyedRequest {
  iss: string;
  sub: string;
  key: string;
  operationId: string;
  /** {@link requestHash} of the request. */
  hash: string;
}

/** The response header that marks a replayed answer (as Stripe names it). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** Expired keys one purge deletes at most. */
const PURGE_BATCH = 1_000;
/** How often a process purges expired keys, unless the last purge found more than a batch. */
const PURGE_INTERVAL_MS = 60_000;
/** When each server (each ORM's connection) purges next: two servers in one process purge each its own database. */
const nextPurges = new WeakMap<object, number>();

const LOCK_SQL = prepared('select pg_try_advisory_xact_lock(?::bigint) as locked');
const FIND_SQL = prepared(
  'select operation_id, request_hash, response_status, response_body from idempotency_key ' +
    'where uploader_iss = ? and uploader_sub = ? and key = ? and created_datetime > now() - make_interval(hours => ?)',
);
// An expired row of the same key is replaced; a live one cannot exist here (the lock is held and the
// lookup found none), and if one did the insert stores nothing and the request is refused, not doubled.
const INSERT_SQL = prepared(
  'insert into idempotency_key (uploader_iss, uploader_sub, key, operation_id, request_hash, response_status, response_body, created_datetime) ' +
    'values (?, ?, ?, ?, ?, ?, ?, now()) on conflict (uploader_iss, uploader_sub, key) do update set ' +
    'operation_id = excluded.operation_id, request_hash = excluded.request_hash, response_status = excluded.response_status, ' +
    'response_body = excluded.response_body, created_datetime = excluded.created_datetime ' +
    'where idempotency_key.created_datetime <= now() - make_interval(hours => ?) returning 1 as stored',
);
const PURGE_SQL = prepared(
  'with gone as (delete from idempotency_key where (uploader_iss, uploader_sub, key) in (select uploader_iss, uploader_sub, key ' +
    'from idempotency_key where created_datetime <= now() - make_interval(hours => ?) order by created_datetime limit ?) returning 1) ' +
    'select count(*)::int as purged from gone',
);

/** JSON.stringify's replacer that puts an object's members in code-point order (objects already in order as they are). */
function sortedMembers(_key: string, value: unknown): unknown {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (keys.every((k, i) => i === 0 || keys[i - 1]! < k)) return value;
  const out: Record<string, unknown> = {};
  for (const k of keys.sort()) out[k] = (value as Record<string, unknown>)[k];
  return out;
}

/**
 * JSON with the members of every object in code-point order: equal values give equal text (the
 * native serialiser does the work: about 1 ms for a batch of 100 results of 1.5 KB).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, sortedMembers) ?? 'null';
}

/**
 * What makes two requests "the same": the operation, its path parameters, its query and its body,
 * as canonical JSON (member order and white space do not matter), hashed with SHA-256.
 */
export function requestHash(operationId: string, parts: { params: unknown; query: unknown; body: unknown }): string {
  return createHash('sha256')
    .update(canonicalJson([operationId, parts.params ?? {}, parts.query ?? {}, parts.body ?? null]))
    .digest('hex');
}

/** The advisory lock of a key: 64 bits of SHA-256 over who and which key, as a signed bigint. */
function lockId(req: KeyedRequest): string {
  return createHash('sha256').update(`idempotency\n${req.iss}\n${req.sub}\n${req.key}`).digest().readBigInt64BE(0).toString();
}

/** The status and JSON text of a handler's answer, as Koa would send them. */
function serialize(answer: unknown, status: number): { status: number; text: string } {
  if (answer instanceof Reply) return { status: answer.status, text: answer.body === undefined ? '' : JSON.stringify(answer.body) };
  if (answer instanceof JsonText) return { status, text: answer.toString() };
  return { status, text: answer === undefined ? '' : JSON.stringify(answer) };
}

/** The remembered answer, sent again byte for byte. */
function replay(row: { response_status: number; response_body: string }): Reply<Buffer> {
  return new Reply(row.response_status, Buffer.from(row.response_body, 'utf8'), {
    'Content-Type': 'application/json; charset=utf-8',
    [REPLAYED_HEADER]: 'true',
  });
}

/** Deletes up to `limit` expired keys, oldest first; returns how many. */
export async function purgeExpiredKeys(em: EntityManager, limit = PURGE_BATCH): Promise<number> {
  const [row] = await em.execute<{ purged: number }[]>(PURGE_SQL, [IDEMPOTENCY_KEY_TTL_HOURS, limit]);
  return row!.purged;
}

/**
 * Keyed requests purge expired keys lazily: a batch at most once a minute per server (at once
 * again when the last batch was full, so the purge keeps up with any rate of keys). Expired rows are
 * never answered from (the lookup bounds their age), so a late purge only costs space.
 */
async function purgeExpired(em: EntityManager): Promise<void> {
  const server = em.getConnection();
  const now = Date.now();
  if (now < (nextPurges.get(server) ?? 0)) return;
  nextPurges.set(server, now + PURGE_INTERVAL_MS);
  try {
    if ((await purgeExpiredKeys(em)) >= PURGE_BATCH) nextPurges.delete(server);
  } catch {
    // The request does not depend on it; the next keyed request tries again.
    nextPurges.delete(server);
  }
}

/**
 * Runs `store` (the writing part of a creating request) once per key, in one transaction that first
 * takes the key's advisory lock, then looks for the key's row: found, it answers (the same request:
 * its answer again; another request: 422 IDEMPOTENCY_KEY_REUSED); else `store` runs and its answer
 * is recorded with the key. When another transaction holds the lock, a row already committed still
 * answers (retries arriving together all get it); otherwise the first request is still running:
 * 409 IDEMPOTENCY_KEY_IN_USE. `status` is the operation's success status (for plain bodies).
 */
export async function storeOnce<T>(
  em: EntityManager,
  req: KeyedRequest,
  status: number,
  store: (tx: EntityManager) => Promise<T>,
): Promise<T | Reply<Buffer>> {
  await purgeExpired(em);
  return transaction(em, async (tx) => {
    const [lock] = await tx.execute<{ locked: boolean }[]>(LOCK_SQL, [lockId(req)]);
    // Read after the lock is taken (a statement of its own, so with a snapshot taken after it): a
    // request that held the lock before has committed its row by now.
    const known = await find(tx, req);
    if (known) return replayFor(req, known);
    if (!lock!.locked) throw inUse(req);
    const answer = await store(tx);
    const { status: answered, text } = serialize(answer, status);
    const inserted = await tx.execute<{ stored: number }[]>(INSERT_SQL, [
      req.iss,
      req.sub,
      req.key,
      req.operationId,
      req.hash,
      answered,
      text,
      IDEMPOTENCY_KEY_TTL_HOURS,
    ]);
    // Only possible if a live row appeared under the lock (it cannot): refuse rather than store twice.
    if (inserted.length !== 1) throw inUse(req);
    return answer;
  });
}

interface StoredAnswer {
  operation_id: string;
  request_hash: string;
  response_status: number;
  response_body: string;
}

async function find(em: EntityManager, req: KeyedRequest): Promise<StoredAnswer | undefined> {
  const [row] = await em.execute<StoredAnswer[]>(FIND_SQL, [req.iss, req.sub, req.key, IDEMPOTENCY_KEY_TTL_HOURS]);
  return row;
}

/** The stored answer when it answered this very request; 422 when the key served another one. */
function replayFor(req: KeyedRequest, known: StoredAnswer): Reply<Buffer> {
  if (known.operation_id !== req.operationId || known.request_hash !== req.hash) {
    const what = known.operation_id === req.operationId ? 'a different body or parameters' : `operation ${known.operation_id}`;
    throw new AppError(
      422,
      'IDEMPOTENCY_KEY_REUSED',
      `This Idempotency-Key was already used for another request (${what}) in the last ${IDEMPOTENCY_KEY_TTL_HOURS} h: use a new key for a new request.`,
      { errors: [{ in: 'header', path: 'Idempotency-Key', message: 'was used for a different request' }] },
    );
  }
  return replay(known);
}

function inUse(req: KeyedRequest): AppError {
  return new AppError(
    409,
    'IDEMPOTENCY_KEY_IN_USE',
    `A request with this Idempotency-Key (${req.operationId}) is still being processed; retry it after Retry-After to get its answer.`,
    {
      headers: { 'Retry-After': '1' },
    },
  );
}
