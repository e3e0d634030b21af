import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { DateBound, IdempotencyHeaders, IdParams, ListQuery, Page, Terms, Timestamp, UploadBounds, Uuid } from './common.ts';
import { Benchmark, Flavor, Site, Tag } from './catalogue-schemas.ts';
import { UserAdmin } from './admin.ts';
import { WarningHeader, Warnings } from './warnings.ts';

/** The free-form result data: any JSON object, checked against the benchmark's json_schema. */
export const ResultJson = Type.Record(Type.String(), Type.Unknown(), {
  description: "The result data: a JSON object that satisfies the benchmark's json_schema.",
  examples: [{ machine: { cpu: { count: 8 } }, result: { score: 2270.5 } }],
});

export const Result = Type.Object(
  {
    id: Uuid,
    execution_datetime: Timestamp,
    upload_datetime: Timestamp,
    benchmark: Benchmark,
    site: Site,
    flavor: Flavor,
    tags: Type.Array(Tag),
    json: ResultJson,
    hidden: Type.Boolean({
      description: 'Left out of default lists: deleted by an administrator, or under an open or upheld claim.',
    }),
  },
  { $id: 'Result' },
);

/** Sortable fields besides `json.<dotted.path>`. */
export const ResultSort = {
  fields: [
    'id',
    'upload_datetime',
    'execution_datetime',
    'benchmark_id',
    'flavor_id',
    'site_id',
    'benchmark_name',
    'site_name',
    'flavor_name',
    'json.<dotted.path>',
  ] as const,
  default: '+execution_datetime',
};

const TagIds = (description: string) => Type.Array(Uuid, { maxItems: 20, description });
const IdOf = (description: string) => Type.String({ format: 'uuid', description });

export const Filters = Type.Array(
  Type.String({
    minLength: 1,
    maxLength: 500,
    description: 'One filter: `<path> <op> <value>`, the path `json.<dotted.path>` or `<dotted.path>`.',
  }),
  {
    maxItems: 20,
    description:
      'JSON filters, all of which must hold: `<path> <op> <value>` with op one of `==` `>` `<` `>=` `<=`, ' +
      'separated by single spaces (`%20`). A value that is a JSON number compares numerically, `true`/`false` as ' +
      'booleans, anything else (spaces included) as text. A result without a value of that type at the path does ' +
      'not match. The path is `json.<dotted.path>` or, without the prefix, `<dotted.path>`: `json.machine.cpu.count >= 4` and ' +
      '`machine.cpu.count >= 4` are the same filter (a top-level key named json is `json.json`).',
    examples: [['machine.cpu.count >= 4', 'result.score < 2500']],
  },
);

/** The filters every result list takes. */
export const ResultFilters = {
  benchmark_id: Type.Optional(IdOf('Results of this benchmark (recommended with filters: one JSON structure).')),
  site_id: Type.Optional(IdOf('Results executed at this site.')),
  flavor_id: Type.Optional(IdOf('Results executed on this flavor.')),
  tags_ids: Type.Optional(TagIds('Results carrying every one of these tags.')),
  ...UploadBounds,
  execution_before: Type.Optional(DateBound),
  execution_after: Type.Optional(DateBound),
  filters: Type.Optional(Filters),
};

const { benchmark_id: _required, ...filters } = ResultFilters;
/** The filters of the list but `benchmark_id`, which the questions about one metric of one benchmark require. */
export const MetricFilters = filters;

/**
 * The start of the queries about one metric of one benchmark's results (GET /results:compare and
 * GET /results:changes); `words` are what differs: what is done with the results and with the
 * metric, what a group is called, and the first sentence about `better`.
 */
