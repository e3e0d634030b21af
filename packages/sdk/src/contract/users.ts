import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';
import { Timestamp } from './common.ts';

export const User = Type.Object(
  {
    sub: Type.String({ description: 'OIDC subject.' }),
    iss: Type.String({ description: 'OIDC issuer.' }),
    email: Type.Union([Type.String(), Type.Null()], { description: 'Taken from the access token or userinfo.' }),
    registration_datetime: Timestamp,
    terms_version: Type.String({ description: 'Version of the terms of use the user accepted.' }),
  },
  { $id: 'User' },
);

export const registerSelf = defineOperation({
  operationId: 'registerSelf',
  method: 'POST',
  path: '/users:register',
  tag: 'users',
  summary: 'Register the caller',
  description:
    'Registers the identity (iss, sub) of the access token. Calling it means accepting the terms of use ' +
    '(see the API description for their URL and version). A second call gives 409. A user removed by an ' +
    'administrator cannot register again (403 USER_REMOVED) unless an administrator restores it.',
  auth: 'token',
  response: { status: 201, schema: User },
  errors: [401, 403, 409],
});

export const upsertSelf = defineOperation({
  operationId: 'upsertSelf',
  method: 'POST',
  path: '/users/self',
  tag: 'users',
  summary: 'Register the caller if needed and return the stored user',
  description:
    'Like /users:register, but returns the existing user (200) instead of 409 (201 when created). A removed user: 403 USER_REMOVED.',
  auth: 'token',
  response: { status: 200, schema: User },
  errors: [401, 403],
});

export const getSelf = defineOperation({
  operationId: 'getSelf',
  method: 'GET',
  path: '/users/self',
  tag: 'users',
  summary: 'The caller as registered',
  description: '404 when the caller is not registered: clients use it as the "is registered" probe.',
  auth: 'token',
  response: { status: 200, schema: User },
  errors: [401, 404],
});

export const updateSelf = defineOperation({
  operationId: 'updateSelf',
  method: 'POST',
  path: '/users/self:update',
  tag: 'users',
  summary: 'Refresh the stored email from the token',
  auth: 'user',
  response: { status: 204, schema: null },
  errors: [401, 403],
});

export const tryAdmin = defineOperation({
  operationId: 'tryAdmin',
  method: 'GET',
  path: '/users/self:try_admin',
  tag: 'users',
  summary: 'Probe: 204 when the caller is an administrator, 403 otherwise',
  auth: 'admin',
  response: { status: 204, schema: null },
  errors: [401, 403],
});

export const userOperations = { registerSelf, upsertSelf, getSelf, updateSelf, tryAdmin };
