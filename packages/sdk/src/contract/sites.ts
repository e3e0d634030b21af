import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Terms } from './common.ts';
import { DeleteQuery, NameInput, OptionalText, ReadOnlyEcho, ReviewFilters, Site } from './catalogue-schemas.ts';

const SiteFields = {
  name: NameInput('Human-readable institution name, unique.'),
  address: NameInput('Physical or virtual address shown to the community.', 500),
  description: OptionalText('Short description.'),
};

export const SiteInput = Type.Object(SiteFields, { $id: 'SiteInput', additionalProperties: false });

/** The body of an update: the creation body, and the site's read-only fields as a GET shows them. */
export const SiteUpdate = Type.Object(
  { ...SiteFields, ...ReadOnlyEcho(Site, ['id', 'status', 'upload_datetime']) },
  { $id: 'SiteUpdate', additionalProperties: false },
);

export const SiteSort = {
  fields: ['id', 'name', 'address', 'description', 'status', 'upload_datetime'] as const,
  default: '+name',
};

const SitePage = Page(Site, 'SitePage');

export const listSites = defineOperation({
  operationId: 'listSites',
  method: 'GET',
  path: '/sites',
  tag: 'sites',
  summary: 'List sites',
  description: 'Exact filters on name and address; approved sites unless `status` asks otherwise.',
  auth: 'none',
  query: ListQuery(
    {
      name: Type.Optional(Type.String({ maxLength: 200, description: 'Exact name.' })),
      address: Type.Optional(Type.String({ maxLength: 500, description: 'Exact address.' })),
      ...ReviewFilters,
    },
    SiteSort,
  ),
  response: { status: 200, schema: SitePage },
});

export const searchSites = defineOperation({
  operationId: 'searchSites',
  method: 'GET',
  path: '/sites:search',
  tag: 'sites',
  summary: 'Search sites',
  description: 'Every term must occur (case-insensitive) in the name, the address or the description. Ordered as the list.',
  auth: 'none',
  query: ListQuery({ terms: Type.Optional(Terms), ...ReviewFilters }, SiteSort),
  response: { status: 200, schema: SitePage },
});

export const getSite = defineOperation({
  operationId: 'getSite',
  method: 'GET',
  path: '/sites/{id}',
  tag: 'sites',
  summary: 'One site, whatever its status',
  auth: 'none',
  params: IdParams,
  response: { status: 200, schema: Site },
});

export const createSite = defineOperation({
  operationId: 'createSite',
  method: 'POST',
  path: '/sites',
  tag: 'sites',
  summary: 'Submit a site for review',
  description: 'The site starts on_review (approved at once when an administrator submits it). A taken name: 409 DUPLICATE.',
  auth: 'user',
  headers: IdempotencyHeaders,
  body: SiteInput,
  response: { status: 201, schema: Site },
  errors: [409],
});

export const updateSite = defineOperation({
  operationId: 'updateSite',
  method: 'PUT',
  path: '/sites/{id}',
  tag: 'sites',
  summary: 'Replace the editable fields of a site',
  description:
    'The body is the creation body; an absent description becomes null. Status and uploader are kept. The body may also carry ' +
    'the read-only fields (id, status, upload_datetime) as read: ignored when equal to the stored values, 422 INVALID_BODY naming the ' +
    'field when not.',
  auth: 'admin',
  params: IdParams,
  body: SiteUpdate,
  response: { status: 200, schema: Site },
  errors: [409],
});

export const deleteSite = defineOperation({
  operationId: 'deleteSite',
  method: 'DELETE',
  path: '/sites/{id}',
  tag: 'sites',
  summary: 'Delete a site',
  description:
    'A site with flavors or results: 409 REFERENCED (`count` results, `flavors`), unless `cascade=true`, which ' +
    'deletes its flavors and every result at the site too.',
  auth: 'admin',
  params: IdParams,
  query: DeleteQuery,
  response: { status: 204, schema: null },
  errors: [409],
});

export const approveSite = defineOperation({
  operationId: 'approveSite',
  method: 'POST',
  path: '/sites/{id}:approve',
  tag: 'sites',
  summary: 'Approve a site on review',
  description: 'Approves the site only, not its flavors. An approved site: 409 ALREADY_APPROVED.',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const rejectSite = defineOperation({
  operationId: 'rejectSite',
  method: 'POST',
  path: '/sites/{id}:reject',
  tag: 'sites',
  summary: 'Reject (delete) a site on review',
  description:
    'Its flavors on review go with it. An approved site: 409 ALREADY_APPROVED; a site with an approved flavor ' +
    'or with results: 409 REFERENCED (use DELETE with cascade).',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const siteOperations = {
  listSites,
  searchSites,
  getSite,
  createSite,
  updateSite,
  deleteSite,
  approveSite,
  rejectSite,
};
