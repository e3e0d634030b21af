import { Migration } from '@mikro-orm/migrations';

/**
 * A narrow table of the numbers results hold at the numeric paths their benchmark's JSON Schema
 * describes (services/metrics/metric-values.ts; docs/decisions.md, "Metric values"), so that a comparison
 * reads an index instead of one heap page per result:
 *
 * - `metric_path`: each benchmark's chosen paths (at most MAX_METRIC_PATHS), with a small id.
 * - `metric_value`: one row per (result, path), with the value exactly as stored when the result
 *   holds a JSON number there (numeric: jsonb numbers are numerics, so no value fails the cast or
 *   is rounded), null otherwise, so that the rows of one path are every result of the benchmark
 *   (a comparison counts the results it matched from them); and copies of what a comparison
 *   filters and groups by. The `hidden` copy keeps it hidden and deleted with its result.
 * - `metric_benchmark`: per benchmark, the schema digest its paths were chosen from, whether its
 *   values are complete (only then does a comparison read the table), and the transaction ids
 *   that may have written results without its current paths (`paths_xmax`: those below it).
 * - `metric_backfill`: the one pass that fills in the values of results stored before their
 *   benchmark's paths were chosen, walked by heap block ranges (resumable, in bounded batches).
 *
 * Two indexes, each for named queries: `(path_id, value) include (flavor_id, site_id,
 * execution_datetime) where not hidden` (a sort is a walk of it, a numeric filter a range of it, a
 * comparison an index-only scan of one path), and `(result_id)` (an update, a claim or a deletion
 * finds the result's rows; not unique, so B-tree deduplication keeps one key per result).
 *
 * Written by statement-level triggers on `result`, in the writing transaction, so every insert path
 * (single and batch uploads, import-origin, SQL consoles) keeps the table right. Updates and deletes
 * take a shared transaction-level advisory lock that each backfill batch takes exclusively: a batch
 * never reads a result whose change is in flight. The table is filled in the background after
 * start, not here: a migration is one transaction (db/orm.ts).
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
        complete boolean not null default false,
        paths_xmax xid8 null
      );`);
    this.addSql(`
      create table metric_backfill (
        singleton boolean primary key default true check (singleton),
        benchmarks uuid[] not null default '{}',
        next_block bigint not null default 0,
        end_block bigint not null default 0
      );`);
    this.addSql('insert into metric_backfill default values;');
    // No foreign keys and no primary key: the triggers below keep the rows in step with their
    // result, and a key would cost a lookup per row written (up to 32 per result). Columns in
    // alignment order (no padding). Rows are only inserted and deleted, updated only when their
    // result is hidden or shown (never HOT: `hidden` is in an index's predicate), so the pages are
    // filled (fillfactor 100). Autovacuum runs after every 20,000 rows inserted (about 2,500
    // results), not after a fifth of the table: the visibility map, which index-only scans need,
    // stays set for all but the latest rows.
    this.addSql(`
      create table metric_value (
        result_id uuid not null,
        flavor_id uuid not null,
        site_id uuid not null,
        execution_datetime timestamptz not null,
        path_id integer not null,
        hidden boolean not null,
        value numeric null
      ) with (fillfactor = 100, autovacuum_vacuum_insert_threshold = 20000, autovacuum_vacuum_insert_scale_factor = 0,
              autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_threshold = 20000,
              autovacuum_analyze_scale_factor = 0.02);`);
    // Sort walk and numeric filter (GET /results), index-only scan of one path (compare); hidden
    // results are in no default list or comparison.
    this.addSql(
      'create index metric_value_path_idx on metric_value (path_id, value) include (flavor_id, site_id, execution_datetime) where not hidden;',
    );
    // A result's rows: its update, claim, deletion.
    this.addSql('create index metric_value_result_idx on metric_value (result_id);');
    // Whether a benchmark has hidden results, without reading the table (new results are seldom hidden).
    this.addSql('create index result_hidden_benchmark_idx on result (benchmark_id) where hidden;');
    const rows = (from: string, where = '') => `
        insert into metric_value (result_id, flavor_id, site_id, execution_datetime, path_id, hidden, value)
        select n.id, n.flavor_id, n.site_id, n.execution_datetime, p.id, n.hidden,
               case when jsonb_typeof(n.json #> p.path) = 'number' then (n.json #> p.path)::numeric end
        from ${from} n join metric_path p on p.benchmark_id = n.benchmark_id${where};`;
    // The shared lock of metric_value changes (services/metrics/metric-values.ts, CHANGE_LOCK).
    const lock = 'perform pg_advisory_xact_lock_shared(1650814563, 2);';
    this.addSql(`
      create function metric_values_insert() returns trigger language plpgsql as $$
      begin${rows('metric_new_results')}
        return null;
      end $$;`);
    // An update writes the rows again only when what they hold changed (the document, the
    // benchmark, the flavor, the site, the execution time); a claim or a deletion changes `hidden`
    // only, and only those rows are updated; any other change (e.g. `deleted` alone) none.
    this.addSql(`
      create function metric_values_update() returns trigger language plpgsql as $$
      declare
        rewritten uuid[];
      begin
        ${lock}
        select coalesce(array_agg(n.id), '{}') into rewritten
        from metric_new_results n left join metric_old_results o on o.id = n.id
        where o.id is null or n.json is distinct from o.json or n.benchmark_id is distinct from o.benchmark_id
          or n.flavor_id is distinct from o.flavor_id or n.site_id is distinct from o.site_id
          or n.execution_datetime is distinct from o.execution_datetime;
        if cardinality(rewritten) > 0 or exists (select 1 from metric_old_results o where o.id not in (select id from metric_new_results)) then
          delete from metric_value v using metric_old_results o
          where v.result_id = o.id and (o.id in (select unnest(rewritten)) or o.id not in (select id from metric_new_results));${rows(
            'metric_new_results',
            ' where n.id in (select unnest(rewritten))',
          )}
        end if;
        update metric_value v set hidden = n.hidden
        from metric_new_results n join metric_old_results o on o.id = n.id
        where v.result_id = n.id and n.hidden <> o.hidden and n.id not in (select unnest(rewritten));
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
