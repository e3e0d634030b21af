import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Terms } from './common.ts';
import { Benchmark, DeleteQuery, JsonSchemaDocument, OptionalText, ReadOnlyEcho, ReviewFilters } from './catalogue-schemas.ts';

const DOMAIN_PART = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const PATH_PART = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
/** OCI distribution reference without tag: `[host[:port]/]path/of/components`. A host has a dot, a port or is localhost. */
export const IMAGE_PATTERN =
  `^(?:(?:${DOMAIN_PART}(?:\\.${DOMAIN_PART})+|localhost)(?::[0-9]+)?/|${DOMAIN_PART}:[0-9]+/)?` + `${PATH_PART}(?:/${PATH_PART})*$`;
export const TAG_PATTERN = '^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$';

const IMAGE = {
  minLength: 1,
  maxLength: 255,
  pattern: IMAGE_PATTERN,
  description: 'Image reference without tag, from any registry: `ubuntu`, `ghcr.io/org/img`, `registry.example.org:5000/a/b`.',
  examples: ['ghcr.io/example/c-ray'],
};
const TAG = { minLength: 1, maxLength: 128, pattern: TAG_PATTERN, description: 'Image tag.', examples: ['1.2'] };

/** The origin service's name of a field (`docker_image`), accepted and answered beside SPEC's name. */
const alias = (primary: string) => ({
  deprecated: true,
  description:
    `Deprecated alias of ${primary} (the origin service's name, which its frontend sends). Either name may be ` +
    'given, or both with the same value; both with different values: 422.',
});

/**
 * The editable fields of a benchmark. Image and tag are required under one of their names: SPEC's
 * (`container_image`, `container_tag`) or the origin service's alias (`docker_image`, `docker_tag`).
 */
const BenchmarkFields = {
  container_image: Type.Optional(Type.String(IMAGE)),
  container_tag: Type.Optional(Type.String(TAG)),
  docker_image: Type.Optional(Type.String({ ...IMAGE, ...alias('container_image') })),
  docker_tag: Type.Optional(Type.String({ ...TAG, ...alias('container_tag') })),
  json_schema: JsonSchemaDocument,
  description: OptionalText('Short description for the community.'),
  url: Type.Optional(
    Type.Union([Type.String({ maxLength: 2000, format: 'uri', pattern: '^[hH][tT][tT][pP][sS]?://' }), Type.Null()], {
      description: 'http(s) URL of the benchmark documentation.',
    }),
  ),
};

/** container_image or docker_image, and container_tag or docker_tag. */
const EITHER_NAME = {
  allOf: [
    { anyOf: [{ required: ['container_image'] }, { required: ['docker_image'] }] },
    { anyOf: [{ required: ['container_tag'] }, { required: ['docker_tag'] }] },
  ],
};

export const BenchmarkInput = Type.Object(BenchmarkFields, { $id: 'BenchmarkInput', additionalProperties: false, ...EITHER_NAME });

/** The body of an update: the creation body, and the benchmark's read-only fields as a GET shows them. */
export const BenchmarkUpdate = Type.Object(
  { ...BenchmarkFields, ...ReadOnlyEcho(Benchmark, ['id', 'name', 'status', 'upload_datetime']) },
  { $id: 'BenchmarkUpdate', additionalProperties: false, ...EITHER_NAME },
);

/** Pairs of a field and its deprecated alias, in bodies and in the list's query. */
export const BENCHMARK_ALIASES = [
  ['container_image', 'docker_image'],
  ['container_tag', 'docker_tag'],
] as const;

/** Sortable fields; `name` sorts by image, then tag; docker_image and docker_tag are deprecated aliases. */
export const BenchmarkSort = {
  fields: [
    'id',
    'name',
    'container_image',
    'container_tag',
    'docker_image',
    'docker_tag',
    'description',
    'url',
    'status',
    'upload_datetime',
  ] as const,
  default: '+container_image,+container_tag',
};

const BenchmarkPage = Page(Benchmark, 'BenchmarkPage');

