/** One result: every field, its tags, its JSON document, links to the views of its benchmark and flavor. */
import { type Call, href, run, useAnswer } from '../api.ts';
import { fmtTime } from '../format.ts';
import { defaultMetric } from '../schema.ts';
import { CopyAs, Link, Note, Pending } from '../ui.tsx';
import { useBenchmark } from './common.ts';
import type { Result } from './results.tsx';

export function ResultPage({ id }: { id: string }) {
  const call: Call = { operationId: 'getResult', path: '/results/{id}', params: { id }, sdk: 'results.get', cli: 'results get' };
  const answer = useAnswer(id, (signal) => run<Result>(call, signal));
  const r = answer.state === 'done' && !answer.data.hidden ? answer.data : null;
  const bench = useBenchmark(r?.benchmark.id ?? null);
  const metric = bench.state === 'done' ? defaultMetric(bench.data.paths) : undefined;
  const q = r ? { benchmark_id: r.benchmark.id, ...(metric ? { metric } : {}) } : {};
  return (
    <>
      <h1 tabIndex={-1}>Result {id}</h1>
      <CopyAs call={call} />
      <Pending answer={answer} what="the result" />
      {answer.state === 'done' && answer.data.hidden && (
        <Note text="This result is hidden (deleted or under a claim): the explorer does not show it." />
      )}
      {r && (
        <>
          <dl class="facts">
            <dt>Benchmark</dt>
            <dd>
              <Link href={href('/results', { benchmark_id: r.benchmark.id })}>{r.benchmark.name}</Link>
            </dd>
            <dt>Site</dt>
            <dd>{r.site.name}</dd>
            <dt>Flavor</dt>
            <dd>{r.flavor.name}</dd>
            <dt>Executed</dt>
            <dd>{fmtTime(r.execution_datetime)}</dd>
            <dt>Uploaded</dt>
            <dd>{fmtTime(r.upload_datetime)}</dd>
            <dt>Tags</dt>
            <dd>
              {r.tags.length ? (
                <ul class="chips">
                  {r.tags.map((t) => (
                    <li key={t.id}>{t.name}</li>
                  ))}
                </ul>
              ) : (
                'none'
              )}
            </dd>
          </dl>
          <p class="links">
            {metric && <Link href={href('/rank', q)}>Rank of its benchmark</Link>}
            {metric && <Link href={href('/series', { ...q, flavor_id: r.flavor.id })}>Series of its flavor</Link>}
            <Link href={href('/results', { benchmark_id: r.benchmark.id, flavor_id: r.flavor.id })}>Results of its flavor</Link>
          </p>
          <h2>JSON document</h2>
          <pre class="json">{JSON.stringify(r.json, null, 2)}</pre>
        </>
      )}
    </>
  );
}
