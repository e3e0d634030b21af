/** The approved benchmarks: description, results, flavors, last upload; search by terms. */
import { useState } from 'preact/hooks';
import { type Call, href, navigate, queryOf, run, useAnswer, withParams } from '../api.ts';
import { fmt, fmtTime } from '../format.ts';
import { defaultMetric, schemaPaths } from '../schema.ts';
import { CopyAs, Note, Link, Pending } from '../ui.tsx';
import { type Benchmark, groupName } from './common.ts';

type Page<T> = { items: T[]; total: number };
type Facts = { total: number | null; last: string | null; flavors: string[] | null; metric: string | undefined };

/** Per benchmark: its count and last upload (one result, newest first), its flavors (groups of its default metric's comparison). */
async function factsOf(b: Benchmark, signal: AbortSignal): Promise<Facts> {
  const metric = defaultMetric(schemaPaths(b.json_schema));
  const query = { benchmark_id: b.id, per_page: '1', sort_by: '-upload_datetime' };
  const [latest, compared] = await Promise.all([
    run<Page<{ upload_datetime: string }>>({ operationId: 'listResults', path: '/results', query, sdk: '', cli: '' }, signal),
    metric
      ? run<{ groups: { site: { name: string; id: string }; flavor: { name: string; id: string } }[] }>(
          { operationId: 'compareResults', path: '/results:compare', query: { benchmark_id: b.id, metric }, sdk: '', cli: '' },
          signal,
        )
      : null,
  ]);
  return { total: latest.total, last: latest.items[0]?.upload_datetime ?? null, flavors: compared?.groups.map(groupName) ?? null, metric };
}

export function Benchmarks({ search }: { search: URLSearchParams }) {
  const query = queryOf(search, ['terms']);
  const terms = [query.terms ?? []].flat();
  const call: Call = terms.length
    ? { operationId: 'searchBenchmarks', path: '/benchmarks:search', query, sdk: 'benchmarks.search', cli: 'benchmarks search' }
    : { operationId: 'listBenchmarks', path: '/benchmarks', sdk: 'benchmarks.list', cli: 'benchmarks list' };
  const answer = useAnswer(JSON.stringify(query), async (signal) => {
    const page = await run<Page<Benchmark>>(call, signal);
    // A benchmark whose facts fail (a busy server) is still listed, without them.
    const unknown = (b: Benchmark): Facts => ({
      total: null,
      last: null,
      flavors: null,
      metric: defaultMetric(schemaPaths(b.json_schema)),
    });
    return { page, facts: await Promise.all(page.items.map((b) => factsOf(b, signal).catch(() => unknown(b)))) };
  });
  const [text, setText] = useState(terms.join(' '));
  const submit = (e: Event) => {
    e.preventDefault();
    navigate(withParams({ terms: text.split(/\s+/).filter(Boolean) }));
  };
  return (
    <>
      <h1 tabIndex={-1}>Benchmarks</h1>
      <p>Choose a benchmark to rank its flavors, follow a metric over time, or list its results.</p>
      <form onSubmit={submit} class="row" aria-label="Search the benchmarks">
        <label>
          Search terms
          <input type="search" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <button type="submit">Search</button>
      </form>
      <CopyAs call={call} />
      <Pending answer={answer} what="the benchmarks" />
      {answer.state === 'done' &&
        (answer.data.page.items.length === 0 ? (
          <Note text={terms.length ? 'No approved benchmark matches these terms.' : 'No approved benchmark yet.'} retry={answer.retry} />
        ) : (
          <ul class="cards">
            {answer.data.page.items.map((b, i) => {
              const f = answer.data.facts[i]!;
              const q = { benchmark_id: b.id, ...(f.metric ? { metric: f.metric } : {}) };
              return (
                <li key={b.id} class="card">
                  <h2>{b.name}</h2>
                  {b.description && <p>{b.description}</p>}
                  <dl class="facts">
                    <dt>Results</dt>
                    <dd data-field="total">{fmt(f.total)}</dd>
                    <dt>Last upload</dt>
                    <dd>{fmtTime(f.last)}</dd>
                    <dt>Flavors</dt>
                    <dd>
                      {f.flavors
                        ? f.flavors.join(', ') || 'none with a number'
                        : f.metric
                          ? 'unknown (no answer)'
                          : 'no numeric metric in its schema'}
                    </dd>
                  </dl>
                  <p class="links">
                    {f.metric && <Link href={href('/rank', q)}>Rank</Link>}
                    {f.metric && <Link href={href('/series', q)}>Series</Link>}
                    <Link href={href('/results', { benchmark_id: b.id })}>Results</Link>
                  </p>
                </li>
              );
            })}
          </ul>
        ))}
    </>
  );
}
