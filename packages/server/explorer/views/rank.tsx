/** Rank: GET /results:compare drawn: medians with intervals, ties, n, price, value for money and its Pareto front, baseline ratios. */
import type { Reply } from '@benchmarks/sdk';
import { type Call, RESULT_FILTERS, queryOf, run, useAnswer } from '../api.ts';
import { fmt, fmtInterval, fmtP } from '../format.ts';
import { Choice, CopyAs, Downloads, Filters, MetricAndGroup, Note, OtherFilters, Pending, Table, Warnings } from '../ui.tsx';
import { groupId, groupName, useBenchmark } from './common.ts';

type Comparison = Reply<'compareResults'>;
type Group = Comparison['groups'][number];

const KEYS = [...RESULT_FILTERS, 'metric', 'group_by', 'better', 'confidence', 'min_samples', 'rank_by', 'currency', 'baseline'] as const;

/** The groups no other group of the same currency beats on both price and performance. */
function paretoFront(groups: Group[], better: 'higher' | 'lower'): Set<Group> {
  const priced = groups.filter((g) => g.price && g.median !== null);
  const sign = better === 'higher' ? 1 : -1;
  const beats = (a: Group, b: Group) =>
    a.price!.currency === b.price!.currency &&
    a.price!.per_hour <= b.price!.per_hour &&
    sign * a.median! >= sign * b.median! &&
    (a.price!.per_hour < b.price!.per_hour || a.median !== b.median);
  return new Set(priced.filter((g) => !priced.some((o) => o !== g && beats(o, g))));
}

/** Whether another group shares its rank. */
const tied = (groups: Group[], g: Group) => g.rank !== null && groups.some((o) => o !== g && o.rank === g.rank);

/** The charts' width in pixels: the text keeps its size on a phone (at most 640, at least 320). */
const width = () => Math.max(320, Math.min(640, innerWidth - 40));
const LEFT = 8;
const ROW = 40;

function RankChart({ c, metric }: { c: Comparison; metric: string }) {
  const W = width();
  const values = c.groups.flatMap((g) => [g.p5, g.p95, ...(g.median_ci ?? [])]).filter((v): v is number => v !== null);
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const x = (v: number) => LEFT + 16 + ((v - lo) / (hi - lo || 1)) * (W - LEFT - 40);
  const h = c.groups.length * ROW + 30;
  const base = c.groups.find((g) => c.baseline && groupId(g) === c.baseline);
  return (
    <figure>
      <svg viewBox={`0 0 ${W} ${h}`} role="img" aria-labelledby="rank-title">
        <title id="rank-title">
          {`Median of ${metric} per group with its ${c.confidence * 100}% interval (bar) and p5–p95 (line); ${c.better} is better. The table below holds the same numbers.`}
        </title>
        {base?.median != null && <line class="baseline" x1={x(base.median)} x2={x(base.median)} y1={0} y2={h - 24} />}
        {c.groups.map((g, i) => {
          const y = i * ROW + 18;
          return (
            <g key={groupId(g)} class={g.rank === null ? 'unranked' : ''}>
              {tied(c.groups, g) && (
                <line
                  class="tie"
                  x1={LEFT}
                  x2={LEFT}
                  y1={c.groups[i - 1]?.rank === g.rank ? y - 22 : y - 14}
                  y2={c.groups[i + 1]?.rank === g.rank ? y + 18 : y + 20}
                />
              )}
              <text x={LEFT + 16} y={y - 4} class="label">
                {`#${g.rank ?? '–'} ${groupName(g)} (n=${g.n})`}
              </text>
              {g.p5 !== null && g.p95 !== null && <line class="range" x1={x(g.p5)} x2={x(g.p95)} y1={y + 12} y2={y + 12} />}
              {g.median_ci && (
                <rect class="ci" x={x(g.median_ci[0])} width={Math.max(2, x(g.median_ci[1]) - x(g.median_ci[0]))} y={y + 6} height={12} />
              )}
              {g.median !== null && <path class="median" d={`M${x(g.median)} ${y + 3}v18`} />}
            </g>
          );
        })}
        <text x={LEFT + 16} y={h - 6} class="axis">
          {fmt(lo)}
        </text>
        <text x={W - 24} y={h - 6} class="axis" text-anchor="end">
          {fmt(hi)}
        </text>
      </svg>
      <figcaption>
        Bars: the median's {c.confidence * 100}% interval; thin lines: p5–p95; tick: the median; a bracket on the left joins tied groups;
        grey: not ranked{base ? '; dashed: the baseline’s median' : ''}. {c.better === 'higher' ? 'Higher' : 'Lower'} is better.
      </figcaption>
    </figure>
  );
}

