import { Migration } from '@mikro-orm/migrations';

/**
 * A narrow table of the numbers results hold at the numeric paths their benchmark's JSON Schema
 * describes (services/metric-values.ts; docs/decisions.md, "Metric values"), so that a comparison
 * reads an index instead of one heap page per result:
 *
 * - `metric_path`: each benchmark's chosen paths (at most MAX_METRIC_PATHS), with a small id; the
 *   empty path `{}` is the result itself, whose row (value null) every result gets, so that the
 *   results a comparison matched are counted from this table too.
 * - `metric_value`: one row per (result, path) where the result holds a JSON number there (or the
 *   path is `{}`), with the value exactly as stored (numeric: jsonb numbers are numerics, so no
 *   value fails the cast or is rounded), and copies of what a comparison filters and groups by.
 *   The `hidden` copy keeps it hidden and deleted with its result.
 * - `metric_benchmark`: per benchmark, the schema digest its paths were chosen from and whether
 *   its values are complete; only then does a comparison read the table.
 * - `metric_backfill`: the one pass that fills in the values of results stored before their
 *   benchmark's paths were chosen, walked by heap block ranges (resumable, in bounded batches).
 *
 * Written by triggers on `result`, in the writing transaction, so every insert path (single and
 * batch uploads, import-origin, SQL consoles) keeps the table right. Updates and deletes take a
 * shared transaction-level advisory lock that each backfill batch takes exclusively: a batch never
 * reads a result whose change is in flight. The table is filled in the background after start,
 * not here: a migration is one transaction (db/orm.ts).
 */
export class Migration20261126000000_metric_values extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table metric_path (
        id integer generated always as identity primary key,
        benchmark_id uuid not null references benchmark (id) on delete cascade,
        path text[] not null,
        constraint metric_path_unique unique (benchmark_id, path)
      );`);
    this.addSql(`
      create table metric_benchmark (
        benchmark_id uuid primary key references benchmark (id) on delete cascade,
        digest text not null,
        complete boolean not null default false
      );`);
    this.addSql(`
      create table metric_backfill (
        singleton boolean primary key default true check (singleton),
        benchmarks uuid[] not null default '{}',
        next_block bigint not null default 0,
        end_block bigint not null default 0
      );`);
    this.addSql('insert into metric_backfill default values;');
    // No foreign keys: the triggers below keep the rows in step with their result, and a foreign
    // key would cost a lookup per row written (up to 33 per result).
    this.addSql(`
      create table metric_value (
        path_id integer not null,
        result_id uuid not null,
        flavor_id uuid not null,
        site_id uuid not null,
        execution_datetime timestamptz not null,
        value numeric null,
        hidden boolean not null,
        primary key (result_id, path_id)
      );`);
    // A comparison by flavor reads (path, flavor, value) in order; by site, the same rows sorted.
    // Filters by site and execution time are answered from the included columns: index-only.
    this.addSql(
      'create index metric_value_compare_idx on metric_value (path_id, flavor_id, value) include (site_id, execution_datetime) where not hidden;',
    );
    // Whether a benchmark has hidden results, without reading the table (new results are seldom hidden).
    this.addSql('create index result_hidden_benchmark_idx on result (benchmark_id) where hidden;');
    const rows = (from: string) => `
        insert into metric_value (path_id, result_id, flavor_id, site_id, execution_datetime, value, hidden)
        select p.id, n.id, n.flavor_id, n.site_id, n.execution_datetime,
               case when jsonb_typeof(n.json #> p.path) = 'number' then (n.json #> p.path)::numeric end, n.hidden
        from ${from} n join metric_path p on p.benchmark_id = n.benchmark_id
        where cardinality(p.path) = 0 or jsonb_typeof(n.json #> p.path) = 'number';`;
    // The shared lock of metric_value changes (services/metric-values.ts, CHANGE_LOCK).
    const lock = 'perform pg_advisory_xact_lock_shared(1650814563, 2);';
    this.addSql(`
      create function metric_values_insert() returns trigger language plpgsql as $$
      begin${rows('metric_new_results')}
        return null;
      end $$;`);
    this.addSql(`
      create function metric_values_update() returns trigger language plpgsql as $$
      begin
        ${lock}
        delete from metric_value v using metric_old_results o where v.result_id = o.id;${rows('metric_new_results')}
        return null;
      end $$;`);
    this.addSql(`
      create function metric_values_delete() returns trigger language plpgsql as $$
      begin
        ${lock}
        delete from metric_value v using metric_old_results o where v.result_id = o.id;
        return null;
      end $$;`);
    this.addSql(`
      create function metric_values_truncate() returns trigger language plpgsql as $$
      begin
        truncate metric_value;
        return null;
      end $$;`);
    this.addSql(
      'create trigger result_metric_values_insert after insert on result referencing new table as metric_new_results ' +
        'for each statement execute function metric_values_insert();',
    );
    this.addSql(
      'create trigger result_metric_values_update after update on result ' +
        'referencing old table as metric_old_results new table as metric_new_results ' +
        'for each statement execute function metric_values_update();',
    );
    this.addSql(
      'create trigger result_metric_values_delete after delete on result referencing old table as metric_old_results ' +
        'for each statement execute function metric_values_delete();',
    );
    this.addSql(
      'create trigger result_metric_values_truncate after truncate on result for each statement execute function metric_values_truncate();',
    );
  }

  override async down(): Promise<void> {
    for (const what of ['insert', 'update', 'delete', 'truncate']) {
      this.addSql(`drop trigger if exists result_metric_values_${what} on result;`);
      this.addSql(`drop function if exists metric_values_${what}();`);
    }
    this.addSql('drop index if exists result_hidden_benchmark_idx;');
    this.addSql('drop table if exists metric_value, metric_backfill, metric_benchmark, metric_path;');
  }
}