export const MetricQuery = (words: { results: string; value: string; group: string; better: string }) => ({
  benchmark_id: Type.String({ format: 'uuid', description: `The benchmark whose results are ${words.results} (404 if unknown).` }),
  metric: Type.String({
    minLength: 1,
    maxLength: 205,
    description:
      `The value ${words.value}: \`json.<dotted.path>\` as in \`sort_by\` (e.g. \`json.result.score\`). ` +
      'Results without a JSON number there are counted in `excluded`.',
    examples: ['json.result.score'],
  }),
  group_by: Type.Optional(
    Type.Union([Type.Literal('flavor'), Type.Literal('site')], {
      default: 'flavor',
      description: `One ${words.group} per flavor (default) or per site.`,
    }),
  ),
  ...MetricFilters,
  better: Type.Optional(
    Type.Union([Type.Literal('higher'), Type.Literal('lower')], {
      description:
        `${words.better} Default: the \`x-better\` annotation (\`"higher"\` or \`"lower"\`) of the metric's property in the ` +
        "benchmark's json_schema, else `higher`.",
    }),
  ),
});

/** The reads over every matching result (compare, changes, export): an unknown benchmark is 404, a busy server 503. */
export const WholeRead = { method: 'GET', tag: 'results', errors: [404, 503] } as const;

/** What the answers about one metric of one benchmark (comparisons, changes, watches) begin with. */
export const MetricAnswer = {
  benchmark_id: Uuid,
  metric: Type.String(),
  group_by: Type.Union([Type.Literal('flavor'), Type.Literal('site')]),
};

const ResultPage = Page(Result, 'ResultPage', { warnings: Warnings });

const LIST_NOTES =
  'A JSON path is `json.<dotted.path>` everywhere; a filter may leave the `json.` out (a leading `json.` is always the prefix: ' +
  'a top-level key named json is `json.json`). With `benchmark_id`, a path its json_schema does not describe is still used, and ' +
  'the answer says so (`warnings`, the Warning header) with the nearest described path. ' +
  'Sort by `+`/`-` then a field, or `json.<dotted.path>` (numbers numerically, then other values as text; ' +
  'results without the path last in both directions). Every order ends with id. By number, pages reach at most MAX_PAGE_DEPTH ' +
  "(default 10,000) results deep: page × per_page above it is 422 PAGE_TOO_DEEP; `cursor` (the previous page's next_cursor) " +
  'goes on at any depth. Lists with search terms, JSON filters ' +
  'or a sort no index serves run a few at a time per server, the others waiting their turn: one that waits longer than the ' +
  "server's EXPENSIVE_LIST_WAIT (default 10 s) is 503 EXPENSIVE_LIST_BUSY with Retry-After; " +
  'a statement that runs past the statement timeout is 503 DATABASE_TIMEOUT.';

export const listResults = defineOperation({
  operationId: 'listResults',
  method: 'GET',
  path: '/results',
  tag: 'results',
  summary: 'List results',
  description: `Visible results (not hidden) matching every filter. ${LIST_NOTES}`,
  auth: 'none',
  query: ListQuery(ResultFilters, ResultSort),
  response: { status: 200, schema: ResultPage, headers: WarningHeader },
  errors: [503],
});

export const searchResults = defineOperation({
  operationId: 'searchResults',
  method: 'GET',
  path: '/results:search',
  tag: 'results',
  summary: 'Search results',
  description:
    'As the list, plus `terms`: each must occur (case-insensitive) in the benchmark name (image:tag), the site ' +
    `name or address, the flavor name, or the name of one of the result's tags. ${LIST_NOTES}`,
  auth: 'none',
  query: ListQuery({ terms: Type.Optional(Terms), ...ResultFilters }, ResultSort),
  response: { status: 200, schema: ResultPage, headers: WarningHeader },
  errors: [503],
});

export const getResult = defineOperation({
  operationId: 'getResult',
  method: 'GET',
  path: '/results/{id}',
  tag: 'results',
  summary: 'One result, hidden ones included (marked hidden)',
  auth: 'none',
  params: IdParams,
  response: { status: 200, schema: Result },
});

/** Where and when a result ran: the query of POST /results, and each item of a batch besides `json`. */
const UPLOAD_FIELDS = {
  benchmark_id: IdOf('The benchmark that was run (approved).'),
  flavor_id: IdOf("The flavor it ran on (approved); the site is the flavor's."),
  execution_datetime: Type.String({
    format: 'date-time',
    description: 'Start of the execution: ISO 8601 with a zone designator (Z or an offset), not in the future.',
    examples: ['2025-01-31T10:00:00Z'],
  }),
  tags_ids: Type.Optional(TagIds('Tags of the result (approved ones); duplicates are collapsed.')),
};