export const listBenchmarks = defineOperation({
  operationId: 'listBenchmarks',
  method: 'GET',
  path: '/benchmarks',
  tag: 'benchmarks',
  summary: 'List benchmarks',
  description:
    'Exact filters on image and tag (also under their deprecated aliases docker_image and docker_tag); approved ' +
    'benchmarks unless `status` asks otherwise.',
  auth: 'none',
  query: ListQuery(
    {
      container_image: Type.Optional(Type.String({ maxLength: 255, description: 'Exact image.' })),
      container_tag: Type.Optional(Type.String({ maxLength: 128, description: 'Exact tag.' })),
      docker_image: Type.Optional(Type.String({ maxLength: 255, ...alias('container_image') })),
      docker_tag: Type.Optional(Type.String({ maxLength: 128, ...alias('container_tag') })),
      ...ReviewFilters,
    },
    BenchmarkSort,
  ),
  response: { status: 200, schema: BenchmarkPage },
});

export const searchBenchmarks = defineOperation({
  operationId: 'searchBenchmarks',
  method: 'GET',
  path: '/benchmarks:search',
  tag: 'benchmarks',
  summary: 'Search benchmarks',
  description:
    'Every term must occur (case-insensitive) in the image, the tag or the description. Ordered as the list ' +
    '(default image, tag, id) unless sort_by says otherwise.',
  auth: 'none',
  query: ListQuery({ terms: Type.Optional(Terms), ...ReviewFilters }, BenchmarkSort),
  response: { status: 200, schema: BenchmarkPage },
});

export const getBenchmark = defineOperation({
  operationId: 'getBenchmark',
  method: 'GET',
  path: '/benchmarks/{id}',
  tag: 'benchmarks',
  summary: 'One benchmark, whatever its status',
  auth: 'none',
  params: IdParams,
  response: { status: 200, schema: Benchmark },
});

export const createBenchmark = defineOperation({
  operationId: 'createBenchmark',
  method: 'POST',
  path: '/benchmarks',
  tag: 'benchmarks',
  summary: 'Submit a benchmark for review',
  description:
    'The benchmark starts on_review (approved at once when an administrator submits it). `json_schema` must be ' +
    'a valid JSON Schema (422 INVALID_JSON_SCHEMA) of bounded size: by default at most 256 KiB of JSON and 5,000 ' +
    'values, counting every object member and array element (422 JSON_SCHEMA_TOO_LARGE), that compiles within ' +
    '10 s (422 JSON_SCHEMA_TOO_COMPLEX); the same holds for updates. The same image and tag twice: 409 DUPLICATE.',
  auth: 'user',
  headers: IdempotencyHeaders,
  body: BenchmarkInput,
  response: { status: 201, schema: Benchmark },
  errors: [409],
});

export const updateBenchmark = defineOperation({
  operationId: 'updateBenchmark',
  method: 'PUT',
  path: '/benchmarks/{id}',
  tag: 'benchmarks',
  summary: 'Replace the editable fields of a benchmark',
  description:
    'The body is the creation body; absent optional fields become null. Status and uploader are kept. The body may ' +
    'also carry the read-only fields (id, name, status, upload_datetime) as read: ignored when equal to the stored ' +
    'values, 422 INVALID_BODY naming the field when not.',
  auth: 'admin',
  params: IdParams,
  body: BenchmarkUpdate,
  response: { status: 200, schema: Benchmark },
  errors: [409],
});

export const deleteBenchmark = defineOperation({
  operationId: 'deleteBenchmark',
  method: 'DELETE',
  path: '/benchmarks/{id}',
  tag: 'benchmarks',
  summary: 'Delete a benchmark',
  description: 'With results: 409 REFERENCED with their `count`, unless `cascade=true`, which deletes them too.',
  auth: 'admin',
  params: IdParams,
  query: DeleteQuery,
  response: { status: 204, schema: null },
  errors: [409],
});

export const approveBenchmark = defineOperation({
  operationId: 'approveBenchmark',
  method: 'POST',
  path: '/benchmarks/{id}:approve',
  tag: 'benchmarks',
  summary: 'Approve a benchmark on review',
  description: 'An approved benchmark: 409 ALREADY_APPROVED.',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const rejectBenchmark = defineOperation({
  operationId: 'rejectBenchmark',
  method: 'POST',
  path: '/benchmarks/{id}:reject',
  tag: 'benchmarks',
  summary: 'Reject (delete) a benchmark on review',
  description: 'An approved benchmark: 409 ALREADY_APPROVED (use DELETE).',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const benchmarkOperations = {
  listBenchmarks,
  searchBenchmarks,
  getBenchmark,
  createBenchmark,
  updateBenchmark,
  deleteBenchmark,
  approveBenchmark,
  rejectBenchmark,
};
