import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Terms } from './common.ts';
import { DeleteQuery, Flavor, NameInput, OptionalText, ReadOnlyEcho, ReviewFilters, Site } from './catalogue-schemas.ts';

const FlavorFields = {
  name: NameInput('Name of the virtual hardware template, unique within its site.'),
  description: OptionalText('Short description.'),
  price_per_hour: Type.Optional(
    Type.Union([Type.Number({ minimum: 0, maximum: 1e9 }), Type.Null()], {
      description: 'Price of one hour of this flavor (≥ 0), in `currency`. Give both or neither; absent or null: no price.',
      examples: [0.12],
    }),
  ),
  currency: Type.Optional(
    Type.Union([Type.String({ pattern: '^[A-Z]{3}$' }), Type.Null()], {
      description: 'ISO 4217 code of the price: three upper-case letters (`EUR`, `USD`). Give both or neither.',
      examples: ['EUR'],
    }),
  ),
};

export const FlavorInput = Type.Object(FlavorFields, { $id: 'FlavorInput', additionalProperties: false });

/** The body of an update: the creation body, and the flavor's read-only fields as a GET shows them. */
export const FlavorUpdate = Type.Object(
  { ...FlavorFields, ...ReadOnlyEcho(Flavor, ['id', 'site_id', 'status', 'upload_datetime']) },
  { $id: 'FlavorUpdate', additionalProperties: false },
);

export const FlavorSort = {
  fields: ['id', 'name', 'description', 'status', 'upload_datetime', 'site_id'] as const,
  default: '+name',
};

const FlavorPage = Page(Flavor, 'FlavorPage');
const SiteIdParams = IdParams;

export const listFlavors = defineOperation({
  operationId: 'listFlavors',
  method: 'GET',
  path: '/sites/{id}/flavors',
  tag: 'flavors',
  summary: "List a site's flavors",
  description: 'Exact filter on name; approved flavors unless `status` asks otherwise. Unknown site: 404.',
  auth: 'none',
  params: SiteIdParams,
  query: ListQuery({ name: Type.Optional(Type.String({ maxLength: 200, description: 'Exact name.' })), ...ReviewFilters }, FlavorSort),
  response: { status: 200, schema: FlavorPage },
});

export const searchFlavors = defineOperation({
  operationId: 'searchFlavors',
  method: 'GET',
  path: '/sites/{id}/flavors:search',
  tag: 'flavors',
  summary: "Search a site's flavors",
  description: 'Every term must occur (case-insensitive) in the name or the description. Ordered as the list.',
  auth: 'none',
  params: SiteIdParams,
  query: ListQuery({ terms: Type.Optional(Terms), ...ReviewFilters }, FlavorSort),
  response: { status: 200, schema: FlavorPage },
});

export const createFlavor = defineOperation({
  operationId: 'createFlavor',
  method: 'POST',
  path: '/sites/{id}/flavors',
  tag: 'flavors',
  summary: 'Submit a flavor of a site for review',
  description:
    'The site may itself be on review. The flavor starts on_review (approved at once when an administrator ' +
    'submits it). A name taken at that site: 409 DUPLICATE. Unknown site: 404.',
  auth: 'user',
  params: SiteIdParams,
  headers: IdempotencyHeaders,
  body: FlavorInput,
  response: { status: 201, schema: Flavor },
  errors: [409],
});

export const getFlavor = defineOperation({
  operationId: 'getFlavor',
  method: 'GET',
  path: '/flavors/{id}',
  tag: 'flavors',
  summary: 'One flavor, whatever its status',
  auth: 'none',
  params: IdParams,
  response: { status: 200, schema: Flavor },
});

export const getFlavorSite = defineOperation({
  operationId: 'getFlavorSite',
  method: 'GET',
  path: '/flavors/{id}/site',
  tag: 'flavors',
  summary: 'The site of a flavor',
  auth: 'none',
  params: IdParams,
  response: { status: 200, schema: Site },
});

export const updateFlavor = defineOperation({
  operationId: 'updateFlavor',
  method: 'PUT',
  path: '/flavors/{id}',
  tag: 'flavors',
  summary: 'Replace the editable fields of a flavor',
  description:
    'The body is the creation body; an absent description becomes null. The site, status and uploader are kept. The body may also carry ' +
    'the read-only fields (id, site_id, status, upload_datetime) as read: ignored when equal to the stored values, 422 INVALID_BODY naming the ' +
    'field when not.',
  auth: 'admin',
  params: IdParams,
  body: FlavorUpdate,
  response: { status: 200, schema: Flavor },
  errors: [409],
});

export const deleteFlavor = defineOperation({
  operationId: 'deleteFlavor',
  method: 'DELETE',
  path: '/flavors/{id}',
  tag: 'flavors',
  summary: 'Delete a flavor',
  description: 'With results: 409 REFERENCED with their `count`, unless `cascade=true`, which deletes them too.',
  auth: 'admin',
  params: IdParams,
  query: DeleteQuery,
  response: { status: 204, schema: null },
  errors: [409],
});

export const approveFlavor = defineOperation({
  operationId: 'approveFlavor',
  method: 'POST',
  path: '/flavors/{id}:approve',
  tag: 'flavors',
  summary: 'Approve a flavor on review',
  description: 'An approved flavor: 409 ALREADY_APPROVED.',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const rejectFlavor = defineOperation({
  operationId: 'rejectFlavor',
  method: 'POST',
  path: '/flavors/{id}:reject',
  tag: 'flavors',
  summary: 'Reject (delete) a flavor on review',
  description: 'An approved flavor: 409 ALREADY_APPROVED (use DELETE).',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const flavorOperations = {
  listFlavors,
  searchFlavors,
  createFlavor,
  getFlavor,
  getFlavorSite,
  updateFlavor,
  deleteFlavor,
  approveFlavor,
  rejectFlavor,
};
