import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Terms } from './common.ts';
import { DeleteQuery, NameInput, OptionalText, ReadOnlyEcho, ReviewFilters, Tag } from './catalogue-schemas.ts';

const TagFields = {
  name: NameInput('Human-readable feature name, unique.'),
  description: OptionalText('Context of the label.'),
};

export const TagInput = Type.Object(TagFields, { $id: 'TagInput', additionalProperties: false });

/** The body of an update: the creation body, and the tag's read-only fields as a GET shows them. */
export const TagUpdate = Type.Object(
  { ...TagFields, ...ReadOnlyEcho(Tag, ['id', 'status']) },
  { $id: 'TagUpdate', additionalProperties: false },
);

/** Tags carry no upload_datetime in responses, so it is no sort field (it still filters). */
export const TagSort = {
  fields: ['id', 'name', 'description', 'status'] as const,
  default: '+name',
};

const TagPage = Page(Tag, 'TagPage');

export const listTags = defineOperation({
  operationId: 'listTags',
  method: 'GET',
  path: '/tags',
  tag: 'tags',
  summary: 'List tags',
  description: 'Exact filter on name; approved tags unless `status` asks otherwise.',
  auth: 'none',
  query: ListQuery({ name: Type.Optional(Type.String({ maxLength: 200, description: 'Exact name.' })), ...ReviewFilters }, TagSort),
  response: { status: 200, schema: TagPage },
});

export const searchTags = defineOperation({
  operationId: 'searchTags',
  method: 'GET',
  path: '/tags:search',
  tag: 'tags',
  summary: 'Search tags',
  description: 'Every term must occur (case-insensitive) in the name or the description. Ordered as the list.',
  auth: 'none',
  query: ListQuery({ terms: Type.Optional(Terms), ...ReviewFilters }, TagSort),
  response: { status: 200, schema: TagPage },
});

export const getTag = defineOperation({
  operationId: 'getTag',
  method: 'GET',
  path: '/tags/{id}',
  tag: 'tags',
  summary: 'One tag, whatever its status',
  auth: 'none',
  params: IdParams,
  response: { status: 200, schema: Tag },
});

export const createTag = defineOperation({
  operationId: 'createTag',
  method: 'POST',
  path: '/tags',
  tag: 'tags',
  summary: 'Submit a tag for review',
  description:
    'The tag starts on_review (approved at once when an administrator submits it, or on a server started with REVIEW_TAGS=false). ' +
    'A taken name: 409 DUPLICATE.',
  auth: 'user',
  headers: IdempotencyHeaders,
  body: TagInput,
  response: { status: 201, schema: Tag },
  errors: [409],
});

export const updateTag = defineOperation({
  operationId: 'updateTag',
  method: 'PUT',
  path: '/tags/{id}',
  tag: 'tags',
  summary: 'Replace the editable fields of a tag',
  description:
    'The body is the creation body; an absent description becomes null. Status and uploader are kept. The body may also carry ' +
    'the read-only fields (id, status) as read: ignored when equal to the stored values, 422 INVALID_BODY naming the ' +
    'field when not.',
  auth: 'admin',
  params: IdParams,
  body: TagUpdate,
  response: { status: 200, schema: Tag },
  errors: [409],
});

export const deleteTag = defineOperation({
  operationId: 'deleteTag',
  method: 'DELETE',
  path: '/tags/{id}',
  tag: 'tags',
  summary: 'Delete a tag',
  description:
    'A tag carried by results: 409 REFERENCED with their `count`, unless `cascade=true`, which removes the tag ' +
    'from those results (the results stay).',
  auth: 'admin',
  params: IdParams,
  query: DeleteQuery,
  response: { status: 204, schema: null },
  errors: [409],
});

export const approveTag = defineOperation({
  operationId: 'approveTag',
  method: 'POST',
  path: '/tags/{id}:approve',
  tag: 'tags',
  summary: 'Approve a tag on review',
  description: 'An approved tag: 409 ALREADY_APPROVED.',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const rejectTag = defineOperation({
  operationId: 'rejectTag',
  method: 'POST',
  path: '/tags/{id}:reject',
  tag: 'tags',
  summary: 'Reject (delete) a tag on review',
  description: 'An approved tag: 409 ALREADY_APPROVED (use DELETE).',
  auth: 'admin',
  params: IdParams,
  response: { status: 204, schema: null },
  errors: [409],
});

export const tagOperations = {
  listTags,
  searchTags,
  getTag,
  createTag,
  updateTag,
  deleteTag,
  approveTag,
  rejectTag,
};
