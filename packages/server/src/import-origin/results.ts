/**
 * The results phase: a batch at a time in id order, each in one transaction with its tags and
 * claims. Results already here are left as they are (a claim rejected or tags replaced here since
 * is kept). Then the claims no result links to, which are refused.
 */
import { commit, type ImportContext, progress, stopping } from './context.ts';
import { flagNullStatus } from './catalogue.ts';
import { resultVisibility, reviewStatus } from './mapping.ts';
import type { SourceResult } from './source.ts';
import { BatchTally } from './summary.ts';
import type { ResultRow } from '../db/table-columns.ts';
import type { TargetClaim } from './target.ts';

/** The most violations quoted in a SCHEMA_VIOLATION note (the count is always given). */
const QUOTED_VIOLATIONS = 3;

/** What a batch writes, and the notes of each result (kept only if the result is written). */
interface Plan {
  results: ResultRow[];
  links: { result_id: string; tag_id: string }[];
  claims: TargetClaim[];
  notes: Map<string, BatchTally>;
}

/** Imports the results, their tags and claims, then reports unlinked claims; false when asked to stop. */
export async function importResults(ctx: ImportContext): Promise<boolean> {
  let n = 0;
  for await (const rows of ctx.source.results(ctx.batchSize)) {
    if (stopping(ctx)) return false;
    const tagsOf = groupTags(await ctx.source.tagsOf(rows.map((r) => r.id)));
    const batch = new BatchTally();
    await ctx.target.transaction(async () => {
      await writeBatch(ctx, rows, tagsOf, batch);
      await ctx.onBatch?.({ kind: 'results', batch: ++n, rows: rows.length });
    });
    commit(ctx, 'results', batch);
  }
  progress(ctx, 'results', true);
  progress(ctx, 'result_tags', true);
  return refuseUnlinkedClaims(ctx);
}

function groupTags(links: { result_id: string; tag_id: string }[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const { result_id, tag_id } of links) {
    const tags = out.get(result_id);
    if (tags) tags.push(tag_id);
    else out.set(result_id, [tag_id]);
  }
  return out;
}

async function writeBatch(ctx: ImportContext, rows: SourceResult[], tagsOf: Map<string, string[]>, batch: BatchTally): Promise<void> {
  const present = await ctx.target.existing(
    'result',
    rows.map((r) => r.id),
  );
  const plan: Plan = { results: [], links: [], claims: [], notes: new Map() };
  for (const row of rows) {
    if (present.has(row.id)) skipPresent(ctx, row, tagsOf, batch);
    else await planResult(ctx, row, tagsOf.get(row.id) ?? [], plan, batch);
  }
  const written = await ctx.target.insertResults(plan.results);
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const result of plan.results) {
    if (!written.has(result.id)) {
      // Written meanwhile by someone else (not another import: they take turns).
      skipPresent(ctx, byId.get(result.id)!, tagsOf, batch);
      continue;
    }
    batch.import('results');
    const notes = plan.notes.get(result.id);
    if (notes) batch.notes.push(...notes.notes);
  }
  const links = plan.links.filter((l) => written.has(l.result_id));
  const linked = await ctx.target.insertResultTags(links);
  batch.import('result_tags', linked);
  batch.skip('result_tags', 'ALREADY_PRESENT', links.length - linked);
  const claims = plan.claims.filter((c) => written.has(c.resource_id));
  const claimed = await ctx.target.insertClaims(claims);
  for (const claim of claims) {
    if (claimed.has(claim.id)) batch.import('claims');
    else batch.skip('claims', 'ALREADY_PRESENT');
  }
}

/** A result here already, left as it is; what the first run refused of it is refused again: it is still missing. */
function skipPresent(ctx: ImportContext, row: SourceResult, tagsOf: Map<string, string[]>, batch: BatchTally): void {
  batch.skip('results', 'ALREADY_PRESENT');
  for (const tag of tagsOf.get(row.id) ?? []) {
    if (ctx.tags.has(tag)) batch.skip('result_tags', 'ALREADY_PRESENT');
    else refuseLink(batch, row.id, tag);
  }
  if (!row.claim_id) return;
  if (row.claim_type === 'result') batch.skip('claims', 'ALREADY_PRESENT');
  else refuseClaimType(batch, row);
}

function refuseLink(batch: BatchTally, resultId: string, tagId: string): void {
  batch.refuse('result_tags', `${resultId}/${tagId}`, 'PARENT_REFUSED', `tag ${tagId} was refused: the result is imported without it`);
}

function refuseClaimType(batch: BatchTally, row: SourceResult): void {
  batch.refuse('claims', row.claim_id!, 'CLAIM_TYPE', `its resource_type is ${JSON.stringify(row.claim_type)}, not "result"`);
}

