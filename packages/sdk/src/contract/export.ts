/**
 * GET /results:export (docs/spec/COMPARE.md): every visible result matching the list filters,
 * no pages, streamed as NDJSON or CSV.
 */
import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { ResultFilters, WholeRead } from './results.ts';
import { WarningHeader } from './warnings.ts';

/** The fields a CSV export can hold besides JSON paths. */
export const EXPORT_FIELDS = ['id', 'execution_datetime', 'upload_datetime', 'benchmark_name', 'site_name', 'flavor_name', 'tags'] as const;

export const ExportQuery = Type.Object(
  {
    ...ResultFilters,
    format: Type.Optional(
      Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], {
        description:
          '`ndjson` (the default): one result a line, as GET /results/{id} returns it; `csv`: one row per result with `columns`. ' +
          'Without it, `Accept: text/csv` chooses CSV.',
      }),
    ),
    columns: Type.Optional(
      Type.Array(
        Type.String({
          minLength: 1,
          maxLength: 205,
          description: `A field (${EXPORT_FIELDS.join(', ')}) or a JSON path \`json.<dotted.path>\`.`,
        }),
        {
          minItems: 1,
          maxItems: 100,
          uniqueItems: true,
          description:
            'CSV columns, in order (repeat the parameter), each at most once, 100 at most. Default: id, execution_datetime, benchmark_name, site_name, flavor_name, tags, ' +
            "plus the benchmark's `suggestToUser` paths when `benchmark_id` is given. A JSON path's cell is the value there " +
            '(text as it is, numbers and booleans as JSON, objects and arrays as JSON text, empty when missing); tags are ' +
            'their names joined by `;`.',
          examples: [['id', 'flavor_name', 'json.result.score']],
        },
      ),
    ),
  },
  { additionalProperties: false },
);

const NDJSON_EXAMPLE =
  '{"id":"…","execution_datetime":"2025-01-31T10:00:00.000","upload_datetime":"…","benchmark":{…},"site":{…},"flavor":{…},"tags":[],"json":{"result":{"score":101.5}},"hidden":false}\n';

export const exportResults = defineOperation({
  ...WholeRead,
  operationId: 'exportResults',
  path: '/results:export',
  summary: 'Export every matching result (NDJSON or CSV), streamed',
  description:
    'Every visible result matching the filters of GET /results, without pages, in `execution_datetime, id` order, streamed ' +
    'from a server-side cursor in constant memory whatever the count (`Content-Disposition: attachment`). An error found ' +
    'before the first byte (a malformed filter or column: 422; an unknown benchmark: 404) is a problem+json answer; a ' +
    'failure later ends the stream early without its final newline, as an aborted transfer. With `benchmark_id`, a filter or ' +
    "CSV column path the benchmark's json_schema does not describe is exported all the same and named in the Warning header. " +
    'Exports run a few at a time ' +
    'per server, four times as many wait up to 10 s: beyond them 503 EXPORT_BUSY with Retry-After. An export whose client ' +
    'accepts no data for EXPORT_STALL_TIMEOUT (default 30 s), or that streams for longer than EXPORT_MAX_DURATION (default ' +
    '60 min), is cut off as an aborted transfer.',
  auth: 'none',
  query: ExportQuery,
  response: {
    status: 200,
    schema: Type.String({ description: 'One result (as GET /results/{id}) per line.', examples: [NDJSON_EXAMPLE] }),
    contentType: 'application/x-ndjson',
    headers: WarningHeader,
    alternatives: {
      'text/csv': Type.String({
        description:
          "A header line of the column names, then one row per result; a leading `=`, `+`, `-` or `@` in a text cell is prefixed with `'`.",
        examples: [
          'id,execution_datetime,benchmark_name,site_name,flavor_name,tags,json.result.score\n…,2025-01-31T10:00:00.000,demo/c-ray:1.0,CESGA,hpc.small,,101.5\n',
        ],
      }),
    },
  },
});

export const exportOperations = { exportResults };