export function Rank({ search }: { search: URLSearchParams }) {
  const query = queryOf(search, KEYS);
  const bench = useBenchmark(search.get('benchmark_id'));
  const call: Call = { operationId: 'compareResults', path: '/results:compare', query, sdk: 'results.compare', cli: 'compare' };
  const answer = useAnswer(JSON.stringify(query), (signal) => run<Comparison>(call, signal));
  const metric = search.get('metric') ?? '';
  const filters = search.getAll('filters');
  const paths = bench.state === 'done' ? bench.data.paths : [];
  const c = answer.state === 'done' ? answer.data : null;
  const front = c ? paretoFront(c.groups, c.better) : new Set<Group>();
  const currencies = [...new Set(c?.groups.flatMap((g) => (g.price ? [g.price.currency] : [])) ?? [])];
  const hasPrice = currencies.length > 0;
  const hasBaseline = !!c?.groups.some((g) => g.vs_baseline !== undefined);
  const names = new Map(c?.groups.map((g) => [groupId(g), groupName(g)]));
  const rankBy = search.get('rank_by');
  return (
    <>
      <h1 tabIndex={-1}>Rank{bench.state === 'done' ? `: ${bench.data.benchmark.name}` : ''}</h1>
      <Pending answer={bench} what="the benchmark" />
      <div class="row controls">
        <MetricAndGroup search={search} paths={paths} />
        <Choice label="Confidence" name="confidence" value={search.get('confidence') ?? '0.95'} options={['0.9', '0.95', '0.99']} />
        <Choice
          label="Baseline"
          name="baseline"
          value={search.get('baseline') ?? ''}
          options={['', ...names.keys()]}
          text={(v) => names.get(v) ?? 'none'}
        />
        {hasPrice && (
          <Choice
            label="Rank by"
            name="rank_by"
            value={rankBy ? `${rankBy} ${search.get('currency') ?? ''}`.trim() : 'metric'}
            set={(v) => ({ rank_by: v === 'metric' ? undefined : 'price', currency: v.split(' ')[1] })}
            options={['metric', ...currencies.map((cur) => `price ${cur}`)]}
            text={(v) => (v === 'metric' ? 'the metric' : `value for money (${v.split(' ')[1]})`)}
          />
        )}
      </div>
      <Filters paths={paths} filters={filters} />
      <OtherFilters search={search} />
      <CopyAs call={call} />
      <Pending answer={answer} what="the comparison" />
      {c && <Warnings warnings={c.warnings} filters={filters} />}
      {c && c.groups.length === 0 && (
        <Note
          text={`No result has a number at ${metric} (${c.matched} results match, ${c.excluded} without a number).`}
          retry={answer.retry}
        />
      )}
      {c && c.groups.length > 0 && (
        <>
          <p>
            <strong>{c.better === 'higher' ? 'Higher is better' : 'Lower is better'}.</strong> {c.matched} results match; {c.excluded} have
            no number at {metric}. Groups whose intervals overlap share a rank.
          </p>
          <RankChart c={c} metric={metric} />
          <p class="links">
            <Downloads path="/results:compare" query={query} name="compare" />
          </p>
          <Table
            label="The comparison"
            caption="The comparison, in the server's order"
            id="rank-table"
            cols={[
              'Rank',
              'Group',
              'n',
              'Median',
              `${c.confidence * 100}% interval`,
              'p5–p95',
              hasPrice && 'Price per hour',
              hasPrice && `${c.better === 'higher' ? 'Median per price' : 'Cost of a run'} [interval]`,
              hasPrice && 'Pareto front',
              hasBaseline && 'Ratio to baseline [interval]',
              hasBaseline && 'p-value',
            ]}
          >
            {c.groups.map((g) => {
              const vs = g.vs_baseline;
              return (
                <tr key={groupId(g)}>
                  <td data-field="rank">{g.rank === null ? 'not ranked' : `${g.rank}${tied(c.groups, g) ? ' (tie)' : ''}`}</td>
                  <th scope="row">{groupName(g)}</th>
                  <td data-field="n">{fmt(g.n)}</td>
                  <td data-field="median">{fmt(g.median)}</td>
                  <td data-field="median_ci">{fmtInterval(g.median_ci)}</td>
                  <td>{g.p5 === null ? '–' : `${fmt(g.p5)}–${fmt(g.p95)}`}</td>
                  {hasPrice && <td data-field="price">{g.price ? `${fmt(g.price.per_hour)} ${g.price.currency}` : '–'}</td>}
                  {hasPrice && (
                    <td data-field="per_price">{g.per_price ? `${fmt(g.per_price.median)} ${fmtInterval(g.per_price.median_ci)}` : '–'}</td>
                  )}
                  {hasPrice && <td data-field="pareto">{front.has(g) ? '◆ on the front' : g.price ? 'dominated' : '–'}</td>}
                  {hasBaseline && (
                    <td data-field="ratio">
                      {groupId(g) === c.baseline ? 'baseline' : vs?.ratio != null ? `${fmt(vs.ratio)}× ${fmtInterval(vs.ratio_ci)}` : '–'}
                    </td>
                  )}
                  {hasBaseline && <td>{fmtP(vs?.pvalue)}</td>}
                </tr>
              );
            })}
          </Table>
          {hasPrice && <ParetoChart groups={c.groups} front={front} better={c.better} />}
        </>
      )}
    </>
  );
}

