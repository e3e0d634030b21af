import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { ListQuery, Page, Terms, Timestamp, UploadBounds, Uuid } from './common.ts';

export const ResourceType = Type.Union([Type.Literal('benchmark'), Type.Literal('site'), Type.Literal('flavor'), Type.Literal('tag')], {
  description: 'Kind of the submitted item.',
});

/**
 * A user as administrators see it (SPEC.md's User), also as the uploader in administrator views; a
 * removed user has no email left. Public responses never carry it (they show an Uploader).
 */
export const UserAdmin = Type.Object(
  {
    iss: Type.String({ description: 'OIDC issuer.' }),
    sub: Type.String({ description: 'OIDC subject.' }),
    email: Type.Union([Type.String(), Type.Null()], {
      description: 'null when the user gave none, and once the user is removed.',
    }),
    registration_datetime: Timestamp,
    terms_version: Type.String({ description: 'Version of the terms of use the user accepted.' }),
    removed: Type.Boolean({ description: 'Removed by an administrator: personal data erased, uploads kept.' }),
  },
  { $id: 'UserAdmin' },
);

/** An item waiting for review, with its uploader as a user, email included (administrators only). */
export const Submit = Type.Object(
  {
    resource_type: ResourceType,
    resource_id: Uuid,
    upload_datetime: Timestamp,
    uploader: UserAdmin,
  },
  { $id: 'Submit' },
);

export const SubmitSort = { fields: ['resource_type', 'upload_datetime', 'resource_id'] as const, default: '+upload_datetime' };
export const UserSort = { fields: ['iss', 'sub', 'email', 'registration_datetime'] as const, default: '+iss,+sub' };

const UserAdminPage = Page(UserAdmin, 'UserAdminPage');

const Selector = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description }));
/** Who a user is; with an email, what the list and the removal select by (a removed user has no email left). */
const Identity = { iss: Selector('Exact issuer.'), sub: Selector('Exact subject.') };
const UserSelectors = { ...Identity, email: Selector('Exact email.') };
const Users = { tag: 'users', auth: 'admin' } as const;

export const listSubmits = defineOperation({
  operationId: 'listSubmits',
  method: 'GET',
  path: '/reports/submits',
  tag: 'reports',
  summary: 'Items waiting for review',
  description:
    'Benchmarks, sites, flavors and tags on review, with their uploader (email included). Approve or reject each by its own path.',
  auth: 'admin',
  query: ListQuery({ resource_type: Type.Optional(ResourceType), ...UploadBounds }, SubmitSort),
  response: { status: 200, schema: Page(Submit, 'SubmitPage') },
});

export const listUsers = defineOperation({
  ...Users,
  operationId: 'listUsers',
  method: 'GET',
  path: '/users',
  summary: 'List users',
  description: 'Exact filters on iss, sub and email. Removed users are listed, without email.',
  query: ListQuery(UserSelectors, UserSort),
  response: { status: 200, schema: UserAdminPage },
});

export const searchUsers = defineOperation({
  ...Users,
  operationId: 'searchUsers',
  method: 'GET',
  path: '/users:search',
  summary: 'Search users',
  description: 'Every term must occur (case-insensitive) in the email or the subject.',
  query: ListQuery({ terms: Type.Optional(Terms) }, UserSort),
  response: { status: 200, schema: UserAdminPage },
});

export const removeUsers = defineOperation({
  ...Users,
  operationId: 'removeUsers',
  method: 'POST',
  path: '/users:remove',
  summary: 'Remove users: erase their personal data, keep their uploads',
  description:
    'Removes every user matching all the given selectors (at least one, else 422 SELECTOR_REQUIRED): the email ' +
    'is erased and the user can no longer act as registered, nor register again (403 USER_REMOVED) until an ' +
    'administrator restores it (POST /users:restore). What they uploaded stays, shown with `removed: true`. ' +
    '204 also when nothing matches.',
  query: Type.Object(UserSelectors, { additionalProperties: false }),
  response: { status: 204, schema: null },
});

export const restoreUsers = defineOperation({
  ...Users,
  operationId: 'restoreUsers',
  method: 'POST',
  path: '/users:restore',
  summary: 'Restore removed users: they are registered again',
  description:
    'Restores every removed user matching all the given selectors (at least one, else 422 SELECTOR_REQUIRED; the ' +
    'email of a removed user is erased, so it is no selector). They are registered again with the terms they ' +
    'accepted, without an email until they refresh it (POST /users/self:update). 204 also when nothing matches.',
  query: Type.Object(Identity, { additionalProperties: false }),
  response: { status: 204, schema: null },
});

export const adminOperations = { listSubmits, listUsers, searchUsers, removeUsers, restoreUsers };