export const createResult = defineOperation({
  operationId: 'createResult',
  method: 'POST',
  path: '/results',
  tag: 'results',
  summary: 'Upload a result',
  description:
    'The body is the result JSON object, checked against the json_schema of the benchmark (422 SCHEMA_VIOLATION ' +
    "listing every violation with its JSON pointer). The site is the flavor's. Unknown benchmark, flavor or tag: " +
    '404; one not approved: 422 NOT_APPROVED. execution_datetime needs a zone designator and must not be in the future.',
  auth: 'user',
  query: Type.Object(UPLOAD_FIELDS, { additionalProperties: false }),
  headers: IdempotencyHeaders,
  body: ResultJson,
  response: { status: 201, schema: Result },
  errors: [404, 409],
});

/** The most results one batch upload may carry. */
export const MAX_BATCH_ITEMS = 500;

export const ResultUpload = Type.Object(
  { ...UPLOAD_FIELDS, json: ResultJson },
  { additionalProperties: false, description: 'One result of a batch: what POST /results takes as query and body.' },
);

export const createResults = defineOperation({
  operationId: 'createResults',
  method: 'POST',
  path: '/results:batch',
  tag: 'results',
  summary: 'Upload many results at once',
  description:
    `Up to ${MAX_BATCH_ITEMS} results in one request, each checked as POST /results checks one. All are stored or none: ` +
    'when any item is refused, the answer lists every refused item (errors[].path starts with /items/<index>) and nothing ' +
    'is stored; 404 when every refused item names something unknown, 422 otherwise. The answer gives the ids of the ' +
    'stored results in the order of the items (GET /results/{id} returns each).',
  auth: 'user',
  headers: IdempotencyHeaders,
  body: Type.Object({ items: Type.Array(ResultUpload, { minItems: 1, maxItems: MAX_BATCH_ITEMS }) }, { additionalProperties: false }),
  response: {
    status: 201,
    schema: Type.Object(
      { ids: Type.Array(Uuid, { description: 'The ids of the stored results, in the order of the items.' }) },
      { $id: 'ResultIds' },
    ),
  },
  errors: [404, 409],
});

export const deleteResult = defineOperation({
  operationId: 'deleteResult',
  method: 'DELETE',
  path: '/results/{id}',
  tag: 'results',
  summary: 'Delete a result (it is hidden for good and kept in the database)',
  description: 'Repeating it is 204 as well.',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
});

export const updateResultTags = defineOperation({
  operationId: 'updateResultTags',
  method: 'PUT',
  path: '/results/{id}/tags',
  tag: 'results',
  summary: 'Replace the tags of a result',
  description: 'By its uploader or an administrator (others: 403 NOT_UPLOADER). `[]` clears the tags.',
  auth: 'user',
  params: IdParams,
  body: Type.Object({ tags_ids: TagIds('The new tags (approved ones); duplicates are collapsed.') }, { additionalProperties: false }),
  response: { status: 204, schema: null },
});

export const getResultUploader = defineOperation({
  operationId: 'getResultUploader',
  method: 'GET',
  path: '/results/{id}/uploader',
  tag: 'results',
  summary: 'Who uploaded a result, with email (administrators)',
  auth: 'admin',
  params: IdParams,
  response: { status: 200, schema: UserAdmin },
});

export const listSelfResults = defineOperation({
  operationId: 'listSelfResults',
  method: 'GET',
  path: '/users/self/results',
  tag: 'users',
  summary: "The caller's results, hidden ones included",
  description: `Every filter of the results list and search applies. ${LIST_NOTES}`,
  auth: 'user',
  query: ListQuery({ terms: Type.Optional(Terms), ...ResultFilters }, ResultSort),
  response: { status: 200, schema: ResultPage, headers: WarningHeader },
  errors: [503],
});

export const resultOperations = {
  listResults,
  searchResults,
  getResult,
  createResult,
  createResults,
  deleteResult,
  updateResultTags,
  getResultUploader,
  listSelfResults,
};
