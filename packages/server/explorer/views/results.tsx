/** Results: GET /results with filters built from the schema, chosen JSON columns, sort by a column, more rows by the cursor. */
import type { Reply } from '@benchmarks/sdk';
import { useEffect, useState } from 'preact/hooks';
import { type Call, RESULT_FILTERS, apiUrl, navigate, queryOf, run, useAnswer, withParams } from '../api.ts';
import { fmt, fmtTime } from '../format.ts';
import { CopyAs, Note, Filters, Link, OtherFilters, Pending, Scroll, Warnings } from '../ui.tsx';
import { useBenchmark } from './common.ts';

type Page = Reply<'listResults'>;
export type Result = Page['items'][number];

/** A value inside a result's JSON, as text (objects as JSON). */
function valueAt(json: unknown, path: string): string {
  let v: unknown = json;
  for (const key of path.replace(/^json\./, '').split('.'))
    v = v && typeof v === 'object' ? (v as Record<string, unknown>)[key] : undefined;
  return v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
}

const FIXED = [
  ['execution_datetime', 'Executed'],
  ['site_name', 'Site'],
  ['flavor_name', 'Flavor'],
] as const;

export function Results({ search }: { search: URLSearchParams }) {
  const query = queryOf(search, [...RESULT_FILTERS, 'sort_by', 'per_page']);
  const bench = useBenchmark(search.get('benchmark_id'));
  const paths = bench.state === 'done' ? bench.data.paths : [];
  const chosen = search.has('columns') ? search.getAll('columns') : paths.filter((p) => p.suggested).map((p) => p.path);
  const call: Call = { operationId: 'listResults', path: '/results', query, sdk: 'results.list', cli: 'results list' };
  const answer = useAnswer(JSON.stringify(query), (signal) => run<Page>(call, signal));
  const [more, setMore] = useState<{ rows: Result[]; cursor: string | null; failed?: string }>({ rows: [], cursor: null });
  useEffect(() => setMore({ rows: [], cursor: null }), [JSON.stringify(query)]);
  const page = answer.state === 'done' ? answer.data : null;
  const cursor = more.rows.length ? more.cursor : page?.next_cursor;
  const loadMore = () =>
    run<Page>({ ...call, query: { ...query, cursor: cursor! } }, new AbortController().signal).then(
      (p) => setMore({ rows: [...more.rows, ...p.items], cursor: p.next_cursor }),
      (err: Error) => setMore({ ...more, failed: err.message }),
    );
  const sort = search.get('sort_by') ?? '';
  const toggle = (path: string) =>
    navigate(withParams({ columns: chosen.includes(path) ? chosen.filter((c) => c !== path) : [...chosen, path] }));
  const filters = search.getAll('filters');
  const exportQuery = { ...queryOf(search, RESULT_FILTERS), format: 'csv', columns: ['id', ...FIXED.map(([f]) => f), 'tags', ...chosen] };
  const rows = [...(page?.items ?? []), ...more.rows];
  /** A header that sorts by its column: ascending first, then descending. */
  const header = (field: string, text: string) => {
    const order = sort === `+${field}` ? 'ascending' : sort === `-${field}` ? 'descending' : undefined;
    const sortBy = () => navigate(withParams({ sort_by: order === 'ascending' ? `-${field}` : `+${field}` }));
    return (
      <th scope="col" aria-sort={order}>
        <button type="button" class="sort" onClick={sortBy}>
          {text} {order === 'ascending' ? '▲' : order === 'descending' ? '▼' : ''}
        </button>
      </th>
    );
  };
  return (
    <>
      <h1 tabIndex={-1}>Results{bench.state === 'done' ? `: ${bench.data.benchmark.name}` : ''}</h1>
      {search.has('benchmark_id') && <Pending answer={bench} what="the benchmark" />}
      <Filters paths={paths} filters={filters} />
      <OtherFilters search={search} />
      {paths.length > 0 && (
        <details class="columns">
          <summary>Columns ({chosen.length} JSON paths)</summary>
          {paths.map((p) => (
            <label key={p.path} class="check">
              <input type="checkbox" checked={chosen.includes(p.path)} onChange={() => toggle(p.path)} /> {p.path}
            </label>
          ))}
        </details>
      )}
      <CopyAs call={call} />
      <p class="links">
        <a href={apiUrl('/results:export', exportQuery)} download="results.csv">
          Export this query as CSV
        </a>
      </p>
      <Pending answer={answer} what="the results" />
      {page && <Warnings warnings={page.warnings} filters={filters} />}
      {page && page.total === 0 && <Note text="No result matches this query." retry={answer.retry} />}
      {page && page.total > 0 && (
        <>
          <p role="status">
            Showing {fmt(rows.length)} of {fmt(page.total)} results.
          </p>
          <Scroll label="Results">
            <table id="results-table">
              <caption>Results</caption>
              <thead>
                <tr>
                  <th scope="col">Result</th>
                  {FIXED.map(([f, text]) => header(f, text))}
                  <th scope="col">Tags</th>
                  {chosen.map((c) => header(c, c.replace(/^json\./, '')))}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id}>
                    <td>
                      <Link href={`/explore/results/${r.id}`}>{r.id.slice(0, 8)}</Link>
                    </td>
                    <td>{fmtTime(r.execution_datetime)}</td>
                    <td>{r.site.name}</td>
                    <td>{r.flavor.name}</td>
                    <td>{r.tags.map((t) => t.name).join(', ')}</td>
                    {chosen.map((c) => (
                      <td key={c} data-path={c}>
                        {valueAt(r.json, c)}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </Scroll>
          {cursor && (
            <button type="button" onClick={() => void loadMore()}>
              Show more results
            </button>
          )}
          {more.failed && <Note alert text={`Could not load more results: ${more.failed}`} retry={() => void loadMore()} />}
        </>
      )}
    </>
  );
}
