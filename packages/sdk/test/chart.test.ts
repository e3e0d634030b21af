/**
 * The charts' value axis and the SVG chart (src/axis.ts, src/chart.ts) on the values that once made
 * them loop forever (two values one floating-point step apart), on extreme and degenerate ranges,
 * and on thousands of generated value sets (fast-check). Every render runs in a worker with a 64 MB
 * heap: a loop that never ends fails its test in a moment instead of eating the machine's memory.
 */
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { drawableRange, MAX_TICKS, type Ticks } from '../src/axis.ts';
import { isBaseline, ratioText, renderCompareSvg } from '../src/chart.ts';
import type { Reply } from '../src/index.ts';
import { boundedModule, type BoundedModule } from './support/bounded.ts';

const MAX = Number.MAX_VALUE;
const CHART = new URL('./support/chart-module.ts', import.meta.url);

/** Runs `body` with the chart module loaded in a bounded worker. */
async function withChart(body: (chart: BoundedModule) => Promise<void>): Promise<void> {
  const chart = await boundedModule(CHART);
  try {
    await body(chart);
  } finally {
    await chart.close();
  }
}

type Comparison = Reply<'compareResults'>;
type Group = Comparison['groups'][number];

/** A group drawing `values` (sorted): p5 and p95 at the ends, the median and its interval between. */
function group(values: number[], i: number): Group {
  const s = [...values].sort((a, b) => a - b);
  const q = (t: number) => s[Math.round(t * (s.length - 1))]!;
  return {
    site: { id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, name: `site ${i}` },
    flavor: null,
    n: s.length,
    mean: q(0.5),
    stddev: null,
    min: q(0),
    p5: q(0),
    p25: q(0.25),
    median: q(0.5),
    p75: q(0.75),
    p95: q(1),
    max: q(1),
    median_ci: [q(0.25), q(0.75)],
    mean_ci: null,
    rank: i + 1,
    price: null,
    per_price: null,
    out_of_range: [],
  };
}

function comparison(groups: number[][]): Comparison {
  return {
    benchmark_id: '00000000-0000-4000-8000-000000000000',
    metric: 'json.score',
    group_by: 'site',
    better: 'higher',
    confidence: 0.95,
    rank_by: 'metric',
    matched: groups.flat().length,
    excluded: 0,
    groups: groups.map(group),
  };
}

const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);

/** What every tick axis must be: a few increasing finite values in the drawn range, labelled exactly and distinctly. */
function assertTicks({ values, labels }: Ticks, lo: number, hi: number, context: string): void {
  const [from, to] = drawableRange(lo, hi);
  const slack = (to / 2 - from / 2) * 1e-9;
  assert.ok(values.length >= 2 && values.length <= MAX_TICKS, `${context}: ${values.length} ticks`);
  assert.is(labels.length, values.length, context);
  assert.ok(increasing(values), `${context}: ticks ${values}`);
  values.forEach((v, i) => {
    assert.ok(Number.isFinite(v) && v >= from - slack && v <= to + slack, `${context}: tick ${v} outside [${from}, ${to}]`);
    assert.is(Number(labels[i]), v === 0 ? 0 : v, `${context}: label ${labels[i]} is the tick ${v}`);
    assert.ok(labels[i]!.length <= 20, `${context}: label ${labels[i]} readable`);
  });
  assert.is(new Set(labels).size, labels.length, `${context}: distinct labels ${labels}`);
}

/** The SVG of `groups` must be bounded by their count, hold no NaN or Infinity, and place every mark on the canvas in value order. */
function assertChart(svg: string, groups: number[][], context: string): void {
  assert.ok(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"') && svg.endsWith('</svg>\n'), context);
  assert.not.match(svg, /NaN|Infinity/, context);
  assert.ok(svg.length <= 4000 + 1000 * groups.length, `${context}: ${svg.length} characters`);
  const grid = [...svg.matchAll(/<line x1="([^"]*)"[^>]*stroke="#eeeeee"/g)].map((m) => Number(m[1]));
  assert.ok(grid.length >= 2 && grid.length <= MAX_TICKS, `${context}: ${grid.length} ticks`);
  assert.ok(increasing(grid), `${context}: ticks at ${grid}`);
  for (const [, name, value] of svg.matchAll(/ (x|x1|x2|width)="([^"]*)"/g)) {
    const n = Number(value);
    assert.ok(Number.isFinite(n) && n >= 0 && n <= 860, `${context}: ${name}="${value}"`);
  }
  const marks = [...svg.matchAll(/<rect x="([^"]*)" y="[^"]*" width="3"/g)].map((m) => Number(m[1]));
  const medians = groups.map((values) => group(values, 0).median);
  assert.is(marks.length, groups.length, context);
  for (const [i, a] of medians.entries()) {
    for (const [j, b] of medians.entries()) {
      if (a < b) assert.ok(marks[i]! <= marks[j]!, `${context}: median ${a} drawn right of ${b}`);
    }
  }
}

