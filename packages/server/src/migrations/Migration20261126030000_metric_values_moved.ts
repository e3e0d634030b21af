import { Migration } from '@mikro-orm/migrations';

/**
 * The update trigger of the metric values table (migration 20261126000000) also writes the rows a
 * result lacks when its benchmark's values are not complete yet and the update leaves its values
 * as they were (a claim, a deletion, any other column): such an update may move the result to a
 * heap block the backfill pass has passed already or will never reach (past the end it recorded),
 * and the pass would then never write them. The rows are written from the result's new version,
 * as the pass would; results of complete benchmarks have all their rows, and are not looked at.
 */
export const defaultRows = (where: string) => `
        insert into metric_value (result_id, flavor_id, site_id, execution_datetime, path_id, hidden, value)
        select n.id, n.flavor_id, n.site_id, n.execution_datetime, p.id, n.hidden,
               case when jsonb_typeof(n.json #> p.path) = 'number' then (n.json #> p.path)::numeric end
        from metric_new_results n join metric_path p on p.benchmark_id = n.benchmark_id${where};`;

/** The update trigger's function; `rows(where)` writes the rows of the new results with `where` (later migrations pass theirs). */
export const updateFunction = (missing: boolean, rows: (where: string) => string = defaultRows) => `
      create or replace function metric_values_update() returns trigger language plpgsql as $$
      declare
        rewritten uuid[];
      begin
        perform pg_advisory_xact_lock_shared(1650814563, 2);
        select coalesce(array_agg(n.id), '{}') into rewritten
        from metric_new_results n left join metric_old_results o on o.id = n.id
        where o.id is null or n.json is distinct from o.json or n.benchmark_id is distinct from o.benchmark_id
          or n.flavor_id is distinct from o.flavor_id or n.site_id is distinct from o.site_id
          or n.execution_datetime is distinct from o.execution_datetime;
        if cardinality(rewritten) > 0 or exists (select 1 from metric_old_results o where o.id not in (select id from metric_new_results)) then
          delete from metric_value v using metric_old_results o
          where v.result_id = o.id and (o.id in (select unnest(rewritten)) or o.id not in (select id from metric_new_results));${rows(
            ' where n.id in (select unnest(rewritten))',
          )}
        end if;
        update metric_value v set hidden = n.hidden
        from metric_new_results n join metric_old_results o on o.id = n.id
        where v.result_id = n.id and n.hidden <> o.hidden and n.id not in (select unnest(rewritten));${
          missing
            ? rows(
                ' join metric_benchmark m on m.benchmark_id = n.benchmark_id and not m.complete' +
                  '\n        where n.id not in (select unnest(rewritten))' +
                  '\n          and not exists (select 1 from metric_value v where v.result_id = n.id and v.path_id = p.id)',
              )
            : ''
        }
        return null;
      end $$;`;

export class Migration20261126030000_metric_values_moved extends Migration {
  override async up(): Promise<void> {
    this.addSql(updateFunction(true));
  }

  override async down(): Promise<void> {
    this.addSql(updateFunction(false));
  }
}
