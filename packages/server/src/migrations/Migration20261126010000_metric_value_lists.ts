import { Migration } from '@mikro-orm/migrations';

/**
 * What result lists need of the metric values table (services/metrics/metric-lookup.ts; docs/querying.md,
 * "Filters and sorts from the metric values table"):
 *
 * - `metric_value_path_idx` with the result's id in its key, `(path_id, value, result_id) include
 *   (flavor_id, site_id, execution_datetime) where not hidden`: a sort's walk and a filter's range
 *   then name their results from the index alone (index-only scans; without the id, every entry
 *   walked cost a heap fetch), and ties sort by id from the index. It replaces the index of the same
 *   name without the id (what a comparison reads is all still included), so the table keeps two
 *   indexes; each entry is 16 bytes wider.
 * - Extended statistics on (path_id, value): the values of one path lie in a range of their own,
 *   which per-column statistics cannot see (a range filter's estimate would use the histogram of
 *   every path's values together); the MCV list of the pair gives the planner the frequent values of
 *   each path (a CPU count, an integer setting).
 *
 * The table is filled after start (services/metrics/metric-values.ts), and its pass ends with
 * `vacuum (analyze)`, which gathers these statistics too (autovacuum's ANALYZE keeps them).
 */
export class Migration20261126010000_metric_value_lists extends Migration {
  override async up(): Promise<void> {
    this.addSql('drop index if exists metric_value_path_idx;');
    this.addSql(
      'create index metric_value_path_idx on metric_value (path_id, value, result_id) include (flavor_id, site_id, execution_datetime) where not hidden;',
    );
    this.addSql('create statistics if not exists metric_value_path_value (mcv, dependencies) on path_id, value from metric_value;');
  }

  override async down(): Promise<void> {
    this.addSql('drop statistics if exists metric_value_path_value;');
    this.addSql('drop index if exists metric_value_path_idx;');
    this.addSql(
      'create index metric_value_path_idx on metric_value (path_id, value) include (flavor_id, site_id, execution_datetime) where not hidden;',
    );
  }
}
