import { Type } from '@sinclair/typebox';
import { Benchmark, JsonSchemaDocument, OptionalText, ReadOnlyEcho } from './catalogue-schemas.ts';
import { reviewedOperations } from './reviewed.ts';

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

export const benchmarkOperations = reviewedOperations({
  name: 'Benchmark',
  tag: 'benchmarks',
  item: Benchmark,
  input: BenchmarkInput,
  update: BenchmarkUpdate,
  sort: BenchmarkSort,
  filters: {
    container_image: Type.Optional(Type.String({ maxLength: 255, description: 'Exact image.' })),
    container_tag: Type.Optional(Type.String({ maxLength: 128, description: 'Exact tag.' })),
    docker_image: Type.Optional(Type.String({ maxLength: 255, ...alias('container_image') })),
    docker_tag: Type.Optional(Type.String({ maxLength: 128, ...alias('container_tag') })),
  },
  text: {
    list: 'Exact filters on image and tag (also under their deprecated aliases docker_image and docker_tag)',
    search: 'the image, the tag or the description',
    order: ' (default image, tag, id) unless sort_by says otherwise',
    create:
      'The benchmark starts on_review (approved at once when an administrator submits it). `json_schema` must be ' +
      'a valid JSON Schema (422 INVALID_JSON_SCHEMA) of bounded size: by default at most 256 KiB of JSON and 5,000 ' +
      'values, counting every object member and array element (422 JSON_SCHEMA_TOO_LARGE), that compiles within ' +
      '10 s (422 JSON_SCHEMA_TOO_COMPLEX); the same holds for updates. The same image and tag twice: 409 DUPLICATE.',
    update: ['absent optional fields become null', 'Status and uploader', 'id, name, status, upload_datetime'],
    delete: 'With results: 409 REFERENCED with their `count`, unless `cascade=true`, which deletes them too.',
  },
});
