/**
 * GET /results:compare (docs/spec/COMPARE.md): statistics of one numeric metric of one
 * benchmark's visible results, grouped by flavor or site, ranked with declared ties.
 */
import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { NamedRef } from './common.ts';
import { MetricAnswer, MetricQuery, WholeRead } from './results.ts';
import { WarningHeader, Warnings } from './warnings.ts';

export const CompareQuery = Type.Object(
  {
    ...MetricQuery({ results: 'compared', value: 'compared', group: 'group', better: 'Which direction wins.' }),
    confidence: Type.Optional(
      Type.Number({
        minimum: 0.5,
        maximum: 0.999,
        default: 0.95,
        description: 'Confidence of the intervals, 0.5 to 0.999 (default 0.95).',
      }),
    ),
    min_samples: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000,
        default: 5,
        description: 'Groups with fewer values are listed but not ranked (default 5).',
      }),
    ),
    rank_by: Type.Optional(
      Type.Union([Type.Literal('metric'), Type.Literal('price')], {
        default: 'metric',
        description: '`price`: rank flavors priced in `currency` by value for money (`per_price`); needs `currency` and group_by=flavor.',
      }),
    ),
    currency: Type.Optional(
      Type.String({
        pattern: '^[A-Z]{3}$',
        description: 'ISO 4217 code (`EUR`). With rank_by=price: only flavors priced in this currency are ranked.',
      }),
    ),
    baseline: Type.Optional(
      Type.String({
        format: 'uuid',
        description:
          'The id of a flavor (group_by=flavor) or site (group_by=site) among the groups: every other group gains `vs_baseline`, ' +
          'how many times the baseline its values are (Hodges–Lehmann ratio, its distribution-free interval and the ' +
          'Mann–Whitney p-value). 422 when it is not among the groups.',
      }),
    ),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('svg')], {
        description:
          'The answer: `json` (the default), `csv` (text/csv, one row per group) or `svg` (image/svg+xml, a chart). Without it, ' +
          'the `Accept` header chooses (`text/csv`, `image/svg+xml`).',
      }),
    ),
  },
  { additionalProperties: false },
);

/** A pair in the 2020-12 form of OpenAPI 3.1 (TypeBox's Tuple writes draft-07's `items: [..]`). */
const Interval = (description = '[low, high]') =>
  Type.Unsafe<[number, number]>({
    type: 'array',
    prefixItems: [Type.Number(), Type.Number()],
    items: false,
    minItems: 2,
    maxItems: 2,
    description,
  });

export const VsBaseline = Type.Object(
  {
    ratio: Type.Number({
      description:
        "How many times the baseline's values this group's are: exp of the median of the n·m differences ln xᵢ − ln yⱼ " +
        '(the Hodges–Lehmann estimate on the log scale).',
    }),
    ratio_ci: Type.Union([Interval(), Type.Null()], {
      description:
        "The ratio's distribution-free interval at `confidence`: [exp d₍ₖ₎, exp d₍ₙₘ₊₁₋ₖ₎], k = ⌊n·m/2 − z·√(n·m·(n+m+1)/12)⌋; " +
        'null when k < 1 (too few values).',
    }),
    pvalue: Type.Number({
      description: 'Two-sided Mann–Whitney U test (normal approximation, tie correction, continuity correction ½).',
    }),
  },
  { $id: 'VsBaseline' },
);

