import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdParams } from './common.ts';
import { Flavor, NameInput, OptionalText, ReadOnlyEcho, Site } from './catalogue-schemas.ts';
import { reviewedOperations } from './reviewed.ts';

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

const ops = reviewedOperations({
  name: 'Flavor',
  tag: 'flavors',
  item: Flavor,
  input: FlavorInput,
  update: FlavorUpdate,
  sort: FlavorSort,
  inSite: true,
  filters: { name: Type.Optional(Type.String({ maxLength: 200, description: 'Exact name.' })) },
  text: {
    list: 'Exact filter on name',
    search: 'the name or the description',
    create:
      'The site may itself be on review. The flavor starts on_review (approved at once when an administrator ' +
      'submits it). A name taken at that site: 409 DUPLICATE. Unknown site: 404.',
    update: ['an absent description becomes null', 'The site, status and uploader', 'id, site_id, status, upload_datetime'],
    delete: 'With results: 409 REFERENCED with their `count`, unless `cascade=true`, which deletes them too.',
  },
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

export const flavorOperations = {
  listFlavors: { ...ops.listFlavors, params: IdParams },
  searchFlavors: { ...ops.searchFlavors, params: IdParams },
  createFlavor: { ...ops.createFlavor, params: IdParams },
  getFlavor: ops.getFlavor,
  getFlavorSite,
  updateFlavor: ops.updateFlavor,
  deleteFlavor: ops.deleteFlavor,
  approveFlavor: ops.approveFlavor,
  rejectFlavor: ops.rejectFlavor,
};
