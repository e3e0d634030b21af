/**
 * Claims against results and the one place that keeps `result.hidden` right. Every change of a
 * result's claims or deletion runs in a transaction that first locks the result row, then calls
 * refreshHidden: concurrent claims and reviews of one result are serialised, so the final state is
 * consistent whatever the interleaving.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../../core/caller.ts';
import { AppError, errors } from '../../core/errors.ts';
import { parseDateBound } from '../../core/dates.ts';
import { formatTimestamp } from '../../core/format.ts';
import { paginate } from './catalogue.ts';
import { columnKey } from '../query/keyset.ts';
import { fixedFieldSort } from '../query/sort.ts';
import { Where } from '../../db/sql.ts';
import { uploaderRef } from './uploader.ts';
import { UPLOADER_ADMIN_COLUMNS, type UploaderAdminColumns, uploaderAdminView } from './users.ts';
import { transaction } from '../../db/transaction.ts';
import { CLAIM_TABLE, type ClaimRow, columnArrays, insertFromArrays } from '../../db/table-columns.ts';

export type ClaimStatus = 'on_review' | 'approved';

interface ClaimSqlRow extends UploaderAdminColumns {
  id: string;
  message: string;
  resource_type: string;
  resource_id: string;
  status: string;
  upload_datetime: Date;
}

/** A claim as its claimant and the result's uploader see it: the claimant without email. */
export function claimView(row: ClaimSqlRow) {
  return {
    id: row.id,
    message: row.message,
    resource_type: 'result' as const,
    resource_id: row.resource_id,
    status: row.status as ClaimStatus,
    upload_datetime: formatTimestamp(row.upload_datetime),
    uploader: uploaderRef(row),
  };
}

/** A claim as administrators see it (/reports/claims): the claimant as a user, email included. */
export function claimAdminView(row: ClaimSqlRow) {
  return { ...claimView(row), uploader: uploaderAdminView(row) };
}

/** 403 NOT_UPLOADER unless the caller uploaded the result or is an administrator. */
export function requireUploaderOrAdmin(caller: Caller, result: { uploader_iss: string; uploader_sub: string }): void {
  const own = result.uploader_iss === caller.identity.iss && result.uploader_sub === caller.identity.sub;
  if (!own && !caller.isAdmin) {
    throw new AppError(403, 'NOT_UPLOADER', 'Only the uploader of the result or an administrator may do this.');
  }
}

export interface LockedResult {
  id: string;
  deleted: boolean;
  uploader_iss: string;
  uploader_sub: string;
}

/** Locks the result row for the rest of the transaction; 404 when there is none. */
export async function lockResult(tx: EntityManager, id: string): Promise<LockedResult> {
  const rows = await tx.execute<LockedResult[]>('select id, deleted, uploader_iss, uploader_sub from result where id = ? for update', [id]);
  if (!rows[0]) throw errors.notFound('Result', id);
  return rows[0];
}

/**
 * The single rule of hiding: a result is hidden when it is deleted or has a claim (claims on review
 * and upheld ones are kept; rejected ones are removed). Call it, in the same transaction and with
 * the result locked, after every change of the result's claims or deletion.
 */
export async function refreshHidden(tx: EntityManager, resultIds: string | readonly string[]): Promise<void> {
  await tx.execute(
    'update result set hidden = (deleted or exists (select 1 from claim c where c.resource_id = result.id)) where id = any(?::uuid[])',
    [typeof resultIds === 'string' ? [resultIds] : resultIds],
  );
}

/** Claims with their claimant's user columns; claimView leaves the email out of public answers. */
const CLAIMS = 'claim c left join app_user u on u.iss = c.uploader_iss and u.sub = c.uploader_sub';
const CLAIM_COLUMNS = `c.*, ${UPLOADER_ADMIN_COLUMNS}`;
const CLAIM_SELECT = `select ${CLAIM_COLUMNS} from ${CLAIMS}`;

async function findClaim(em: EntityManager, id: string, lock = false): Promise<ClaimSqlRow> {
  const rows = await em.execute<ClaimSqlRow[]>(`${CLAIM_SELECT} where c.id = ?${lock ? ' for update of c' : ''}`, [id]);
  if (!rows[0]) throw errors.notFound('Claim', id);
  return rows[0];
}

export const getClaim = (em: EntityManager, id: string) => findClaim(em, id).then(claimView);

