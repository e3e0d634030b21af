/**
 * Warnings: an answer given in full that may not be what the caller meant, such as a JSON path the
 * benchmark's schema does not describe (a typo matches nothing, it does not fail). They travel in
 * the body (`warnings`, where the body is JSON) and in the `Warning` response header.
 */
import { Type } from '@sinclair/typebox';

/** The code of a warning about a JSON path the benchmark's JSON Schema does not describe. */
export const UNDESCRIBED_PATH = 'UNDESCRIBED_PATH';

export const Warning = Type.Object(
  {
    code: Type.String({ description: `Stable UPPER_SNAKE identifier of the warning: \`${UNDESCRIBED_PATH}\`.` }),
    parameter: Type.String({ description: 'The query parameter that named the path: filters, sort_by, metric or columns.' }),
    path: Type.String({ description: 'The JSON path, always written json.<dotted.path>.' }),
    suggestion: Type.Union([Type.String(), Type.Null()], {
      description: "The nearest path the benchmark's schema describes (json.<dotted.path>); null when none is near.",
    }),
    message: Type.String({ description: 'One line for people, the text of the Warning header.' }),
  },
  {
    $id: 'Warning',
    examples: [
      {
        code: UNDESCRIBED_PATH,
        parameter: 'filters',
        path: 'json.machine.cpu.cont',
        suggestion: 'json.machine.cpu.count',
        message: "json.machine.cpu.cont is not described by the benchmark's schema; did you mean json.machine.cpu.count?",
      },
    ],
  },
);

const WHEN =
  'A warning comes when `benchmark_id` names a benchmark and a JSON path of the query (in filters, sort_by, metric or columns) is not ' +
  'described by its json_schema: no `properties`, `patternProperties` or `items` names it, following `$ref`, `allOf`, `anyOf` and `oneOf` ' +
  '(`additionalProperties` allows keys without describing them). The answer is still given in full: a schema may allow more than it ' +
  'describes. A schema that names no property (`{}`) warns about nothing.';

/** The optional `warnings` member of an answer. */
export const Warnings = Type.Optional(Type.Array(Warning, { description: `Present only when there is something to warn about. ${WHEN}` }));

/** The `Warning` response header of the operations that may warn. */
export const WarningHeader = {
  Warning: Type.String({
    description:
      `One \`299 - "<message>"\` per warning, comma-separated (the format of RFC 7234), present only when there is a warning. ${WHEN} ` +
      'In the header, characters outside printable ASCII (and %) are percent-encoded (UTF-8); `"` and `\\` are escaped with `\\`.',
    examples: [`299 - "json.machine.cpu.cont is not described by the benchmark's schema; did you mean json.machine.cpu.count?"`],
  }),
};
