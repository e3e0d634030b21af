import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';

const Service = { method: 'GET', tag: 'service', auth: 'none' } as const;

export const Health = Type.Object({ status: Type.Literal('ok'), version: Type.String() }, { $id: 'Health' });
export const Ready = Type.Object(
  { status: Type.Literal('ready'), database: Type.Literal('ok'), migrations: Type.Literal('applied') },
  { $id: 'Ready' },
);

export const getHealth = defineOperation({
  ...Service,
  operationId: 'getHealth',
  path: '/health',
  summary: 'Liveness: the process answers (does not touch the database)',
  response: { status: 200, schema: Health },
});

export const getReady = defineOperation({
  ...Service,
  operationId: 'getReady',
  path: '/ready',
  summary: 'Readiness: the database is reachable and every migration is applied',
  response: { status: 200, schema: Ready },
  errors: [503],
});

export const getApiSpec = defineOperation({
  ...Service,
  operationId: 'getApiSpec',
  path: '/api-spec.json',
  summary: 'This OpenAPI 3.1 document (also served at /api-spec.json)',
  response: { status: 200, schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) },
});

export const AuthConfig = Type.Object(
  {
    issuers: Type.Array(Type.String(), { description: 'Trusted OpenID issuers: access tokens must come from one of them.' }),
    audience: Type.Union([Type.String(), Type.Null()], { description: 'Audience JWT access tokens must carry, if any.' }),
    device_client_id: Type.Union([Type.String(), Type.Null()], {
      description: 'Public OAuth client id for the device authorization grant (CLI login), if the operator configured one.',
    }),
    scopes: Type.String({ description: 'Scopes to request.' }),
    terms_url: Type.String(),
    terms_version: Type.String(),
  },
  { $id: 'AuthConfig' },
);

export const getAuthConfig = defineOperation({
  ...Service,
  operationId: 'getAuthConfig',
  path: '/auth/config',
  summary: 'How to obtain an access token: trusted issuers, the CLI client id, the terms of use',
  response: { status: 200, schema: AuthConfig },
});

export const systemOperations = { getHealth, getReady, getApiSpec, getAuthConfig };