/** One claim as administrators see it (GET /reports/claims/{id}): the claimant with email. */
export const getClaimAdmin = (em: EntityManager, id: string) => findClaim(em, id).then(claimAdminView);

/**
 * 422 TOO_MANY_OPEN_CLAIMS when the caller already has `max` claims on review. The caller's user row
 * is locked first, so concurrent claims of one user are counted one after the other.
 */
async function requireClaimRoom(tx: EntityManager, caller: Caller, max: number): Promise<void> {
  const { iss, sub } = caller.identity;
  await tx.execute('select 1 from app_user where iss = ? and sub = ? for no key update', [iss, sub]);
  const [open] = await tx.execute<{ n: number }[]>(
    "select count(*)::int as n from claim where uploader_iss = ? and uploader_sub = ? and status = 'on_review'",
    [iss, sub],
  );
  if (open!.n >= max) {
    throw new AppError(
      422,
      'TOO_MANY_OPEN_CLAIMS',
      `You have ${open!.n} claims waiting for review, the most one user may have open (${max}): file more once administrators have reviewed some.`,
      { extensions: { limit: max } },
    );
  }
}

const INSERT_CLAIM_SQL = insertFromArrays(CLAIM_TABLE, () => '?');

/**
 * Files a claim: the result is hidden until the claim is rejected or deleted. At most
 * `maxOpenClaims` claims of one user wait for review at once (0: no limit).
 */
export async function claimResult(em: EntityManager, caller: Caller, resultId: string, message: string, maxOpenClaims = 0) {
  if (message.includes('\u0000')) {
    throw new AppError(422, 'INVALID_BODY', 'The message contains the NUL character (\\u0000).', {
      errors: [{ in: 'body', path: '/message', message: 'must not contain the NUL character' }],
    });
  }
  const id = randomUUID();
  await transaction(em, async (tx) => {
    const result = await lockResult(tx, resultId);
    if (result.deleted)
      throw errors.conflict('RESULT_DELETED', `Result ${resultId} was deleted by an administrator: there is nothing left to claim.`);
    if (maxOpenClaims > 0) await requireClaimRoom(tx, caller, maxOpenClaims);
    const claim: ClaimRow = {
      id,
      resource_type: 'result',
      resource_id: resultId,
      message,
      status: 'on_review',
      upload_datetime: new Date(),
      uploader_iss: caller.identity.iss,
      uploader_sub: caller.identity.sub,
    };
    await tx.execute(INSERT_CLAIM_SQL, columnArrays(CLAIM_TABLE, [claim]));
    await refreshHidden(tx, resultId);
  });
  return getClaim(em, id);
}

/**
 * Runs `change` on a claim inside a transaction holding the lock of its result (taken first, the
 * same order as claimResult), then refreshes the result's hidden flag.
 */
async function reviewClaim(em: EntityManager, id: string, change: (tx: EntityManager, claim: ClaimSqlRow) => Promise<void>): Promise<void> {
  const { resource_id } = await findClaim(em, id);
  await transaction(em, async (tx) => {
    await lockResult(tx, resource_id);
    const claim = await findClaim(tx, id, true); // it may have been removed meanwhile: 404
    await change(tx, claim);
    await refreshHidden(tx, resource_id);
  });
}

/** Upholds a claim: the result stays hidden. */
export const approveClaim = (em: EntityManager, id: string) =>
  reviewClaim(em, id, async (tx, claim) => {
    if (claim.status === 'approved') throw errors.conflict('ALREADY_APPROVED', `Claim ${id} is already approved.`);
    await tx.execute(`update claim set status = 'approved' where id = ?`, [id]);
  });

/** Rejects a claim on review: it is removed; the result comes back when nothing else hides it. */
export const rejectClaim = (em: EntityManager, id: string) =>
  reviewClaim(em, id, async (tx, claim) => {
    if (claim.status === 'approved') {
      throw errors.conflict('ALREADY_APPROVED', `Claim ${id} is already approved; DELETE /reports/claims/${id} removes it.`);
    }
    await tx.execute('delete from claim where id = ?', [id]);
  });

/** Deletes a claim of any status; the result comes back when nothing else hides it. */
export const deleteClaim = (em: EntityManager, id: string) =>
  reviewClaim(em, id, async (tx) => {
    await tx.execute('delete from claim where id = ?', [id]);
  });