/** Performance against price, one chart per currency, the front joined by a line and drawn as diamonds. */
function ParetoChart({ groups, front, better }: { groups: Group[]; front: Set<Group>; better: 'higher' | 'lower' }) {
  const priced = groups.filter((g) => g.price && g.median !== null);
  // A chart per currency with two flavors or more (the table holds a lone one).
  const currencies = [...new Set(priced.map((g) => g.price!.currency))].filter(
    (cur) => priced.filter((g) => g.price!.currency === cur).length > 1,
  );
  const W = width();
  return (
    <>
      {currencies.map((cur) => {
        const gs = priced.filter((g) => g.price!.currency === cur);
        const px = gs.map((g) => g.price!.per_hour);
        const py = gs.map((g) => g.median!);
        const sx = (v: number) => 30 + ((v - Math.min(...px)) / (Math.max(...px) - Math.min(...px) || 1)) * (W - 60);
        // Better is up: the front runs from the bottom left (cheap) to the top right (good).
        const span = Math.max(...py) - Math.min(...py);
        const up = (v: number) => (better === 'higher' ? v - Math.min(...py) : Math.max(...py) - v);
        const sy = (v: number) => (span ? 190 - (up(v) / span) * 140 : 110);
        const points = gs.map((g) => ({ g, x: sx(g.price!.per_hour), y: sy(g.median!), left: sx(g.price!.per_hour) > W / 2 }));
        const line = points.filter((p) => front.has(p.g)).sort((a, b) => a.x - b.x);
        return (
          <figure key={cur}>
            <svg
              viewBox={`0 0 ${W} 230`}
              role="img"
              aria-label={`Median against price per hour in ${cur}; diamonds on the line are the Pareto front (${better} is better); the table above holds the same numbers.`}
            >
              <polyline class="front" points={line.map((p) => `${p.x},${p.y}`).join(' ')} />
              {points.map(({ g, x, y }) =>
                front.has(g) ? (
                  <path key={groupId(g)} class="dot on" d={`M${x} ${y - 6}l6 6l-6 6l-6-6z`} />
                ) : (
                  <circle key={groupId(g)} class="dot" cx={x} cy={y} r={4} />
                ),
              )}
              {points.map(({ g, x, y, left }) => (
                <text key={`t${groupId(g)}`} class="axis" x={x + (left ? -8 : 8)} y={y - 8} text-anchor={left ? 'end' : 'start'}>
                  {g.flavor?.name ?? g.site.name}
                </text>
              ))}
              <text class="axis" x={30} y={222}>{`price per hour (${cur}) →`}</text>
              <text class="axis" x={4} y={14}>{`median, better ↑ (${better} is better)`}</text>
            </svg>
            <figcaption>
              Performance against price in {cur}: ◆ on the Pareto front (no flavor is both cheaper and better), ● dominated.
            </figcaption>
          </figure>
        );
      })}
    </>
  );
}
