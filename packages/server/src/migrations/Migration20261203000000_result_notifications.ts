import { Migration } from '@mikro-orm/migrations';

/**
 * Writes to results notify `benchmarks_changes` with the benchmarks they touched: `result <id> <id>…`
 * (a plain `result` when they are too many for a notification's 8,000 bytes, or for a truncate), so
 * that the refreshes of watched series (services/alerts/scheduler.ts) follow only the benchmarks
 * written to. Statement-level triggers with transition tables: one call and one small aggregate a
 * statement, as before one call. PostgreSQL allows transition tables on single-event triggers only.
 */
export class Migration20261203000000_result_notifications extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create function benchmarks_notify_results() returns trigger language plpgsql as $$
      declare ids text;
      begin
        if tg_op = 'DELETE' then
          select string_agg(distinct benchmark_id::text, ' ') into ids from old_rows;
        else
          select string_agg(distinct benchmark_id::text, ' ') into ids from new_rows;
        end if;
        if ids is null then return null; end if;
        perform pg_notify('benchmarks_changes', case when length(ids) > 7000 then 'result' else 'result ' || ids end);
        return null;
      end $$;`);
    this.addSql('drop trigger result_notify_change on result;');
    this.addSql(
      'create trigger result_notify_truncate after truncate on result for each statement execute function benchmarks_notify_change();',
    );
    for (const [event, rows] of [
      ['insert', 'new table as new_rows'],
      ['update', 'new table as new_rows'],
      ['delete', 'old table as old_rows'],
    ]) {
      this.addSql(
        `create trigger result_notify_${event} after ${event} on result referencing ${rows} ` +
          'for each statement execute function benchmarks_notify_results();',
      );
    }
  }

  override async down(): Promise<void> {
    for (const event of ['insert', 'update', 'delete', 'truncate']) this.addSql(`drop trigger if exists result_notify_${event} on result;`);
    this.addSql('drop function if exists benchmarks_notify_results();');
    this.addSql(
      'create trigger result_notify_change after insert or update or delete or truncate on result ' +
        'for each statement execute function benchmarks_notify_change();',
    );
  }
}
