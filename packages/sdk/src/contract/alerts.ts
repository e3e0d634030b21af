/**
 * Watches and change records (docs/alerts.md): series the server keeps segmented, each change
 * point of which is a record that its watch's owner triages; the feed of records.
 */
import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdParams, ListQuery, NamedRef, Page, Timestamp, Uuid } from './common.ts';
import { MetricAnswer, MetricFilters } from './results.ts';
import { ChangePoint, ChangesQuery, ChangeState } from './changes.ts';

const { format: _format, changed_after: _changedAfter, ...SeriesParams } = ChangesQuery.properties;

const Duration = Type.String({
  pattern: '^[1-9][0-9]{0,5}[mhdw]$',
  description: 'A duration: a number and a unit, m (minutes), h, d or w (weeks), e.g. `7d`.',
  examples: ['7d'],
});

export const WatchInput = Type.Object(
  {
    ...SeriesParams,
    stale_after: Type.Optional(
      Type.Union([Duration, Type.Null()], {
        description: 'A watched group without a new result for this long is `series.stale` (once, until data comes back). Default: never.',
      }),
    ),
  },
  { $id: 'WatchInput', additionalProperties: false },
);

const Owner = Type.Object({ iss: Type.String(), sub: Type.String() }, { $id: 'Owner' });

export const Watch = Type.Object(
  {
    id: Uuid,
    owner: Owner,
    ...MetricAnswer,
    ...MetricFilters,
    better: Type.Union([Type.Literal('higher'), Type.Literal('lower'), Type.Null()], {
      description: "null: the schema's x-better, else higher.",
    }),
    max_pvalue: Type.Number(),
    min_magnitude: Type.Number(),
    min_size: Type.Integer(),
    stale_after: Type.Union([Type.String(), Type.Null()]),
    created: Timestamp,
  },
  { $id: 'Watch' },
);

const { index: _index, record: _record, ...PointFields } = ChangePoint.properties;

export const ChangeRecord = Type.Object(
  {
    id: Uuid,
    watch_id: Uuid,
    ...MetricAnswer,
    site: NamedRef,
    flavor: Type.Union([NamedRef, Type.Null()]),
    ...PointFields,
    first_seen: Timestamp,
    state: ChangeState,
    decided_by: Type.Union([Owner, Type.Null()], { description: 'Who acknowledged, dismissed or reopened it last.' }),
    decided_datetime: Type.Union([Timestamp, Type.Null()]),
    note: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'ChangeRecord' },
);

const Alerts = { tag: 'alerts', auth: 'user' } as const;
const OneWatch = { ...Alerts, path: '/watches/{id}', params: IdParams, errors: [403, 404] } as const;

export const createWatch = defineOperation({
  ...Alerts,
  operationId: 'createWatch',
  method: 'POST',
  path: '/watches',
  summary: 'Watch the series of a metric: the server keeps them segmented and records each change point',
  description:
    'The parameters and defaults of GET /results:changes, and `stale_after`. Unknown benchmark: 404; malformed metric: 422. ' +
    'A user with MAX_WATCHES_PER_USER watches (default 100): 409 TOO_MANY_WATCHES.',
  body: WatchInput,
  response: { status: 201, schema: Watch },
  errors: [404, 409, 422],
});

export const listWatches = defineOperation({
  ...Alerts,
  operationId: 'listWatches',
  method: 'GET',
  path: '/watches',
  summary: "The caller's watches (administrators: everyone's), newest first",
  query: ListQuery({ benchmark_id: Type.Optional(Uuid) }),
  response: { status: 200, schema: Page(Watch, 'WatchPage') },
});

export const getWatch = defineOperation({
  ...OneWatch,
  operationId: 'getWatch',
  method: 'GET',
  summary: 'One watch (its owner or an administrator)',
  description: "Another user's: 403 NOT_OWNER.",
  response: { status: 200, schema: Watch },
});

export const deleteWatch = defineOperation({
  ...OneWatch,
  operationId: 'deleteWatch',
  method: 'DELETE',
  summary: 'Delete a watch and its change records (its owner or an administrator)',
  response: { status: 204, schema: null },
});

export const ChangesFeedQuery = ListQuery({
  state: Type.Optional(
    Type.Union([ChangeState, Type.Literal('all')], { default: 'open', description: 'Records in this state (default open), or `all`.' }),
  ),
  direction: Type.Optional(Type.Union([Type.Literal('regression'), Type.Literal('improvement')])),
  benchmark_id: Type.Optional(Uuid),
  metric: Type.Optional(Type.String({ maxLength: 205 })),
  watch_id: Type.Optional(Uuid),
  since: Type.Optional(
    Type.String({
      format: 'date-bound',
      description: 'Only records first seen at or after this time: a date (midnight UTC) or a date-time with a zone.',
    }),
  ),
  format: Type.Optional(
    Type.Union([Type.Literal('json'), Type.Literal('atom')], { description: '`atom`: the page as an Atom feed (application/atom+xml).' }),
  ),
});

export const listChanges = defineOperation({
  ...Alerts,
  operationId: 'listChanges',
  method: 'GET',
  path: '/changes',
  summary: "The feed: change records of the caller's watches (administrators: all), newest first",
  description: 'Ordered by first_seen, then at, newest first.',
  query: ChangesFeedQuery,
  response: {
    status: 200,
    schema: Page(ChangeRecord, 'ChangeRecordPage'),
    alternatives: { 'application/atom+xml': Type.String({ description: 'An Atom feed: one entry per record of the page.' }) },
  },
});

export const Decision = Type.Object(
  { note: Type.Optional(Type.String({ maxLength: 1000, description: 'Why (at most 1000 characters).' })) },
  { $id: 'Decision', additionalProperties: false },
);

const decide = <const Id extends string, const Verb extends string>(operationId: Id, verb: Verb, summary: string) =>
  defineOperation({
    operationId,
    method: 'POST',
    path: `/changes/{id}:${verb}`,
    ...Alerts,
    summary,
    description: 'The owner of the watch of the record or an administrator (403 NOT_OWNER otherwise). The body is optional.',
    params: IdParams,
    body: Decision,
    bodyOptional: true,
    response: { status: 200, schema: ChangeRecord },
    errors: [403, 404],
  });

export const acknowledgeChange = decide('acknowledgeChange', 'acknowledge', 'Acknowledge a change record: expected');
export const dismissChange = decide('dismissChange', 'dismiss', 'Dismiss a change record: not real');
export const reopenChange = decide('reopenChange', 'reopen', 'Reopen an acknowledged or dismissed change record');

export const alertOperations = {
  createWatch,
  listWatches,
  getWatch,
  deleteWatch,
  listChanges,
  acknowledgeChange,
  dismissChange,
  reopenChange,
};