const EXACT: [number, number][] = [
  [1815.85, 1815.8500000000001],
  [2 ** 53, 2 ** 53 + 2],
  [1815.85, 1815.85],
  [0, 0],
  [-0, 0],
  [-1e308, 1e308],
  [-1.7e308, 1.7e308],
  [-MAX, MAX],
  [MAX, MAX],
  [-MAX, -MAX],
  [Number.MIN_VALUE, 2 * Number.MIN_VALUE],
  [-Number.MIN_VALUE, Number.MIN_VALUE],
  [1e-310, 1e-309],
  [1e-300, 2e-300],
  [-1, 1e308],
  [1, 1 + 2e-9],
  [1e20, 1e20 + 1e11],
];

test('ratioText and a baseline: "1.35× [1.30, 1.41]"; the SVG marks the baseline row and draws its median dashed', () => {
  assert.is(ratioText({ ratio: 1.3512, ratio_ci: [1.3, 1.41] }), '1.35× [1.30, 1.41]');
  assert.is(ratioText({ ratio: 0.148, ratio_ci: null }), '0.148×');
  assert.is(ratioText({ ratio: 1234.4, ratio_ci: [2e-5, 3e7] }), '1234× [2.00e-5, 3.00e+7]');
  assert.is(ratioText({ ratio: 2, ratio_ci: [1.5, 2.5] }, false), '2.00×');
  const answer = comparison([
    [10, 11, 12],
    [20, 21, 22],
    [30, 31, 32],
  ]);
  const base = answer.groups[1]!;
  answer.baseline = base.site.id;
  answer.groups[0]!.vs_baseline = { ratio: 0.5, ratio_ci: [0.45, 0.55], pvalue: 0.01 };
  base.vs_baseline = null;
  answer.groups[2]!.vs_baseline = null;
  assert.equal(
    answer.groups.map((g) => isBaseline(answer, g)),
    [false, true, false],
  );
  const svg = renderCompareSvg(answer, 'b:1');
  const rows = svg.split('<g class="row').slice(1);
  assert.match(rows[0]!, /site 0 \(3\) 0\.500×<\/text>/);
  assert.match(rows[1]!, /^ baseline".*font-weight="bold">#2 site 1 \(3\) baseline<\/text>/s);
  assert.match(rows[2]!, /site 2 \(3\)<\/text>/);
  assert.match(svg, /<line class="baseline" [^>]*stroke-dasharray="5 3"\/>/);
  assert.match(svg, /Dashed: the baseline&apos;s median/);
  // Without a baseline, none of it.
  assert.not.match(renderCompareSvg(comparison([[1, 2, 3]]), 'b:1'), /baseline|×/);
});

test('ticks: two values one float step apart (1815.85, 1815.8500000000001; 2^53, 2^53 + 2) give a few round ticks', async () => {
  await withChart(async (chart) => {
    assert.equal(await chart.call('ticks', 1815.85, 1815.8500000000001), { values: [1700, 1800, 1900], labels: ['1700', '1800', '1900'] });
    assert.equal(await chart.call('ticks', 2 ** 53, 2 ** 53 + 2), {
      values: [8.5e15, 9e15, 9.5e15],
      labels: ['8.5e+15', '9e+15', '9.5e+15'],
    });
    assert.equal(await chart.call('ticks', 0, 10), { values: [0, 2, 4, 6, 8, 10], labels: ['0', '2', '4', '6', '8', '10'] });
    assert.equal(await chart.call('ticks', 0.11, 0.19), { values: [0.12, 0.14, 0.16, 0.18], labels: ['0.12', '0.14', '0.16', '0.18'] });
    assert.equal((await chart.call<Ticks>('ticks', -1.7e308, 1.7e308)).labels, ['-1e+308', '0', '1e+308']);
    for (const [lo, hi] of EXACT) assertTicks(await chart.call('ticks', lo, hi), lo, hi, `ticks(${lo}, ${hi})`);
  });
});

test('valueAxis: values too close to draw apart are drawn at one place, on an axis with round ticks around them', async () => {
  await withChart(async (chart) => {
    const one = (v: number) => ({ p5: v, p95: v, median: v, median_ci: [v, v] });
    type Positions = { ticks: number[]; at: number[]; drawn: number[] };
    for (const [lo, hi] of [
      [1815.85, 1815.8500000000001],
      [2 ** 53, 2 ** 53 + 2],
      [MAX, MAX],
      [Number.MIN_VALUE, 2 * Number.MIN_VALUE],
    ] as const) {
      const { ticks, drawn } = await chart.call<Positions>('positions', [one(lo), one(hi)], 0, [lo, hi]);
      assert.is(drawn[0], drawn[1], `${lo} and ${hi}`);
      assert.ok(drawn[0]! > 0.49 && drawn[0]! <= 1, `${lo} at the middle (or the end at the largest double): ${drawn[0]}`);
      assert.ok(ticks.length >= 2, `${lo}: ticks ${ticks}`);
      assert.ok(increasing(ticks) && ticks[0]! >= 0 && ticks.at(-1)! <= 1, `${lo}: ticks at ${ticks}`);
    }
    const plain = await chart.call<Positions>('positions', [one(0), one(10)], 0, [0, 2.5, 10, -1, 11, Number.NaN]);
    assert.equal(plain, { ticks: [0, 0.2, 0.4, 0.6, 0.8, 1], at: [0, 0.25, 1, 0, 1, 0], drawn: [0, 0.25, 1, 0, 1, 0] });
  });
});

test('renderCompareSvg: equal, near-equal, huge, overflowing and subnormal ranges draw a finite chart', async () => {
  await withChart(async (chart) => {
    for (const [lo, hi] of EXACT) {
      const groups = [[lo], [hi], [lo, hi]];
      assertChart(await chart.call('renderCompareSvg', comparison(groups), 'ghcr.io/acme/c-ray:1.2'), groups, `[${lo}, ${hi}]`);
    }
    // Not from the server (JSON has no NaN), but a caller of the SDK may pass anything: still a finite chart.
    const odd = comparison([[1, 2]]);
    odd.groups[0] = { ...odd.groups[0]!, p5: Number.NaN, p95: Number.POSITIVE_INFINITY, median_ci: [Number.NEGATIVE_INFINITY, 2] };
    const svg = await chart.call<string>('renderCompareSvg', odd, 'x');
    assert.not.match(svg, /NaN|Infinity/);
  });
});

// Generated values: anything finite, the extremes, and sets of values a few float steps apart.
const bits = new Float64Array(1);
const raw = new BigInt64Array(bits.buffer);
/** The next double above (`up`) or below `x`; `x` itself at the finite ends. */
function nextAfter(x: number, up: boolean): number {
  if (x === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE;
  bits[0] = x;
  raw[0]! += x > 0 === up ? 1n : -1n;
  return Number.isFinite(bits[0]) ? bits[0] : x;
}
/** `x` moved `steps` doubles up (or down when negative); at most a few. */
function stepsAway(x: number, steps: number): number {
  let y = x;
  for (let i = 0; i < Math.abs(steps); i++) y = nextAfter(y, steps > 0);
  return y;
}

const extreme = fc.constantFrom(
  0,
  -0,
  Number.MIN_VALUE,
  -Number.MIN_VALUE,
  2.2250738585072014e-308,
  MAX,
  -MAX,
  1e308,
  -1e308,
  1.7e308,
  -1.7e308,
  2 ** 53,
  -(2 ** 53),
  1815.85,
  1e-300,
);
const finite = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), extreme, fc.integer({ min: -1e6, max: 1e6 }));
const nearly = fc
  .tuple(finite, fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 6 }))
  .map(([x, steps]) => steps.map((s) => stepsAway(x, s)));
