/**
 * The phases before the results: users, tags, benchmarks, sites and flavors, in an order where
 * everything a row refers to is there before it. Catalogue rows are few: each is inserted on its
 * own, so that a clash of names refuses that row only, with the row already holding the name.
 */
import { commit, type ImportContext, progress, stopping } from './context.ts';
import { nulPointer, ORIGIN_SERVICE_USER, ORIGIN_TERMS_VERSION, reviewStatus, userEmail } from './mapping.ts';
import type { SourceBenchmark, SourceFlavor, SourceSite } from './source.ts';
import { BatchTally, type Kind } from './summary.ts';
import type { UserRow } from '../db/table-columns.ts';
import { type CatalogueOutcome, userKey } from './target.ts';

/** Runs the phases in order; false when the run was asked to stop. */
export async function importCatalogue(ctx: ImportContext): Promise<boolean> {
  const phases = [
    importUsers,
    importTags,
    () => eachRow(ctx, 'benchmarks', ctx.source.benchmarks(ctx.batchSize), importBenchmark),
    () => eachRow(ctx, 'sites', ctx.source.sites(ctx.batchSize), importSite),
    () => eachRow(ctx, 'flavors', ctx.source.flavors(ctx.batchSize), importFlavor),
  ];
  for (const phase of phases) {
    if (!(await phase(ctx))) return false;
  }
  return true;
}

/** A phase of rows inserted one by one, a batch of the source at a time; false when asked to stop. */
async function eachRow<Row>(
  ctx: ImportContext,
  kind: Kind,
  batches: AsyncIterable<Row[]>,
  one: (ctx: ImportContext, row: Row, batch: BatchTally) => Promise<void>,
): Promise<boolean> {
  for await (const rows of batches) {
    if (stopping(ctx)) return false;
    const batch = new BatchTally();
    for (const row of rows) await one(ctx, row, batch);
    commit(ctx, kind, batch);
  }
  progress(ctx, kind, true);
  return true;
}

async function importUsers(ctx: ImportContext): Promise<boolean> {
  let n = 0;
  for await (const rows of ctx.source.users(ctx.batchSize)) {
    if (stopping(ctx)) return false;
    const batch = new BatchTally();
    const users = rows.map(
      (u): UserRow => ({ ...u, email: userEmail(u.email), terms_version: ORIGIN_TERMS_VERSION, removed_datetime: null }),
    );
    await ctx.target.transaction(async () => {
      const written = await ctx.target.insertUsers(users);
      for (const user of users) {
        const key = userKey(user);
        if (!written.has(key)) {
          batch.skip('users', 'ALREADY_PRESENT');
          continue;
        }
        batch.import('users');
        if (!user.email) {
          batch.flag(
            'users',
            key,
            'NO_EMAIL',
            'the original service kept no email for this user: administrators see none until the user refreshes it (POST /users/self:update)',
          );
        }
      }
      await ctx.onBatch?.({ kind: 'users', batch: ++n, rows: rows.length });
    });
    commit(ctx, 'users', batch);
  }
  progress(ctx, 'users', true);
  return true;
}

/** Tags had no review, uploader or upload time there: approved, uploaded by the original service at its epoch. */
function importTags(ctx: ImportContext): Promise<boolean> {
  let owner = false;
  return eachRow(ctx, 'tags', ctx.source.tags(ctx.batchSize), async (_, tag, batch) => {
    if (!owner) {
      owner = true;
      await ctx.target.insertUsers([
        {
          ...ORIGIN_SERVICE_USER,
          email: null,
          registration_datetime: ctx.epoch,
          terms_version: ORIGIN_TERMS_VERSION,
          removed_datetime: null,
        },
      ]);
    }
    const outcome = await ctx.target.insertCatalogue('tag', {
      ...tag,
      status: 'approved',
      upload_datetime: ctx.epoch,
      uploader_iss: ORIGIN_SERVICE_USER.iss,
      uploader_sub: ORIGIN_SERVICE_USER.sub,
    });
    if (settle(batch, 'tags', tag.id, outcome, `a tag named "${tag.name}"`)) ctx.tags.add(tag.id);
  });
}

