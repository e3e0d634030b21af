/**
 * The insert of the metric values rows of the results `from` (with `where`): one per path of their
 * benchmark, with the key columns computed once per result (the fenced subquery, not once per row).
 * One text for migration 20261201000000's triggers and the background pass
 * (services/results/metric-values.ts), so a row is the same whoever writes it; a module of its own,
 * so the server loads it without the migrations.
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
