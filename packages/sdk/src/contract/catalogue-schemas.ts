/**
 * Response schemas of the catalogue: what results refer to (benchmarks, sites, flavors, tags) and
 * the uploader reference shown in administrator views. Results embed these objects.
 */
import { CloneType, type TObject, type TOptional, type TProperties, Type } from '@sinclair/typebox';
import { Status, Timestamp, UploadBounds, Uuid } from './common.ts';

const NullableText = (description: string) => Type.Union([Type.String(), Type.Null()], { description });

/** A JSON Schema document: an object or a boolean. */
export const JsonSchemaDocument = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Boolean()], {
  description:
    'A JSON Schema (draft 2020-12 unless its $schema names 2019-09, draft-07 or draft-06). `{}` accepts every ' +
    'result. Annotation keywords such as suggestToUser are kept.',
});

/** Who uploaded something, without any personal data. */
export const UploaderRef = Type.Object(
  {
    iss: Type.String({ description: 'OIDC issuer of the uploader.' }),
    sub: Type.String({ description: 'OIDC subject of the uploader.' }),
    removed: Type.Boolean({ description: 'The user was removed by an administrator; their uploads are kept.' }),
  },
  { $id: 'Uploader' },
);

export const Benchmark = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: 'Derived: `<container_image>:<container_tag>`.' }),
    container_image: Type.String({ description: 'Container image reference, optionally with a registry host.' }),
    container_tag: Type.String({ description: 'Tag of the container image.' }),
    docker_image: Type.String({
      deprecated: true,
      description: "Same as container_image, under the origin service's name (its frontend reads it). Use container_image.",
    }),
    docker_tag: Type.String({
      deprecated: true,
      description: "Same as container_tag, under the origin service's name (its frontend reads it). Use container_tag.",
    }),
    json_schema: JsonSchemaDocument,
    description: NullableText('Short description for the community.'),
    url: NullableText('URL of the benchmark documentation.'),
    status: Status,
    upload_datetime: Timestamp,
  },
  { $id: 'Benchmark' },
);

export const Site = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: 'Human-readable institution name.' }),
    address: Type.String({ description: 'Physical or virtual address.' }),
    description: NullableText('Short description.'),
    status: Status,
    upload_datetime: Timestamp,
  },
  { $id: 'Site' },
);

export const Flavor = Type.Object(
  {
    id: Uuid,
    site_id: Uuid,
    name: Type.String({ description: 'Identification of the virtual hardware template.' }),
    description: NullableText('Short description.'),
    price_per_hour: Type.Union([Type.Number({ minimum: 0 }), Type.Null()], {
      description: 'Price of one hour of this flavor, in `currency`; null when unknown.',
    }),
    currency: Type.Union([Type.String({ pattern: '^[A-Z]{3}$' }), Type.Null()], {
      description: 'ISO 4217 code of the price (`EUR`); null when the flavor has no price.',
    }),
    status: Status,
    upload_datetime: Timestamp,
  },
  { $id: 'Flavor' },
);

export const Tag = Type.Object(
  {
    id: Uuid,
    name: Type.String({ description: 'Human-readable feature name.' }),
    description: NullableText('Context of the label.'),
    status: Status,
  },
  { $id: 'Tag' },
);

// ---------------------------------------------------------------------------------------------
// Pieces of request schemas shared by the catalogue operations.

/** `status` of list and search queries: approved unless asked otherwise. */
export const StatusFilter = Type.Union([Type.Literal('on_review'), Type.Literal('approved')], {
  default: 'approved',
  description: 'Only items with this review status (default approved). Anyone may list items on review.',
});

/** Filters every reviewed resource's list and search take. */
export const ReviewFilters = { status: Type.Optional(StatusFilter), ...UploadBounds };

/** A required display name: 1 to 200 characters, not only spaces (surrounding spaces are trimmed). */
export const NameInput = (description: string, maxLength = 200) =>
  Type.String({ minLength: 1, maxLength, pattern: '\\S', description: `${description} Surrounding spaces are trimmed.` });

/** An optional text field: absent or null means none. */
export const OptionalText = (description: string, maxLength = 2000) =>
  Type.Optional(Type.Union([Type.String({ maxLength }), Type.Null()], { description }));

/** `?cascade=true` on administrator deletes. */
export const DeleteQuery = Type.Object(
  {
    cascade: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Also delete what refers to the item (results; a site's flavors; for a tag, only its links to results). " +
          'Without it, a referenced item gives 409 REFERENCED with the count.',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * Read-only fields of an item that an update (PUT) body may echo, as clients that send back what they
 * read do (the origin service's frontend): each optional and marked `readOnly`. The service ignores one
 * equal to the stored value and refuses one that differs (422 INVALID_BODY naming it).
 */
export function ReadOnlyEcho<T extends TProperties, const K extends keyof T & string>(item: TObject<T>, keys: readonly K[]) {
  const echoed = {} as { [P in K]: TOptional<T[P]> };
  for (const key of keys) {
    const field = CloneType(item.properties[key]) as T[K] & { description?: string; readOnly?: boolean };
    field.readOnly = true;
    field.description = `${field.description ? `${field.description} ` : ''}Read-only: may be sent back as read (ignored when equal to the stored value, else 422).`;
    echoed[key] = Type.Optional(field) as TOptional<T[K]>;
  }
  return echoed;
}

/** The names of the read-only fields an update schema made with ReadOnlyEcho accepts. */
export function readOnlyFields(update: TObject): string[] {
  return Object.entries(update.properties)
    .filter(([, schema]) => (schema as { readOnly?: boolean }).readOnly === true)
    .map(([name]) => name);
}
