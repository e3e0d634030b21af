import { Type } from '@sinclair/typebox';
import { defineOperation } from './operation.ts';

export const Health = Type.Object({ status: Type.Literal('ok'), version: Type.String() }, { $id: 'Health' });
export const Ready = Type.Object(
  { status: Type.Literal('ready'), database: Type.Literal('ok'), migrations: Type.Literal('applied') },
  { $id: 'Ready' },
);

export const getHealth = defineOperation({
  operationId: 'getHealth',
  method: 'GET',
  path: '/health',
  tag: 'service',
  summary: 'Liveness: the process answers (does not touch the database)',
  auth: 'none',
  response: { status: 200, schema: Health },
});

export const getReady = defineOperation({
  operationId: 'getReady',
  method: 'GET',
  path: '/ready',
  tag: 'service',
  summary: 'Readiness: the database is reachable and every migration is applied',
  auth: 'none',
  response: { status: 200, schema: Ready },
  errors: [503],
});

export const getApiSpec = defineOperation({
  operationId: 'getApiSpec',
  method: 'GET',
  path: '/api-spec.json',
  tag: 'service',
  summary: 'This OpenAPI 3.1 document (also served at /api-spec.json)',
  auth: 'none',
  response: { status: 200, schema: Type.Object({ openapi: Type.String() }, { additionalProperties: true }) },
});
