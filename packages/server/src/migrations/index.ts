import type { MigrationObject } from '@mikro-orm/core';

/** Every migration, by name, in order: each is the file `<name>.ts` of this folder, exporting its class as `<name>`. */
export const migrationNames: readonly string[] = [
  'Migration20261122000000_initial',
  'Migration20261123000000_inline_documents',
  'Migration20261124010000_idempotency_keys',
  'Migration20261124100000_app_setting',
  'Migration20261124200000_flavor_prices',
  'Migration20261125000000_shared_state',
  'Migration20261126000000_metric_values',
  'Migration20261126010000_metric_value_lists',
  'Migration20261126030000_metric_values_moved',
  'Migration20261201000000_one_read_path',
  'Migration20261202000000_alert_events',
  'Migration20261202003000_eight_key_slots',
  'Migration20261202010000_watches',
  'Migration20261202020000_webhooks',
  'Migration20261203000000_result_notifications',
];

/**
 * Every migration with its class, in order, loaded to apply them: their module loads
 * @mikro-orm/migrations (umzug and its command line), about a tenth of a second a start with
 * nothing to apply would pay. From the sources (tsx) the files are TypeScript, from dist/ JavaScript.
 */
export async function loadMigrations(): Promise<MigrationObject[]> {
  const extension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return Promise.all(
    migrationNames.map(async (name) => {
      const module: Record<string, unknown> = await import(new URL(`./${name}.${extension}`, import.meta.url).href);
      return { name, class: module[name] as MigrationObject['class'] };
    }),
  );
}

/**
 * The migrations not applied yet, every one when their table is missing: `query` runs
 * `select name from mikro_orm_migrations` where the caller reads, after asking whether the table
 * exists (a select on a missing one would log an ERROR in PostgreSQL's log on every first start).
 */
export async function pendingMigrations(query: (sql: string) => Promise<Record<string, unknown>[]>): Promise<string[]> {
  const [{ present }] = (await query(`select to_regclass('mikro_orm_migrations') is not null as present`)) as [{ present: boolean }];
  const applied = new Set(present ? (await query('select name from mikro_orm_migrations')).map((r) => r.name) : []);
  return migrationNames.filter((name) => !applied.has(name));
}
