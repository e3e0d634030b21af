import { Migration } from '@mikro-orm/migrations';

/**
 * What result lists need of the metric values table (services/metric-lookup.ts; docs/querying.md,
 * "Filters and sorts from the metric values table"):
 *
 * - `metric_value_sort_idx` on (path_id, value, result_id) of the visible rows: a JSON sort of a
 *   benchmark's results walks it in order (both directions, ties by id), a numeric filter is a range
 *   of it, and a list's total under such filters is counted from it alone (index-only).
 * - Extended statistics on (path_id, value): the values of one path lie in a range of their own, which
 *   per-column statistics cannot see (a range filter's estimate would use the histogram of every
 *   path's values together); the MCV list of the pair gives the planner the frequent values per path.
 *
 * The table is filled after start (services/metric-values.ts), and its pass ends with
 * `vacuum (analyze)`, which gathers these statistics too.
 */
export class Migration20261126010000_metric_value_lists extends Migration {
  override async up(): Promise<void> {
    this.addSql('create index metric_value_sort_idx on metric_value (path_id, value, result_id) where not hidden;');
    this.addSql('create statistics metric_value_path_value (mcv, dependencies) on path_id, value from metric_value;');
  }

  override async down(): Promise<void> {
    this.addSql('drop statistics if exists metric_value_path_value;');
    this.addSql('drop index if exists metric_value_sort_idx;');
  }
}
