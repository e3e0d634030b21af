/**
 * GET /results:changes (docs/spec/CHANGES.md): change points in the time series of one numeric
 * metric of one benchmark's results, one series per flavor or site, found by E-divisive means
 * with Welch's t-test.
 */
import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { NamedRef, Uuid } from './common.ts';
import { MetricAnswer, MetricQuery, WholeRead } from './results.ts';
import { WarningHeader, Warnings } from './warnings.ts';

export const ChangesQuery = Type.Object(
  {
    ...MetricQuery({
      results: 'examined',
      value: 'followed',
      group: 'series',
      better: 'Which direction is better, telling regressions from improvements.',
    }),
    max_pvalue: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        exclusiveMaximum: 0.5,
        default: 0.001,
        description: "A change point is reported only when its Welch's t-test p-value is at most this (0 < x < 0.5; default 0.001).",
      }),
    ),
    min_magnitude: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1e300,
        default: 0.02,
        description: '… and when the relative change of the mean, |after − before| / |before|, is at least this (≥ 0; default 0.02).',
      }),
    ),
    min_size: Type.Optional(
      Type.Integer({
        minimum: 2,
        maximum: 1_000_000,
        default: 5,
        description: 'The fewest points a segment may hold (≥ 2; default 5). Series with fewer than 2 × min_size points have no change.',
      }),
    ),
    changed_after: Type.Optional(
      Type.String({
        format: 'date-bound',
        examples: ['2026-05-01', '2026-05-01T12:00:00Z'],
        description:
          'Report only change points at or after this time (a date, midnight UTC, or a date-time with a zone); the series before it still counts.',
      }),
    ),
    format: Type.Optional(
      Type.Union([Type.Literal('json'), Type.Literal('csv'), Type.Literal('svg')], {
        description:
          'The answer: `json` (the default), `csv` (text/csv, one row per change point) or `svg` (image/svg+xml, small multiples). ' +
          'Without it, the `Accept` header chooses (`text/csv`, `image/svg+xml`).',
      }),
    ),
  },
  { additionalProperties: false },
);

const Side = Type.Object({
  n: Type.Integer(),
  mean: Type.Number(),
  median: Type.Number(),
});

export const ChangeSegment = Type.Object({
  from: Type.String({ description: 'execution_datetime of its first point.' }),
  to: Type.String({ description: 'execution_datetime of its last point.' }),
  ...Side.properties,
  stddev: Type.Union([Type.Number(), Type.Null()], {
    description: 'Sample standard deviation (n − 1); null when n = 1 or beyond the largest double (values near ±1.8e308).',
  }),
});

export const ChangeState = Type.Union(
  [Type.Literal('open'), Type.Literal('acknowledged'), Type.Literal('dismissed'), Type.Literal('gone')],
  { description: '`acknowledged`: expected; `dismissed`: not real; `gone`: the latest segmentation no longer finds it.' },
);

export const ChangePoint = Type.Object({
  at: Type.String({ description: 'execution_datetime of the first point after the change.' }),
  result_id: Uuid,
  index: Type.Integer({ description: 'Position (from 0) in the series of the first point after the change.' }),
  before: Side,
  after: Side,
  magnitude: Type.Union([Type.Number(), Type.Null()], {
    description: '(after.mean − before.mean) / |before.mean|; null when before.mean is 0 or the ratio is beyond the largest double.',
  }),
  pvalue: Type.Number({ description: "Two-sided Welch's t-test between before and after (Welch–Satterthwaite degrees of freedom)." }),
  direction: Type.Union([Type.Literal('regression'), Type.Literal('improvement')], {
    description: '`regression` when the mean moved toward the worse side of `better`.',
  }),
  record: Type.Union([Type.Object({ id: Uuid, state: ChangeState }), Type.Null()], {
    description:
      "The change record of this point (docs/alerts.md) when the series is watched and the caller may see the record: the feed's " +
      "rule, the records of the caller's own watches (administrators: any watch's); else null, always for an anonymous caller.",
  }),
});

