/** Administrator views: items waiting for review, and users (list, search, remove). */
import type { EntityManager } from '@mikro-orm/postgresql';
import { SubmitSort, UserSort } from '@benchmarks/sdk/contract/admin';
import { errors } from '../../core/errors.ts';
import { addTerms, addUploadBounds, columnKeys, contractSort, paginate } from './catalogue.ts';
import { formatTimestamp } from '../../core/format.ts';
import { Where } from '../../db/sql.ts';
import { UPLOADER_JOIN } from './uploader.ts';
import { UPLOADER_ADMIN_COLUMNS, type UploaderAdminColumns, uploaderAdminView, userAdminView } from './users.ts';

type PageQuery = { sort_by?: string; page?: number; per_page?: number; cursor?: string };

// ---------------------------------------------------------------------------------------------
// Submissions

const submitSort = contractSort(SubmitSort);

/** Everything on review, one row per item, with its uploader's user columns. */
const SUBMITS = `(
  select s.*, ${UPLOADER_ADMIN_COLUMNS} from (
    ${['benchmark', 'site', 'flavor', 'tag']
      .map(
        (t) =>
          `select '${t}' as resource_type, id as resource_id, upload_datetime, uploader_iss, uploader_sub from ${t} where status = 'on_review'`,
      )
      .join('\n    union all ')}
  ) s ${UPLOADER_JOIN}
) submits`;

interface SubmitRow extends UploaderAdminColumns {
  resource_type: 'benchmark' | 'site' | 'flavor' | 'tag';
  resource_id: string;
  upload_datetime: string;
}

export async function listSubmits(
  em: EntityManager,
  query: PageQuery & { resource_type?: SubmitRow['resource_type']; upload_before?: string; upload_after?: string },
) {
  const where = new Where();
  if (query.resource_type) where.add('resource_type = ?', query.resource_type);
  addUploadBounds(where, query);
  const keys = columnKeys(submitSort.sorter(query.sort_by), submitSort.columns, ['resource_type', 'resource_id']);
  return paginate(em, { from: SUBMITS }, where, keys, query, (row: SubmitRow) => ({
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    upload_datetime: formatTimestamp(row.upload_datetime),
    uploader: uploaderAdminView(row),
  }));
}

// ---------------------------------------------------------------------------------------------
// Users

const userSort = contractSort(UserSort);

type Selectors = { iss?: string; sub?: string; email?: string };

function selectorWhere(query: Selectors): Where {
  const where = new Where();
  for (const key of ['iss', 'sub', 'email'] as const) if (query[key] !== undefined) where.add(`${key} = ?`, query[key]);
  return where;
}

function listUsersWhere(em: EntityManager, where: Where, query: PageQuery) {
  const keys = columnKeys(userSort.sorter(query.sort_by), userSort.columns, ['iss', 'sub']);
  return paginate(em, { from: 'app_user' }, where, keys, query, userAdminView);
}

export const listUsers = (em: EntityManager, query: PageQuery & Selectors) => listUsersWhere(em, selectorWhere(query), query);

export function searchUsers(em: EntityManager, query: PageQuery & { terms?: string[] }) {
  const where = new Where();
  addTerms(where, query.terms, ['email', 'sub']);
  return listUsersWhere(em, where, query);
}

/**
 * Removes the users matching every given selector: erases their email and marks them removed.
 * What they uploaded stays (its uploader shows `removed: true`). At least one selector is needed.
 */
export async function removeUsers(em: EntityManager, query: Selectors): Promise<number> {
  const where = selectorWhere(query);
  if (!where.params.length) {
    throw errors.validation(
      'Name the users to remove with at least one of iss, sub or email.',
      [{ in: 'query', path: 'iss', message: 'at least one of iss, sub, email is required' }],
      'SELECTOR_REQUIRED',
    );
  }
  where.add('removed_datetime is null');
  const removed = await em.execute<{ iss: string }[]>(
    `update app_user set email = null, removed_datetime = now() ${where.toSql()} returning iss`,
    where.params,
  );
  return removed.length;
}

/**
 * Restores removed users matching every given selector (iss, sub; the email of a removed user is
 * gone): they are registered again, with the terms they had accepted, and without an email until
 * they refresh it (POST /users/self:update). A removed user cannot register again by itself.
 */
export async function restoreUsers(em: EntityManager, query: { iss?: string; sub?: string }): Promise<number> {
  const where = selectorWhere(query);
  if (!where.params.length) {
    throw errors.validation(
      'Name the users to restore with at least one of iss or sub.',
      [{ in: 'query', path: 'iss', message: 'at least one of iss, sub is required' }],
      'SELECTOR_REQUIRED',
    );
  }
  where.add('removed_datetime is not null');
  const restored = await em.execute<{ iss: string }[]>(
    `update app_user set removed_datetime = null ${where.toSql()} returning iss`,
    where.params,
  );
  return restored.length;
}
