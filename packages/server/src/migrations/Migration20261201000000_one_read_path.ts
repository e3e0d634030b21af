import { Migration } from '@mikro-orm/migrations';

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
export const METRIC_NUMBER_SQL = `
      create or replace function metric_number(doc jsonb, path text[]) returns numeric language sql immutable parallel safe as $$
        select case when jsonb_typeof(doc #> path) = 'number' then (doc #> path)::numeric end
      $$;`;

/**
 * The rows of the results `from` (with `where`): one per path of their benchmark, with the key
 * columns computed once per result (the fenced subquery: not once per row). Also the backfill's
 * (services/results/metric-values.ts).
 */
export const metricRowsSql = (from: string, where = '') => `
        insert into metric_value (result_id, flavor_id, site_id, execution_datetime, path_id, hidden, value, k1, k2, k3, k4)
        select n.id, n.flavor_id, n.site_id, n.execution_datetime, p.id, n.hidden, metric_number(n.json, p.path), n.k1, n.k2, n.k3, n.k4
        from (select n.*, k.k1, k.k2, k.k3, k.k4 from ${from} n
              cross join lateral (select max(metric_number(n.json, q.path)) filter (where q.slot = 1) as k1,
                                         max(metric_number(n.json, q.path)) filter (where q.slot = 2) as k2,
                                         max(metric_number(n.json, q.path)) filter (where q.slot = 3) as k3,
                                         max(metric_number(n.json, q.path)) filter (where q.slot = 4) as k4
                                  from metric_path q where q.benchmark_id = n.benchmark_id and q.slot is not null) k offset 0) n
        join metric_path p on p.benchmark_id = n.benchmark_id${where};`;

const LOCK = 'perform pg_advisory_xact_lock_shared(1650814563, 2);';

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
    this.addSql(`
      create or replace function metric_values_insert() returns trigger language plpgsql as $$
      begin${metricRowsSql('metric_new_results')}
        return null;
      end $$;`);
    // As migration 20261126030000's, with the key columns.
    this.addSql(`
      create or replace function metric_values_update() returns trigger language plpgsql as $$
      declare
        rewritten uuid[];
      begin
        ${LOCK}
        select coalesce(array_agg(n.id), '{}') into rewritten
        from metric_new_results n left join metric_old_results o on o.id = n.id
        where o.id is null or n.json is distinct from o.json or n.benchmark_id is distinct from o.benchmark_id
          or n.flavor_id is distinct from o.flavor_id or n.site_id is distinct from o.site_id
          or n.execution_datetime is distinct from o.execution_datetime;
        if cardinality(rewritten) > 0 or exists (select 1 from metric_old_results o where o.id not in (select id from metric_new_results)) then
          delete from metric_value v using metric_old_results o
          where v.result_id = o.id and (o.id in (select unnest(rewritten)) or o.id not in (select id from metric_new_results));${metricRowsSql(
            'metric_new_results',
            ' where n.id in (select unnest(rewritten))',
          )}
        end if;
        update metric_value v set hidden = n.hidden
        from metric_new_results n join metric_old_results o on o.id = n.id
        where v.result_id = n.id and n.hidden <> o.hidden and n.id not in (select unnest(rewritten));${metricRowsSql(
          'metric_new_results',
          ' join metric_benchmark m on m.benchmark_id = n.benchmark_id and not m.complete' +
            '\n        where n.id not in (select unnest(rewritten))' +
            '\n          and not exists (select 1 from metric_value v where v.result_id = n.id and v.path_id = p.id)',
        )}
        return null;
      end $$;`);
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
