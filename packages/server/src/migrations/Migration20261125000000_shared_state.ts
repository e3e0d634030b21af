import { Migration } from '@mikro-orm/migrations';

/**
 * State shared by every server process of a deployment (docs/deploy.md, "Scaling out"):
 * - `rate_bucket`: the shared token bucket of each client per rate limit
 *   (rate-limit/shared.ts). Unlogged: nothing in it is worth a WAL record or surviving a
 *   crash (the buckets start full again), and it is written a few times a second per process.
 * - Change notifications: every statement that changes results, their tags or the catalogue
 *   notifies channel `benchmarks_changes` with the table's name (once per transaction and table:
 *   PostgreSQL folds identical notifications), delivered at commit to every process listening
 *   (db/change-listener.ts), which forgets its remembered totals. A statement-level trigger costs
 *   one call per statement, not per row, and covers writes from anywhere, SQL consoles included.
 */
export class Migration20261125000000_shared_state extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create unlogged table rate_bucket (
        limiter text not null,
        client text not null,
        tokens double precision not null,
        updated_ms double precision not null,
        primary key (limiter, client)
      );`);
    this.addSql(`
      create function benchmarks_notify_change() returns trigger language plpgsql as $$
      begin
        perform pg_notify('benchmarks_changes', tg_table_name);
        return null;
      end $$;`);
    for (const table of ['result', 'result_tag', 'benchmark', 'site', 'flavor', 'tag']) {
      this.addSql(
        `create trigger ${table}_notify_change after insert or update or delete or truncate on ${table} ` +
          'for each statement execute function benchmarks_notify_change();',
      );
    }
  }

  override async down(): Promise<void> {
    for (const table of ['result', 'result_tag', 'benchmark', 'site', 'flavor', 'tag']) {
      this.addSql(`drop trigger if exists ${table}_notify_change on ${table};`);
    }
    this.addSql('drop function if exists benchmarks_notify_change();');
    this.addSql('drop table if exists rate_bucket;');
  }
}
