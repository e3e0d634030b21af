import type { OperationDef } from '@benchmarks/sdk/contract';
import { API_BASE_PATH, Problem, TAGS } from '@benchmarks/sdk/contract';
import { UNLIMITED_READS } from '../rate-limit/middleware.ts';

export interface OpenApiOptions {
  /** Where clients reach the service, without /api/v1; '' for a relative server URL. */
  origin: string;
  version: string;
  termsUrl: string;
  termsVersion: string;
}

type Json = Record<string, unknown>;

const ERROR_TEXT: Record<number, string> = {
  400: 'Malformed JSON body.',
  401: 'No access token, or an invalid, expired or untrusted one.',
  403: 'Not registered, not an administrator, or not the uploader.',
  404: 'No item with this id.',
  405: 'Method not allowed on this path.',
  409: 'Duplicate, the item is in the wrong state for this operation, or a request with the same Idempotency-Key is still being processed.',
  413: 'Body too large.',
  415: 'The body is not JSON.',
  422: 'Invalid parameters or body; `errors` lists each problem.',
  429: 'Too many requests; see Retry-After.',
  503: 'The database or an identity provider is unavailable, or the server is busy (statement timeout, too many expensive lists); retry after Retry-After.',
};

/** Moves every schema that has an $id into components and refers to it by $ref. */
class SchemaRegistry {
  readonly schemas: Record<string, Json> = {};
  ref(schema: unknown): unknown {
    return this.walk(schema);
  }
  private walk(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.walk(n));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Json;
    const id = typeof obj.$id === 'string' ? obj.$id : undefined;
    const copy: Json = {};
    for (const [k, v] of Object.entries(obj)) if (k !== '$id') copy[k] = this.walk(v);
    if (!id) return copy;
    if (!this.schemas[id]) this.schemas[id] = copy;
    return { $ref: `#/components/schemas/${id}` };
  }
}

function parameters(def: OperationDef, registry: SchemaRegistry): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ['path', def.params],
    ['query', def.query],
    ['header', def.headers],
  ] as const) {
    if (!schema) continue;
    const required = new Set((schema as { required?: string[] }).required ?? []);
    for (const [name, prop] of Object.entries((schema as { properties: Record<string, Json> }).properties)) {
      const { description, ...rest } = prop as Json;
      const param: Json = {
        name,
        in: where,
        required: where === 'path' || required.has(name),
        schema: registry.ref(rest),
      };
      if (description) param.description = description;
      if (rest.type === 'array') {
        param.style = 'form';
        param.explode = true;
      }
      out.push(param);
    }
  }
  return out;
}

function errorStatuses(def: OperationDef): number[] {
  const set = new Set<number>(def.errors ?? []);
  if (def.auth !== 'none') set.add(401);
  if (def.auth === 'user' || def.auth === 'admin') set.add(403);
  if (def.params) set.add(404);
  set.add(422); // an unknown query parameter, on every operation (the router's NO_QUERY)
  if (def.headers?.properties['Idempotency-Key']) set.add(409); // the same key still in progress
  if (def.body) {
    set.add(400);
    set.add(413);
    set.add(415);
  }
  if (!UNLIMITED_READS.has(def.operationId)) set.add(429); // reads and writes are rate limited per client
  return [...set].sort((a, b) => a - b);
}

export function buildOpenApi(operations: Record<string, OperationDef>, options: OpenApiOptions): Json {
  const registry = new SchemaRegistry();
  registry.ref(Problem);
  const paths: Record<string, Json> = {};
  for (const def of Object.values(operations)) {
    const responses: Json = {};
    const success: Json = { description: def.summary };
    if (def.response.schema) {
      success.content = { [def.response.contentType ?? 'application/json']: { schema: registry.ref(def.response.schema) } };
      for (const [type, schema] of Object.entries(def.response.alternatives ?? {}))
        (success.content as Json)[type] = { schema: registry.ref(schema) };
    }
    if (def.response.headers) {
      success.headers = Object.fromEntries(
        Object.entries(def.response.headers).map(([name, schema]) => {
          const { description, ...rest } = schema as Json;
          return [name, { ...(description ? { description } : {}), schema: registry.ref(rest) }];
        }),
      );
    }
    responses[String(def.response.status)] = success;
    for (const status of errorStatuses(def)) {
      responses[String(status)] = {
        description: ERROR_TEXT[status] ?? 'Error',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
    }
    const operation: Json = {
      operationId: def.operationId,
      tags: [def.tag],
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      parameters: parameters(def, registry),
      responses,
      // An empty requirement makes the token optional (OpenAPI 3.1, Security Requirement Object).
      security: def.auth === 'none' ? [] : def.auth === 'optional' ? [{}, { bearerAuth: [] }] : [{ bearerAuth: [] }],
      'x-auth': def.auth,
    };
    if (def.body) {
      operation.requestBody = { required: !def.bodyOptional, content: { 'application/json': { schema: registry.ref(def.body) } } };
    }
    paths[def.path] ??= {};
    paths[def.path]![def.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Benchmark Results API',
      version: options.version,
      summary: 'Store, search and compare results of containerised benchmarks run on many sites and flavors.',
      description:
        "Results of containerised benchmarks, uploaded by a community and validated against each benchmark's " +
        'JSON Schema. Reading is open; uploading needs an OpenID Connect access token of a registered user. ' +
        `Registering (POST /users:register) means accepting the terms of use, version ${options.termsVersion}: ` +
        `${options.termsUrl}. Every error is application/problem+json. ` +
        'To look rather than read: [the explorer](/explore) draws rankings, series and results from this API.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      'x-terms-of-use': { version: options.termsVersion, url: options.termsUrl },
    },
    servers: [{ url: `${options.origin}${API_BASE_PATH}` }],
    tags: [...new Set(Object.values(operations).map((o) => o.tag))].map((name) => ({ name, description: TAGS[name] })),
    paths,
    components: {
      schemas: registry.schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'An OpenID Connect access token from one of the trusted issuers.',
        },
      },
    },
  };
}