/** What a bulk reject did with each id (POST /reports/claims:reject), each list in request order. */
export interface ClaimRejections {
  rejected: string[];
  not_found: string[];
  already_approved: string[];
}

/**
 * Rejects every listed claim that is on review, in one transaction; reports the others (gone, or
 * upheld) instead of failing: what an administrator clearing a flood wants is that none of these
 * claims is left open. The results are locked first, in id order, so bulk rejects never deadlock
 * each other or a single review.
 */
export async function rejectClaims(em: EntityManager, ids: readonly string[]): Promise<ClaimRejections> {
  const unique = [...new Set(ids)];
  return transaction(em, async (tx) => {
    const results = await tx.execute<{ resource_id: string }[]>('select distinct resource_id from claim where id = any(?::uuid[])', [
      unique,
    ]);
    const resultIds = results.map((r) => r.resource_id);
    if (resultIds.length) await tx.execute('select id from result where id = any(?::uuid[]) order by id for update', [resultIds]);
    const claims = await tx.execute<{ id: string; status: string }[]>('select id, status from claim where id = any(?::uuid[]) for update', [
      unique,
    ]);
    const status = new Map(claims.map((c) => [c.id, c.status]));
    const rejected = unique.filter((id) => status.get(id) === 'on_review');
    if (rejected.length) {
      await tx.execute('delete from claim where id = any(?::uuid[])', [rejected]);
      await refreshHidden(tx, resultIds);
    }
    return {
      rejected,
      not_found: unique.filter((id) => !status.has(id)),
      already_approved: unique.filter((id) => status.get(id) === 'approved'),
    };
  });
}

export interface ClaimListQuery {
  status?: ClaimStatus;
  resource_type?: 'result';
  resource_id?: string;
  uploader_iss?: string;
  uploader_sub?: string;
  upload_before?: string;
  upload_after?: string;
  sort_by?: string;
  page?: number;
  per_page?: number;
  cursor?: string;
}

const SORT_COLUMNS: Record<string, string> = { upload_datetime: 'c.upload_datetime', id: 'c.id', status: 'c.status' };
const parseClaimSort = fixedFieldSort(Object.keys(SORT_COLUMNS), '+upload_datetime');

/**
 * A page of claims narrowed by `scope` (fixed SQL with its values) and the query's filters, each
 * shown by `view` (claimAdminView only for administrator operations).
 */
export async function listClaims<Item>(
  em: EntityManager,
  query: ClaimListQuery,
  view: (row: ClaimSqlRow) => Item,
  scope: { sql: string; params: unknown[] }[] = [],
) {
  const where = new Where();
  for (const s of scope) where.add(s.sql, ...s.params);
  if (query.status) where.add('c.status = ?', query.status);
  if (query.resource_type) where.add('c.resource_type = ?', query.resource_type);
  if (query.resource_id) where.add('c.resource_id = ?', query.resource_id);
  if (query.uploader_iss !== undefined) where.add('c.uploader_iss = ?', query.uploader_iss);
  if (query.uploader_sub !== undefined) where.add('c.uploader_sub = ?', query.uploader_sub);
  if (query.upload_before) where.add('c.upload_datetime < ?::timestamptz', parseDateBound(query.upload_before).toISOString());
  if (query.upload_after) where.add('c.upload_datetime > ?::timestamptz', parseDateBound(query.upload_after).toISOString());
  const terms = parseClaimSort(query.sort_by);
  const keys = terms.map((t) => columnKey(SORT_COLUMNS[t.field]!, t.descending, t.field === 'id'));
  if (!terms.some((t) => t.field === 'id')) keys.push(columnKey('c.id', terms.at(-1)?.descending ?? false, true));
  return paginate(em, { from: CLAIMS, columns: CLAIM_COLUMNS, name: 'claims' }, where, keys, query, view);
}

/** Claims of one result, for its uploader or an administrator. */
export async function listResultClaims(em: EntityManager, caller: Caller, resultId: string, query: ClaimListQuery) {
  const rows = await em.execute<LockedResult[]>('select id, deleted, uploader_iss, uploader_sub from result where id = ?', [resultId]);
  if (!rows[0]) throw errors.notFound('Result', resultId);
  requireUploaderOrAdmin(caller, rows[0]);
  return listClaims(em, query, claimView, [{ sql: 'c.resource_id = ?', params: [resultId] }]);
}