async function planResult(ctx: ImportContext, row: SourceResult, tags: string[], plan: Plan, batch: BatchTally): Promise<void> {
  const siteId = ctx.flavors.get(row.flavor_id);
  const parent = !ctx.schemas.has(row.benchmark_id)
    ? `its benchmark ${row.benchmark_id} was refused`
    : siteId === undefined
      ? `its flavor ${row.flavor_id} was refused`
      : null;
  if (parent || siteId === undefined) {
    refuseWithChildren(row, tags, parent ?? '', batch);
    return;
  }
  const notes = new BatchTally();
  const claimed = planClaim(row, plan, notes, batch);
  const visibility = resultVisibility(row.deleted, claimed);
  if (visibility.claimedButListed) {
    notes.flag(
      'results',
      row.id,
      'CLAIMED_BUT_LISTED',
      `the original service listed it although claim ${row.claim_id} is linked to it: hidden here until the claim is rejected or deleted`,
    );
  }
  if (siteId !== row.site_id) {
    notes.flag(
      'results',
      row.id,
      'SITE_FROM_FLAVOR',
      `its site ${row.site_id} is not its flavor's: imported at the flavor's site ${siteId}`,
    );
  }
  await validate(ctx, row, notes);
  plan.results.push({ ...row, site_id: siteId, deleted: visibility.deleted, hidden: visibility.hidden });
  for (const tag of tags) {
    if (ctx.tags.has(tag)) plan.links.push({ result_id: row.id, tag_id: tag });
    else refuseLink(batch, row.id, tag);
  }
  if (notes.notes.length) plan.notes.set(row.id, notes);
}

/** Plans the claim linked to the result; true when it has one. One of another type is refused: claims are of results only. */
function planClaim(row: SourceResult, plan: Plan, notes: BatchTally, batch: BatchTally): boolean {
  if (!row.claim_id) return false;
  if (row.claim_type !== 'result') {
    refuseClaimType(batch, row);
    return false;
  }
  const { status, nullStatus } = reviewStatus(row.claim_status);
  if (nullStatus) flagNullStatus(notes, 'claims', row.claim_id);
  plan.claims.push({
    id: row.claim_id,
    resource_id: row.id,
    message: row.claim_message!,
    status,
    upload_datetime: row.claim_upload_datetime!,
    uploader_iss: row.claim_uploader_iss!,
    uploader_sub: row.claim_uploader_sub!,
  });
  return true;
}

/** Checks the document with this service's validator of its benchmark; a violation is noted, never refused. */
async function validate(ctx: ImportContext, row: SourceResult, notes: BatchTally): Promise<void> {
  const validator = await ctx.schemas.validator(row.benchmark_id);
  if (!validator) {
    notes.flag(
      'results',
      row.id,
      'NOT_VALIDATED',
      `the json_schema of benchmark ${row.benchmark_id} is not accepted here: imported without validation`,
    );
    return;
  }
  const problems = validator(JSON.parse(row.json));
  if (!problems) return;
  const quoted = problems
    .slice(0, QUOTED_VIOLATIONS)
    .map((p) => `${p.path} ${p.message}`)
    .join('; ');
  const more = problems.length > QUOTED_VIOLATIONS ? `; and ${problems.length - QUOTED_VIOLATIONS} more` : '';
  notes.flag(
    'results',
    row.id,
    'SCHEMA_VIOLATION',
    `violates the json_schema of benchmark ${row.benchmark_id} (${problems.length} violation(s): ${quoted}${more}): imported as it is`,
  );
}

function refuseWithChildren(row: SourceResult, tags: string[], reason: string, batch: BatchTally): void {
  batch.refuse('results', row.id, 'PARENT_REFUSED', reason);
  for (const tag of tags) batch.refuse('result_tags', `${row.id}/${tag}`, 'PARENT_REFUSED', `its result ${row.id} was refused`);
  if (row.claim_id) batch.refuse('claims', row.claim_id, 'PARENT_REFUSED', `its result ${row.id} was refused`);
}

/** Claims no result links to: the original kept one claim per result, and a later claim replaced the link. */
async function refuseUnlinkedClaims(ctx: ImportContext): Promise<boolean> {
  for await (const rows of ctx.source.unlinkedClaims(ctx.batchSize)) {
    if (stopping(ctx)) return false;
    const batch = new BatchTally();
    for (const { id } of rows) {
      batch.refuse(
        'claims',
        id,
        'CLAIM_UNLINKED',
        'no result links to it (the original service linked one claim per result, and a later claim replaced this link): nothing to attach it to',
      );
    }
    commit(ctx, 'claims', batch);
  }
  progress(ctx, 'claims', true);
  return true;
}