/** The stored schema as JSON, `{}` for none; or why jsonb cannot hold it. */
function parseSchema(text: string | null): { schema: unknown; wasNull: boolean } | { unstorable: string } {
  if (text === null) return { schema: {}, wasNull: true };
  const schema = JSON.parse(text) as unknown; // the json column holds valid JSON text
  const nul = nulPointer(schema);
  if (nul) return { unstorable: `its json_schema holds the NUL character (\\u0000) at ${nul}, which PostgreSQL's jsonb cannot store` };
  return { schema: schema === null ? {} : schema, wasNull: schema === null };
}

async function importBenchmark(ctx: ImportContext, row: SourceBenchmark, batch: BatchTally): Promise<void> {
  const parsed = parseSchema(row.json_schema);
  if ('unstorable' in parsed) {
    batch.refuse(
      'benchmarks',
      row.id,
      'UNSTORABLE_SCHEMA',
      `${parsed.unstorable}: fix it in the original database, then run the import again`,
    );
    return;
  }
  const { status, nullStatus } = reviewStatus(row.status);
  const outcome = await ctx.target.insertCatalogue('benchmark', {
    ...row,
    status,
    container_image: row.docker_image,
    container_tag: row.docker_tag,
    json_schema: JSON.stringify(parsed.schema),
  });
  if (!settle(batch, 'benchmarks', row.id, outcome, `a benchmark of ${row.docker_image}:${row.docker_tag}`)) return;
  ctx.schemas.add(row.id, parsed.schema);
  if (!('written' in outcome)) return;
  if (nullStatus) flagNullStatus(batch, 'benchmarks', row.id);
  if (parsed.wasNull)
    batch.flag('benchmarks', row.id, 'SCHEMA_NULL', 'its json_schema was null: imported as {}, which accepts every result');
  const verdict = await ctx.schemas.verdict(row.id);
  if (!verdict.accepted) {
    batch.flag(
      'benchmarks',
      row.id,
      'SCHEMA_NOT_ACCEPTED',
      `this service would refuse its json_schema (${verdict.reason}): imported as it is; its results are imported without validation, ` +
        'and uploads to it are refused (422 INVALID_BENCHMARK_SCHEMA) until an administrator replaces it (PUT /benchmarks/{id})',
    );
  }
}

async function importSite(ctx: ImportContext, row: SourceSite, batch: BatchTally): Promise<void> {
  const { status, nullStatus } = reviewStatus(row.status);
  const outcome = await ctx.target.insertCatalogue('site', { ...row, status });
  if (!settle(batch, 'sites', row.id, outcome, `a site named "${row.name}"`)) return;
  ctx.sites.add(row.id);
  if (nullStatus && 'written' in outcome) flagNullStatus(batch, 'sites', row.id);
}

async function importFlavor(ctx: ImportContext, row: SourceFlavor, batch: BatchTally): Promise<void> {
  if (!ctx.sites.has(row.site_id)) {
    batch.refuse('flavors', row.id, 'PARENT_REFUSED', `its site ${row.site_id} was refused`);
    return;
  }
  const { status, nullStatus } = reviewStatus(row.status);
  // The original service had no prices: a flavor comes without one, for an administrator to set.
  const outcome = await ctx.target.insertCatalogue('flavor', { ...row, status, price_per_hour: null, currency: null });
  if (!settle(batch, 'flavors', row.id, outcome, `a flavor named "${row.name}" of site ${row.site_id}`)) return;
  ctx.flavors.set(row.id, row.site_id);
  if (nullStatus && 'written' in outcome) flagNullStatus(batch, 'flavors', row.id);
}

/**
 * Counts a catalogue row's outcome; true when the row is here now (written, or present with the
 * same id), so that rows referring to it may be imported.
 */
function settle(batch: BatchTally, kind: Kind, id: string, outcome: CatalogueOutcome, what: string): boolean {
  if ('takenBy' in outcome) {
    batch.refuse(
      kind,
      id,
      'NAME_TAKEN',
      `${what} is already here with another id (${outcome.takenBy}): rename or delete one of them, then run the import again`,
    );
    return false;
  }
  if ('written' in outcome) batch.import(kind);
  else batch.skip(kind, 'ALREADY_PRESENT');
  return true;
}

export function flagNullStatus(batch: BatchTally, kind: Kind, id: string): void {
  batch.flag(
    kind,
    id,
    'STATUS_NULL',
    'its status was null (never approved there): imported on review, for administrators to approve or reject',
  );
}
