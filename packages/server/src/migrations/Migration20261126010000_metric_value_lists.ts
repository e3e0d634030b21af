import { Migration } from '@mikro-orm/migrations';

/**
 * What result lists need of the metric values table (services/metric-lookup.ts; docs/querying.md,
 * "Filters and sorts from the metric values table"), besides its `(path_id, value)` index (a sort's
 * walk, a numeric filter's range, a total's index-only count): extended statistics on (path_id,
 * value). The values of one path lie in a range of their own, which per-column statistics cannot
 * see (a range filter's estimate would use the histogram of every path's values together); the MCV
 * list of the pair gives the planner the frequent values of each path (a CPU count, an integer
 * setting), so that a filter's selectivity, hence the choice between walking the sort's index and
 * reading the filter's range first, is estimated from that path's own values.
 *
 * The table is filled after start (services/metric-values.ts), and its pass ends with
 * `vacuum (analyze)`, which gathers these statistics too (autovacuum's ANALYZE keeps them).
 */
export class Migration20261126010000_metric_value_lists extends Migration {
  override async up(): Promise<void> {
    this.addSql('create statistics if not exists metric_value_path_value (mcv, dependencies) on path_id, value from metric_value;');
  }

  override async down(): Promise<void> {
    this.addSql('drop statistics if exists metric_value_path_value;');
  }
}
