/**
 * Claims against results and the one place that keeps `result.hidden` right. Every change of a
 * result's claims or deletion runs in a transaction that first locks the result row, then calls
 * refreshHidden: concurrent claims and reviews of one result are serialised, so the final state is
 * consistent whatever the interleaving.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Caller } from '../http/handler.ts';
import { AppError, errors } from '../http/errors.ts';
import { parseDateBound } from '../http/validation.ts';
import { formatTimestamp } from './format.ts';
import { limitOffset, pageEnvelope, pageRequest } from './pagination.ts';
import { fixedFieldSort } from './sort.ts';
import { Where } from './sql.ts';
import { uploaderRef } from './uploader.ts';

export type ClaimStatus = 'on_review' | 'approved';

interface ClaimSqlRow {
  id: string;
  message: string;
  resource_type: string;
  resource_id: string;
  status: string;
  upload_datetime: Date;
  uploader_iss: string;
  uploader_sub: string;
  removed_datetime: Date | null;
}

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
  const rows = await tx.execute<LockedResult[]>(
    'select id, deleted, uploader_iss, uploader_sub from result where id = ? for update',
    [id],
  );
  if (!rows[0]) throw errors.notFound('Result', id);
  return rows[0];
}

/**
 * The single rule of hiding: a result is hidden when it is deleted or has a claim (claims on review
 * and upheld ones are kept; rejected ones are removed). Call it, in the same transaction and with
 * the result locked, after every change of the result's claims or deletion.
 */
export async function refreshHidden(tx: EntityManager, resultId: string): Promise<void> {
  await tx.execute(
    'update result set hidden = (deleted or exists (select 1 from claim c where c.resource_id = result.id)) where id = ?',
    [resultId],
  );
}

const CLAIM_SELECT = 'select c.*, u.removed_datetime from claim c left join app_user u on u.iss = c.uploader_iss and u.sub = c.uploader_sub';

async function findClaim(em: EntityManager, id: string, lock = false): Promise<ClaimSqlRow> {
  const rows = await em.execute<ClaimSqlRow[]>(`${CLAIM_SELECT} where c.id = ?${lock ? ' for update of c' : ''}`, [id]);
  if (!rows[0]) throw errors.notFound('Claim', id);
  return rows[0];
}

export const getClaim = (em: EntityManager, id: string) => findClaim(em, id).then(claimView);

/** Files a claim: the result is hidden until the claim is rejected or deleted. */
export async function claimResult(em: EntityManager, caller: Caller, resultId: string, message: string) {
  if (message.includes('\u0000')) {
    throw new AppError(422, 'INVALID_BODY', 'The message contains the NUL character (\\u0000).', {
      errors: [{ in: 'body', path: '/message', message: 'must not contain the NUL character' }],
    });
  }
  const id = randomUUID();
  await em.transactional(async (tx) => {
    const result = await lockResult(tx, resultId);
    if (result.deleted) throw errors.conflict('RESULT_DELETED', `Result ${resultId} was deleted by an administrator: there is nothing left to claim.`);
    await tx.execute(
      `insert into claim (id, resource_type, resource_id, message, status, upload_datetime, uploader_iss, uploader_sub)
       values (?, 'result', ?, ?, 'on_review', ?::timestamptz, ?, ?)`,
      [id, resultId, message, new Date().toISOString(), caller.identity.iss, caller.identity.sub],
    );
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
  await em.transactional(async (tx) => {
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

export interface ClaimListQuery {
  status?: ClaimStatus;
  resource_type?: 'result';
  resource_id?: string;
  upload_before?: string;
  upload_after?: string;
  sort_by?: string;
  page?: number;
  per_page?: number;
}

const SORT_COLUMNS: Record<string, string> = { upload_datetime: 'c.upload_datetime', id: 'c.id', status: 'c.status' };
const parseClaimSort = fixedFieldSort(Object.keys(SORT_COLUMNS), '+upload_datetime');

/** A page of claims narrowed by `scope` (fixed SQL with its values) and the query's filters. */
export async function listClaims(em: EntityManager, query: ClaimListQuery, scope: { sql: string; params: unknown[] }[] = []) {
  const where = new Where();
  for (const s of scope) where.add(s.sql, ...s.params);
  if (query.status) where.add('c.status = ?', query.status);
  if (query.resource_type) where.add('c.resource_type = ?', query.resource_type);
  if (query.resource_id) where.add('c.resource_id = ?', query.resource_id);
  if (query.upload_before) where.add('c.upload_datetime < ?::timestamptz', parseDateBound(query.upload_before).toISOString());
  if (query.upload_after) where.add('c.upload_datetime > ?::timestamptz', parseDateBound(query.upload_after).toISOString());
  const terms = parseClaimSort(query.sort_by);
  const order = terms.map((t) => `${SORT_COLUMNS[t.field]} ${t.descending ? 'desc' : 'asc'}`);
  if (!terms.some((t) => t.field === 'id')) order.push(`c.id ${terms.at(-1)?.descending ? 'desc' : 'asc'}`);
  const request = pageRequest(query);
  const { limit, offset } = limitOffset(request);
  const [rows, counted] = await Promise.all([
    em.execute<ClaimSqlRow[]>(`${CLAIM_SELECT} ${where.toSql()} order by ${order.join(', ')} limit ? offset ?`, [...where.params, limit, offset]),
    em.execute<{ total: number }[]>(`select count(*)::int as total from claim c ${where.toSql()}`, where.params),
  ]);
  return pageEnvelope(rows.map(claimView), counted[0]!.total, request);
}

/** Claims of one result, for its uploader or an administrator. */
export async function listResultClaims(em: EntityManager, caller: Caller, resultId: string, query: ClaimListQuery) {
  const rows = await em.execute<LockedResult[]>('select id, deleted, uploader_iss, uploader_sub from result where id = ?', [resultId]);
  if (!rows[0]) throw errors.notFound('Result', resultId);
  requireUploaderOrAdmin(caller, rows[0]);
  return listClaims(em, query, [{ sql: 'c.resource_id = ?', params: [resultId] }]);
}