const equal = fc.tuple(finite, fc.integer({ min: 1, max: 6 })).map(([x, n]) => Array.from({ length: n }, () => x));
const scattered = fc.array(finite, { minLength: 1, maxLength: 8 });
/** A value set: mostly near-equal or equal values (the dangerous ones), sometimes any. */
const valueSet = fc.oneof(
  nearly,
  equal,
  scattered,
  fc.tuple(nearly, scattered).map(([a, b]) => [...a, ...b]),
);

test('ticks, property: for any lo <= hi, at most MAX_TICKS increasing ticks with distinct exact labels', async () => {
  await withChart(async (chart) => {
    await fc.assert(
      fc.asyncProperty(valueSet, async (values) => {
        const lo = values.reduce((a, b) => Math.min(a, b));
        const hi = values.reduce((a, b) => Math.max(a, b));
        assertTicks(await chart.call('ticks', lo, hi), lo, hi, `ticks(${lo}, ${hi})`);
      }),
      { numRuns: 3000 },
    );
  });
});

test('renderCompareSvg, property: any groups of values draw a bounded, finite chart, medians in order', async () => {
  await withChart(async (chart) => {
    await fc.assert(
      fc.asyncProperty(
        valueSet.chain((values) =>
          fc.array(fc.subarray(values, { minLength: 1 }), { minLength: 1, maxLength: 5 }).map((groups) => [values, ...groups]),
        ),
        async (groups) => {
          assertChart(await chart.call('renderCompareSvg', comparison(groups), 'bench:1'), groups, JSON.stringify(groups));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

test.run();
