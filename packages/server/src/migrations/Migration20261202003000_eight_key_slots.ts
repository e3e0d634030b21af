import { Migration } from '@mikro-orm/migrations';
import { updateFunction } from './Migration20261126030000_metric_values_moved.ts';
import { insertFunction } from './Migration20261201000000_one_read_path.ts';
import { metricRowsSql } from '../db/metric-rows.ts';

/**
 * Eight key slots instead of four (docs/decisions.md, "Key columns"): a filter on any of a benchmark's
 * first eight paths is checked on the walked entry itself, with no set to hash. The columns are added
 * empty; the next start chooses every benchmark's paths again (the choice's version names the slots)
 * and its background pass writes the rows of the benchmarks whose slots moved.
 */
const index = (slots: number) =>
  'create index metric_value_path_idx on metric_value (path_id, value, result_id) include (flavor_id, site_id, execution_datetime, ' +
  `${Array.from({ length: slots }, (_, i) => `k${i + 1}`).join(', ')}) where not hidden;`;

export class Migration20261202003000_eight_key_slots extends Migration {
  override async up(): Promise<void> {
    this.addSql('alter table metric_value add column k5 numeric, add column k6 numeric, add column k7 numeric, add column k8 numeric;');
    this.addSql('alter table metric_path drop constraint if exists metric_path_slot_check;');
    this.addSql('alter table metric_path add constraint metric_path_slot_check check (slot between 1 and 8);');
    this.addSql('drop index if exists metric_value_path_idx;');
    this.addSql(index(8));
    this.addSql(insertFunction(metricRowsSql('metric_new_results', '', 8)));
    this.addSql(updateFunction(true, (where) => metricRowsSql('metric_new_results', where, 8)));
  }

  override async down(): Promise<void> {
    this.addSql(insertFunction(metricRowsSql('metric_new_results', '', 4)));
    this.addSql(updateFunction(true, (where) => metricRowsSql('metric_new_results', where, 4)));
    this.addSql('drop index if exists metric_value_path_idx;');
    this.addSql(index(4));
    this.addSql('update metric_path set slot = null where slot > 4;');
    this.addSql('alter table metric_path drop constraint if exists metric_path_slot_check;');
    this.addSql('alter table metric_path add constraint metric_path_slot_check check (slot between 1 and 4);');
    this.addSql('alter table metric_value drop column k5, drop column k6, drop column k7, drop column k8;');
  }
}
