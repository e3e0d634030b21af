/** Series: the groups of GET /results:changes over time: points (from the export), segment means, change points. */
import type { Reply } from '@benchmarks/sdk';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import { type Call, RESULT_FILTERS, type Query, client, navigate, queryOf, run, useAnswer } from '../api.ts';
import { fmt, fmtP, fmtTime } from '../format.ts';
import { Choice, CopyAs, Downloads, Filters, Link, MetricAndGroup, Note, OtherFilters, Pending, Table, Warnings } from '../ui.tsx';
import { groupId, groupName, useBenchmark } from './common.ts';

type Changes = Reply<'findChanges'>;
type Group = Changes['groups'][number];

const KEYS = [...RESULT_FILTERS, 'metric', 'group_by', 'better', 'max_pvalue', 'min_magnitude', 'min_size', 'changed_after'] as const;
const time = (t: string) => Date.parse(`${t}Z`) / 1000;
/** A point's time as the tables write it. */
const timeOf = (x: number) => fmtTime(new Date(x * 1000).toISOString());
type Points = { ids: string[]; x: number[]; y: number[] };

/** A group's points: the export of its results (`filters`, the result filters of the view) as CSV, three columns. */
async function pointsOf(filters: Query, metric: string, g: Group, bySite: boolean, signal: AbortSignal): Promise<Points> {
  const columns = ['id', 'execution_datetime', metric];
  const csv = client.results.exportCsv({ ...filters, [bySite ? 'site_id' : 'flavor_id']: groupId(g), columns } as never, { signal });
  const out: Points = { ids: [], x: [], y: [] };
  // Read as it arrives, a chunk at a time, yielding: no long task even for 100,000 rows.
  const reader = csv.getReader();
  const decoder = new TextDecoder();
  let rest = '';
  let header = true;
  let since = performance.now();
  for (;;) {
    const { done, value } = await reader.read();
    // Reads that are already buffered resolve as microtasks, which never let the page draw: yield.
    if (performance.now() - since > 25) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      since = performance.now();
    }
    const lines = (rest + decoder.decode(value, { stream: !done })).split('\n');
    rest = done ? '' : lines.pop()!;
    for (const line of lines) {
      const [id, at, cell] = line.split(',');
      const v = cell ? Number(cell) : Number.NaN;
      if (!header && id && at && Number.isFinite(v)) {
        out.ids.push(id);
        out.x.push(time(at));
        out.y.push(v);
      }
      header = false;
    }
    if (done) return out;
  }
}

/**
 * Dense series drawn as the SDK's SVG draws them (changes-chart.ts): per pixel column one stroke from
 * its lowest to its highest point, so that 100,000 points cost a few thousand strokes, not arcs.
 */
const columns: uPlot.Series.PathBuilder = (u, si, i0, i1) => {
  const xs = u.data[0];
  const ys = u.data[si]!;
  const path = new Path2D();
  let col = Number.NaN;
  let lo = 0;
  let hi = 0;
  const flush = () => {
    if (Number.isNaN(col)) return;
    path.moveTo(col, lo);
    path.lineTo(col, hi);
  };
  for (let i = i0; i <= i1; i++) {
    const x = Math.round(u.valToPos(xs[i]!, 'x', true));
    const y = u.valToPos(ys[i]!, 'y', true);
    if (x !== col) {
      flush();
      col = x;
      lo = hi = y;
    } else {
      lo = Math.min(lo, y);
      hi = Math.max(hi, y);
    }
  }
  flush();
  return { stroke: path };
};
const DENSE = 2000;

