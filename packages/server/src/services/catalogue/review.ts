/**
 * The review workflow of the reviewed resources (docs/review.md): approve, reject, and the
 * administrator delete that refuses to take results along unless asked to.
 */
import type { EntityManager } from '@mikro-orm/postgresql';
import { errors } from '../../core/errors.ts';
import { transaction } from '../../db/transaction.ts';
import { getItem, type CatalogueKind, type ReferenceCounts, type ReviewedRow } from './catalogue.ts';

function alreadyApproved(label: string, id: string) {
  return errors.conflict('ALREADY_APPROVED', `${label} ${id} is already approved.`);
}

/** On review → approved, atomically; an approved item gives 409 ALREADY_APPROVED. */
export async function approveItem<Row extends ReviewedRow>(
  em: EntityManager,
  kind: CatalogueKind<Row, unknown>,
  id: string,
): Promise<void> {
  const updated = await em.execute<{ id: string }[]>(
    `update ${kind.table} set status = 'approved' where id = ? and status = 'on_review' returning id`,
    [id],
  );
  if (updated.length) return;
  await getItem(em, kind, id); // 404 when it does not exist
  throw alreadyApproved(kind.label, id);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Deleted results still refer to the item until a cascade removes them: the message says how many. */
function referencedError<Row extends ReviewedRow>(kind: CatalogueKind<Row, unknown>, row: Row, counts: ReferenceCounts, how: string) {
  const { deleted, ...shown } = counts;
  const deletedNote = deleted === 0 ? '' : shown.count === 1 ? ' (deleted)' : ` (${deleted} of them deleted)`;
  const parts = Object.entries(shown)
    .filter(([, n]) => n > 0)
    .map(([what, n]) => (what === 'count' ? plural(n, 'result') + deletedNote : plural(n, what.replace(/s$/, ''))));
  return errors.conflict('REFERENCED', `${kind.label} ${kind.title(row)} is referenced by ${parts.join(' and ')}; ${how}.`, shown);
}

/**
 * Removes an item in one transaction, the row locked against a concurrent approve.
 * - `reject`: only an item on review (else 409 ALREADY_APPROVED); takes along what is itself on
 *   review (a site's flavors), refuses (409 REFERENCED) when anything else refers to it.
 * - `delete`: any status; refuses when anything refers to it, unless `cascade`.
 */
export async function removeItem<Row extends ReviewedRow>(
  em: EntityManager,
  kind: CatalogueKind<Row, unknown>,
  id: string,
  mode: 'delete' | 'reject',
  cascade = false,
): Promise<void> {
  await transaction(em, async (tem) => {
    const [locked] = await tem.execute<{ status: string }[]>(`select status from ${kind.table} where id = ? for update`, [id]);
    if (!locked) throw errors.notFound(kind.label, id);
    if (mode === 'reject' && locked.status === 'approved') throw alreadyApproved(kind.label, id);
    const counts = await kind.references.count(tem, id, mode);
    const referenced = Object.values(counts).some((n) => n > 0);
    if (referenced && (mode === 'reject' || !cascade)) {
      const row = await getItem(tem, kind, id);
      const how =
        mode === 'reject'
          ? 'an administrator may delete it with DELETE and ?cascade=true instead'
          : `add ?cascade=true to ${kind.references.cascadeHint}`;
      throw referencedError(kind, row, counts, how);
    }
    await kind.references.cascade(tem, id);
    await tem.execute(`delete from ${kind.table} where id = ?`, [id]);
  });
}