export const CompareGroup = Type.Object(
  {
    site: NamedRef,
    flavor: Type.Union([NamedRef, Type.Null()], { description: 'null when grouped by site.' }),
    n: Type.Integer({ description: 'How many values the group has.' }),
    mean: Type.Number({ description: 'Computed from the exact sum of the values, rounded once: never beyond the largest double.' }),
    stddev: Type.Union([Type.Number(), Type.Null()], {
      description: 'Sample standard deviation (n − 1); null when n = 1, or beyond the largest double (then named in `out_of_range`).',
    }),
    min: Type.Number(),
    p5: Type.Number(),
    p25: Type.Number(),
    median: Type.Number(),
    p75: Type.Number(),
    p95: Type.Number(),
    max: Type.Number(),
    median_ci: Interval('Distribution-free order-statistic interval of the median at `confidence`: [low, high].'),
    mean_ci: Type.Union([Interval(), Type.Null()], {
      description: 'Student t interval of the mean; null when n < 2, when stddev is null, or when a bound is beyond the largest double.',
    }),
    rank: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description:
        '1 + the number of ranked groups whose interval lies entirely on the better side of this one; overlapping intervals ' +
        'share a rank. null below min_samples (or, with rank_by=price, without a price in `currency`).',
    }),
    price: Type.Union([Type.Object({ per_hour: Type.Number(), currency: Type.String() }), Type.Null()], {
      description: "The flavor's price; null when grouped by site or when the flavor has none.",
    }),
    per_price: Type.Union([Type.Object({ median: Type.Number(), median_ci: Interval() }), Type.Null()], {
      description:
        'Value for money: higher is better, the median (and interval) per unit of money per hour; lower is better, times the price. ' +
        'null without a price, for a free flavor when higher is better, or when a value is beyond the largest double.',
    }),
    out_of_range: Type.Array(
      Type.Union([Type.Literal('stddev'), Type.Literal('mean_ci'), Type.Literal('per_price'), Type.Literal('vs_baseline')]),
      {
        description:
          'The statistics of this group that are null because their value lies beyond the range of a double (±1.8e308): values near ' +
          'the limits spread too widely for a standard deviation, a median near the limit divided by a small price, or a ratio ' +
          'to the baseline beyond it (1e300 against 1e-300). Usually empty.',
      },
    ),
    vs_baseline: Type.Optional(
      Type.Union([VsBaseline, Type.Null()], {
        description:
          'With `baseline`: this group against the baseline group. null for the baseline itself, when either group has a value ≤ 0 ' +
          'or fewer than min_samples values, or when the ratio or a bound is beyond the largest double (then named in `out_of_range`).',
      }),
    ),
  },
  { $id: 'CompareGroup' },
);

export const Comparison = Type.Object(
  {
    ...MetricAnswer,
    better: Type.Union([Type.Literal('higher'), Type.Literal('lower')]),
    confidence: Type.Number(),
    rank_by: Type.Union([Type.Literal('metric'), Type.Literal('price')]),
    matched: Type.Integer({ description: 'Visible results matching the filters.' }),
    excluded: Type.Integer({ description: 'Of those, the ones without a JSON number at `metric`.' }),
    baseline: Type.Optional(
      Type.String({ format: 'uuid', description: 'With `baseline`: the flavor or site the other groups are compared against.' }),
    ),
    groups: Type.Array(CompareGroup, {
      description: 'Ordered by rank (unranked last), then median (better first), then site and flavor name.',
    }),
    warnings: Warnings,
  },
  {
    $id: 'Comparison',
    examples: [
      {
        benchmark_id: '0b6f3c52-8d1e-4f7a-9a51-3c2e1d0f4b7a',
        metric: 'json.result.score',
        group_by: 'flavor',
        better: 'higher',
        confidence: 0.95,
        rank_by: 'metric',
        matched: 31,
        excluded: 1,
        groups: [
          {
            site: { id: '5d0c9a7e-2f41-4b8e-8c3a-7e9b1f2d6a40', name: 'CESGA' },
            flavor: { id: '9e2a7c14-6b3d-4f0e-a1c8-2d5f7b9e3a61', name: 'hpc.8core-16ram' },
            n: 10,
            mean: 104.5,
            stddev: 3.03,
            min: 100,
            p5: 100.45,
            p25: 102.25,
            median: 104.5,
            p75: 106.75,
            p95: 108.55,
            max: 109,
            median_ci: [101, 108],
            mean_ci: [102.33, 106.67],
            rank: 1,
            price: { per_hour: 2, currency: 'EUR' },
            per_price: { median: 52.25, median_ci: [50.5, 54] },
            out_of_range: [],
          },
          {
            site: { id: '5d0c9a7e-2f41-4b8e-8c3a-7e9b1f2d6a40', name: 'CESGA' },
            flavor: { id: '1f8b3e6a-9c2d-4a7f-b5e0-8d3c6a1f9b24', name: 'hpc.2core-4ram' },
            n: 20,
            mean: 54.4,
            stddev: 2.9,
            min: 50,
            p5: 50.5,
            p25: 52,
            median: 54.5,
            p75: 56.5,
            p95: 58.5,
            max: 59,
            median_ci: [53, 56],
            mean_ci: [53.04, 55.76],
            rank: 2,
            price: null,
            per_price: null,
            out_of_range: [],
          },
          {
            site: { id: '7a3d1e9c-4b6f-4e2a-8d5c-0f9e3b7a1c58', name: 'IFCA' },
            flavor: { id: '3c9e5a1d-7f2b-4d8e-9a6c-1b4e8f2d7a95', name: 'cpu.small' },
            n: 1,
            mean: 61,
            stddev: null,
            min: 61,
            p5: 61,
            p25: 61,
            median: 61,
            p75: 61,
            p95: 61,
            max: 61,
            median_ci: [61, 61],
            mean_ci: null,
            rank: null,
            price: { per_hour: 0.5, currency: 'USD' },
            per_price: { median: 122, median_ci: [122, 122] },
            out_of_range: [],
          },
        ],
      },
    ],
  },
);