const css = (name: string) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** One group's chart (uPlot, canvas): points, the segments' means as steps, change points as triangles on dashed lines. */
function SeriesChart({ g, points, log, label }: { g: Group; points: Points; log: boolean; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const [at, setAt] = useState<number | null>(null);
  useEffect(() => {
    const el = box.current!;
    // Each segment's mean at its first and last point only: a line of a few strokes, however long the series.
    const means: (number | null)[] = new Array(points.x.length).fill(null);
    let first = 0;
    for (const s of g.segments) {
      means[first] = means[Math.min(points.x.length, first + s.n) - 1] = s.mean;
      first += s.n;
    }
    const [fg, grid, point, mean, worse, better] = ['--fg', '--grid', '--point', '--mean', '--worse', '--better'].map(css);
    const axis = { stroke: fg, grid: { stroke: grid } };
    const drawChanges = (u: uPlot) => {
      const { ctx, bbox } = u;
      const top = bbox.top;
      ctx.save();
      ctx.setLineDash([5, 4]);
      ctx.lineWidth = 2;
      for (const c of g.changes) {
        const x = u.valToPos(points.x[c.index] ?? time(c.at), 'x', true);
        ctx.strokeStyle = ctx.fillStyle = c.direction === 'regression' ? worse! : better!;
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, top + bbox.height);
        ctx.stroke();
        ctx.beginPath();
        const s = 8 * devicePixelRatio;
        // Regression: a triangle pointing down; improvement: up (shape, not only colour).
        const [base, tip] = c.direction === 'regression' ? [top, top + s * 1.5] : [top + s * 1.5, top];
        ctx.moveTo(x - s, base);
        ctx.lineTo(x + s, base);
        ctx.lineTo(x, tip);
        ctx.fill();
      }
      ctx.restore();
    };
    const u = new uPlot(
      {
        width: el.clientWidth,
        height: 260,
        scales: { x: { time: true }, y: { distr: log ? 3 : 1 } },
        // The API's times are UTC, and so are the tables'.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        legend: { show: false },
        cursor: { points: { size: 9 }, drag: { x: false, y: false } },
        axes: [axis, { ...axis, size: 60 }],
        series: [
          {},
          points.x.length > DENSE
            ? { label, stroke: point, width: 3, cap: 'round', paths: columns, points: { show: false } }
            : { label, stroke: point, paths: () => null, points: { show: true, size: 5, fill: point, stroke: point } },
          {
            label: 'segment mean',
            stroke: mean,
            width: 2,
            paths: uPlot.paths.stepped!({ align: 1 }),
            spanGaps: true,
            points: { show: false },
          },
        ],
        hooks: { draw: [drawChanges], setCursor: [(u) => setAt(u.cursor.idx ?? null)] },
      },
      [points.x, points.y, means],
      el,
    );
    plot.current = u;
    const open = () => u.cursor.idx != null && navigate(`/explore/results/${points.ids[u.cursor.idx]}`);
    u.over.addEventListener('click', open);
    const resize = new ResizeObserver(() => u.setSize({ width: el.clientWidth, height: 260 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      u.destroy();
    };
  }, [points, log]);
  const key = (e: KeyboardEvent) => {
    const u = plot.current;
    if (!u || !points.x.length) return;
    const step = e.shiftKey ? Math.ceil(points.x.length / 10) : 1;
    const move = { ArrowLeft: -step, ArrowRight: step, Home: -Infinity, End: Infinity }[e.key];
    if (e.key === 'Enter' && at !== null) navigate(`/explore/results/${points.ids[at]}`);
    if (move === undefined) return;
    e.preventDefault();
    const i = Math.max(0, Math.min(points.x.length - 1, (at ?? -1) + move));
    u.setCursor({ left: u.valToPos(points.x[i]!, 'x'), top: u.valToPos(points.y[i]!, 'y') });
  };
  return (
    <div>
      <div
        ref={box}
        class="chart"
        tabIndex={0}
        role="slider"
        aria-valuemin={0}
        aria-valuemax={Math.max(0, points.x.length - 1)}
        aria-valuenow={at ?? 0}
        aria-valuetext={at === null ? 'no point chosen' : `${timeOf(points.x[at]!)}: ${fmt(points.y[at])}`}
        aria-label={`${label} over time, ${points.x.length} points: the arrow keys move between points, Enter opens one; the tables below hold the segments and changes`}
        onKeyDown={key}
      />
      <p class="note pointer">
        {at === null ? (
          'Point at a point (or focus the chart and use the arrow keys) to see its result; click to open it.'
        ) : (
          <>
            {timeOf(points.x[at]!)}: {fmt(points.y[at])} — <Link href={`/explore/results/${points.ids[at]}`}>result {points.ids[at]}</Link>
          </>
        )}
      </p>
    </div>
  );
}

/** A group's chart once its points have come (each group's export on its own: the tables do not wait). */
function GroupChart({ filters, metric, g, bySite, log }: { filters: Query; metric: string; g: Group; bySite: boolean; log: boolean }) {
  const points = useAnswer(JSON.stringify([filters, metric, bySite, groupId(g)]), (signal) => pointsOf(filters, metric, g, bySite, signal));
  if (points.state !== 'done') return <Pending answer={points} what={`the points of ${groupName(g)}`} />;
  return <SeriesChart g={g} points={points.data} log={log} label={metric} />;
}

export function Series({ search }: { search: URLSearchParams }) {
  const query = queryOf(search, KEYS);
  const bench = useBenchmark(search.get('benchmark_id'));
  const call: Call = { operationId: 'findChanges', path: '/results:changes', query, sdk: 'results.changes', cli: 'changes' };
  const answer = useAnswer(JSON.stringify(query), (signal) => run<Changes>(call, signal));
  const metric = search.get('metric') ?? '';
  const filters = search.getAll('filters');
  const paths = bench.state === 'done' ? bench.data.paths : [];
  const d = answer.state === 'done' ? answer.data : null;
  return (
    <>
      <h1 tabIndex={-1}>Series{bench.state === 'done' ? `: ${bench.data.benchmark.name}` : ''}</h1>
      <Pending answer={bench} what="the benchmark" />
      <div class="row controls">
        <MetricAndGroup search={search} paths={paths} />
        <Choice
          label="Scale"
          name="scale"
          value={search.get('scale') ?? ''}
          options={['', 'log']}
          text={(v) => (v ? 'logarithmic' : 'linear')}
        />
      </div>
      <Filters paths={paths} filters={filters} />
      <OtherFilters search={search} more={['changed_after']} />
      <CopyAs call={call} />
      <Pending answer={answer} what="the series" />
      {d && <Warnings warnings={d.warnings} filters={filters} />}
      {d && d.groups.length === 0 && (
        <Note text={`No result has a number at ${metric} (${d.matched} results match).`} retry={answer.retry} />
      )}
      {d && d.groups.length > 0 && (
        <p>
          {d.better === 'higher' ? 'Higher' : 'Lower'} is better: a change toward the worse side is a regression (▼), toward the better an
          improvement (▲). <Downloads path="/results:changes" query={query} name="changes" />
        </p>
      )}
      {d?.groups.map((g, gi) => (
        <section key={groupId(g)} class="group" aria-labelledby={`g${gi}`}>
          <h2 id={`g${gi}`}>
            {groupName(g)} <span class="note">({fmt(g.n)} points)</span>
          </h2>
          <GroupChart
            filters={queryOf(search, RESULT_FILTERS)}
            metric={metric}
            g={g}
            bySite={search.get('group_by') === 'site'}
            log={search.get('scale') === 'log'}
          />
          <details open={g.changes.length <= 20}>
            <summary>Change points: {g.changes.length}</summary>
            <Table
              label={`Change points of ${groupName(g)}`}
              class="changes"
              cols={['At', 'Direction', 'Mean before', 'Mean after', 'Magnitude', 'p-value', 'Triage']}
            >
              {g.changes.length === 0 && (
                <tr>
                  <td colSpan={7}>No change point at these thresholds.</td>
                </tr>
              )}
              {g.changes.map((c) => (
                <tr key={c.result_id}>
                  <td>
                    <Link href={`/explore/results/${c.result_id}`}>{fmtTime(c.at)}</Link>
                  </td>
                  <td class={c.direction}>{c.direction === 'regression' ? '▼ regression' : '▲ improvement'}</td>
                  <td data-field="before">{fmt(c.before.mean)}</td>
                  <td data-field="after">{fmt(c.after.mean)}</td>
                  <td data-field="magnitude">{c.magnitude === null ? '–' : `${fmt(c.magnitude * 100)} %`}</td>
                  <td data-field="pvalue">{fmtP(c.pvalue)}</td>
                  <td>{c.record?.state ?? '–'}</td>
                </tr>
              ))}
            </Table>
          </details>
          <details open={g.segments.length <= 20}>
            <summary>Segments: {g.segments.length}</summary>
            <Table label={`Segments of ${groupName(g)}`} class="segments" cols={['From', 'To', 'n', 'Mean', 'Median']}>
              {g.segments.map((s) => (
                <tr key={s.from}>
                  <td>{fmtTime(s.from)}</td>
                  <td>{fmtTime(s.to)}</td>
                  <td data-field="n">{fmt(s.n)}</td>
                  <td data-field="mean">{fmt(s.mean)}</td>
                  <td data-field="median">{fmt(s.median)}</td>
                </tr>
              ))}
            </Table>
          </details>
        </section>
      ))}
    </>
  );
}