export const ChangesGroup = Type.Object(
  {
    site: NamedRef,
    flavor: Type.Union([NamedRef, Type.Null()], { description: 'null when grouped by site.' }),
    n: Type.Integer({ description: 'Points in the series.' }),
    first: Type.String({ description: 'execution_datetime of the first point.' }),
    last: Type.String({ description: 'execution_datetime of the last point.' }),
    segments: Type.Array(ChangeSegment, { description: 'The series cut at every change point (those before changed_after too).' }),
    changes: Type.Array(ChangePoint, { description: 'The change points, in time order (at or after changed_after when given).' }),
  },
  { $id: 'ChangesGroup' },
);

export const Changes = Type.Object(
  {
    ...MetricAnswer,
    better: Type.Union([Type.Literal('higher'), Type.Literal('lower')]),
    max_pvalue: Type.Number(),
    min_magnitude: Type.Number(),
    min_size: Type.Integer(),
    matched: Type.Integer({ description: 'Visible results matching the filters.' }),
    excluded: Type.Integer({ description: 'Of those, the ones without a JSON number at `metric`.' }),
    groups: Type.Array(ChangesGroup, { description: 'Ordered by site name, then flavor name, then ids.' }),
    warnings: Warnings,
  },
  {
    $id: 'Changes',
    examples: [
      {
        benchmark_id: '0b6f3c52-8d1e-4f7a-9a51-3c2e1d0f4b7a',
        metric: 'json.result.score',
        group_by: 'flavor',
        better: 'higher',
        max_pvalue: 0.001,
        min_magnitude: 0.02,
        min_size: 5,
        matched: 40,
        excluded: 0,
        groups: [
          {
            site: { id: '5d0c9a7e-2f41-4b8e-8c3a-7e9b1f2d6a40', name: 'CESGA' },
            flavor: { id: '9e2a7c14-6b3d-4f0e-a1c8-2d5f7b9e3a61', name: 'hpc.8core-16ram' },
            n: 40,
            first: '2026-01-01T00:00:00.000',
            last: '2026-02-09T00:00:00.000',
            segments: [
              { from: '2026-01-01T00:00:00.000', to: '2026-01-20T00:00:00.000', n: 20, mean: 101.2, median: 101, stddev: 2.1 },
              { from: '2026-01-21T00:00:00.000', to: '2026-02-09T00:00:00.000', n: 20, mean: 85.8, median: 86, stddev: 2 },
            ],
            changes: [
              {
                at: '2026-01-21T00:00:00.000',
                result_id: '3c9e5a1d-7f2b-4d8e-9a6c-1b4e8f2d7a95',
                index: 20,
                before: { n: 20, mean: 101.2, median: 101 },
                after: { n: 20, mean: 85.8, median: 86 },
                magnitude: -0.152,
                pvalue: 1.2e-12,
                direction: 'regression',
                record: { id: '6a1f0e2d-4c3b-4e5a-9f8d-7b2c1a0e9d34', state: 'open' },
              },
            ],
          },
        ],
      },
    ],
  },
);

export const findChanges = defineOperation({
  ...WholeRead,
  operationId: 'findChanges',
  path: '/results:changes',
  summary: 'Find change points over time in one metric, per flavor or site',
  description:
    "Change points in the time series of one numeric metric of one benchmark's visible results, one series per flavor (default) " +
    'or site, ordered by execution_datetime then id, with every filter of GET /results: E-divisive means (α = 1) proposes splits, ' +
    "kept when both sides hold min_size points, Welch's t-test gives p ≤ max_pvalue and the mean moved by at least min_magnitude; " +
    'every change is then re-tested against its final neighbouring segments. Each change point comes with its before and after ' +
    'segments, magnitude, p-value and direction (regression or improvement). ' +
    'Unknown benchmark: 404; malformed metric or changed_after: 422. Also `format=csv` (text/csv) and `format=svg` ' +
    '(image/svg+xml, small multiples). Runs with the expensive lists (it waits its turn; 503 EXPENSIVE_LIST_BUSY past EXPENSIVE_LIST_WAIT).',
  auth: 'optional',
  query: ChangesQuery,
  response: {
    status: 200,
    schema: Changes,
    headers: WarningHeader,
    alternatives: {
      'text/csv': Type.String({
        description:
          'One header line and one row per change point, groups in answer order: site_name, flavor_name, at, result_id, index, ' +
          'before_mean, after_mean, magnitude, pvalue, direction.',
      }),
      'image/svg+xml': Type.String({
        description: 'A standalone SVG: one panel per group with its points over time, segment means and change points.',
      }),
    },
  },
});

export const changesOperations = { findChanges };