export const compareResults = defineOperation({
  ...WholeRead,
  operationId: 'compareResults',
  path: '/results:compare',
  summary: 'Compare and rank flavors or sites on one metric',
  description:
    "Statistics of one numeric metric of one benchmark's visible results, grouped by flavor (default) or site, with " +
    'every filter of GET /results: n, mean, sample stddev, min, p5, p25, median, p75, p95, max, the order-statistic ' +
    'interval of the median and the t interval of the mean. Groups with at least min_samples values are ranked by ' +
    "their median's interval: groups whose intervals overlap share a rank. With prices, value for money. With " +
    '`baseline` (a flavor or site among the groups), every other group gains `vs_baseline`: the Hodges–Lehmann ratio to ' +
    'the baseline, its interval and the Mann–Whitney p-value (422 INVALID_QUERY when the baseline is not among the groups). ' +
    "A metric or filter path the benchmark's json_schema does not describe is used all the same and warned about " +
    '(`warnings`; the Warning header in every format). ' +
    'Unknown benchmark: 404; malformed metric: 422 INVALID_METRIC; rank_by=price without currency: 422. ' +
    'Also `format=csv` (text/csv) and `format=svg` (image/svg+xml). Runs with the expensive lists (it waits its turn; 503 EXPENSIVE_LIST_BUSY past EXPENSIVE_LIST_WAIT).',
  auth: 'none',
  query: CompareQuery,
  response: {
    status: 200,
    schema: Comparison,
    headers: WarningHeader,
    alternatives: {
      'text/csv': Type.String({
        description:
          'One header line and one row per group, in answer order: site_name, flavor_name, n, mean, stddev, min, p5, p25, median, p75, p95, max, ' +
          'median_ci_low, median_ci_high, mean_ci_low, mean_ci_high, rank, price_per_hour, currency, per_price_median, per_price_ci_low, per_price_ci_high, ' +
          'out_of_range (names joined by `;`); with `baseline`, also ratio, ratio_ci_low, ratio_ci_high, ratio_pvalue.',
      }),
      'image/svg+xml': Type.String({ description: 'A standalone SVG chart of the groups in answer order.' }),
    },
  },
});

export const compareOperations = { compareResults };
