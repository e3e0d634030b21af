/**
 * The insert of the metric values rows of the results `from` (with `where`): one per path of their
 * benchmark, the key columns computed once per result (the fenced subquery). One text for the
 * triggers of migrations 20261201000000 (4 slots) and 20261202003000 (8) and the background pass,
 * so a row is the same whoever writes it; a module of its own, loaded without the migrations.
 */
/** Paths of a benchmark whose numbers every row of its results carries (`k1` … `k8`). */
export const KEY_SLOTS = 8;

export const metricRowsSql = (from: string, where = '', slots = KEY_SLOTS) => {
  const ks = Array.from({ length: slots }, (_, i) => `k${i + 1}`);
  const list = (prefix: string) => ks.map((k) => `${prefix}${k}`).join(', ');
  const keys = ks
    .map((k, i) => `max(metric_number(n.json, q.path)) filter (where q.slot = ${i + 1}) as ${k}`)
    .join(',\n                                         ');
  return `
        insert into metric_value (result_id, flavor_id, site_id, execution_datetime, path_id, hidden, value, ${list('')})
        select n.id, n.flavor_id, n.site_id, n.execution_datetime, p.id, n.hidden, metric_number(n.json, p.path), ${list('n.')}
        from (select n.*, ${list('k.')} from ${from} n
              cross join lateral (select ${keys}
                                  from metric_path q where q.benchmark_id = n.benchmark_id and q.slot is not null) k offset 0) n
        join metric_path p on p.benchmark_id = n.benchmark_id${where};`;
};
