import { Migration } from '@mikro-orm/migrations';
import { defaultRows, updateFunction } from './Migration20261126030000_metric_values_moved.ts';
import { metricRowsSql } from '../db/metric-rows.ts';

/**
 * One read path for numeric JSON paths: the metric values table (docs/querying.md, "Filters and
 * sorts from the metric values table").
 *
 * - Key columns: up to four paths of each benchmark (its headline metrics first) get a slot
 *   (`metric_path.slot`, 1 to 4), and every row of a result carries the result's numbers at those
 *   paths (`k1` … `k4`, null where it holds none), included in the path index. A walk of one path's
 *   index checks a filter on a key path from the entry it stands on, and the range of a filter on a
 *   key path yields each match's number at a key sort path, without a lookup per row.
 * - `metric_value_result_idx` becomes `(result_id, path_id) include (value)`: a result's number at
 *   one path is an index-only lookup; updates, claims and deletions find a result's rows by its prefix.
 * - The expression indexes servers built at run time on `result` for suggested metrics
 *   (`result_metric_<hash>` and `_x`) are dropped: the table serves those sorts.
 * - The rows are written again with their key columns: the table is emptied and every benchmark's
 *   paths are chosen anew at the next start, whose background pass fills it (meanwhile lists and
 *   comparisons read the documents).
 */
const METRIC_NUMBER_SQL = `
      create or replace function metric_number(doc jsonb, path text[]) returns numeric language sql immutable parallel safe as $$
        select case when jsonb_typeof(doc #> path) = 'number' then (doc #> path)::numeric end
      $$;`;

export const insertFunction = (rows: string) => `
      create or replace function metric_values_insert() returns trigger language plpgsql as $$
      begin${rows}
        return null;
      end $$;`;

export class Migration20261201000000_one_read_path extends Migration {
  override async up(): Promise<void> {
    this.addSql(METRIC_NUMBER_SQL);
    this.addSql('alter table metric_path add column slot smallint null check (slot between 1 and 4);');
    this.addSql('create unique index metric_path_slot_unique on metric_path (benchmark_id, slot);');
    this.addSql('truncate metric_value;');
    this.addSql('delete from metric_benchmark;');
    this.addSql("update metric_backfill set benchmarks = '{}', next_block = 0, end_block = 0;");
    this.addSql('alter table metric_value add column k1 numeric, add column k2 numeric, add column k3 numeric, add column k4 numeric;');
    this.addSql('drop index if exists metric_value_path_idx;');
    this.addSql(
      'create index metric_value_path_idx on metric_value (path_id, value, result_id) include (flavor_id, site_id, execution_datetime, k1, k2, k3, k4) where not hidden;',
    );
    this.addSql('drop index if exists metric_value_result_idx;');
    this.addSql('create index metric_value_result_idx on metric_value (result_id, path_id) include (value);');
    this.addSql(insertFunction(metricRowsSql('metric_new_results', '', 4)));
    // As migration 20261126030000's, with the key columns.
    this.addSql(updateFunction(true, (where) => metricRowsSql('metric_new_results', where, 4)));
    this.addSql(`
      do $$
      declare
        name text;
      begin
        for name in select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
                    where c.relkind = 'i' and n.nspname = current_schema() and c.relname ~ '^result_metric_[0-9a-f]{24}(_x){0,1}$'
        loop
          execute format('drop index if exists %I', name);
        end loop;
      end $$;`);
  }

  override async down(): Promise<void> {
    this.addSql(insertFunction(defaultRows('')));
    this.addSql(updateFunction(true));
    this.addSql('drop index if exists metric_value_result_idx;');
    this.addSql('create index metric_value_result_idx on metric_value (result_id);');
    this.addSql('drop index if exists metric_value_path_idx;');
    this.addSql(
      'create index metric_value_path_idx on metric_value (path_id, value, result_id) include (flavor_id, site_id, execution_datetime) where not hidden;',
    );
    this.addSql('alter table metric_value drop column k1, drop column k2, drop column k3, drop column k4;');
    this.addSql('drop index if exists metric_path_slot_unique;');
    this.addSql('alter table metric_path drop column slot;');
  }
}
