/**
 * The operations every reviewed catalogue resource has (list, search, get, create, update, delete,
 * approve, reject), declared once: a resource module gives its schemas and the sentences that differ.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { IdempotencyHeaders, IdParams, ListQuery, Page, Terms } from './common.ts';
import { DeleteQuery, ReviewFilters } from './catalogue-schemas.ts';
import { defineOperation, type TAGS } from './operation.ts';

export interface ReviewedDef<N extends string, I extends TSchema, C extends TSchema, U extends TSchema, F extends Record<string, TSchema>> {
  /** `Site`: the operations are `listSites`, `getSite`, … */
  name: N;
  tag: keyof typeof TAGS;
  item: I;
  input: C;
  update: U;
  sort: { fields: readonly string[]; default: string };
  /** The exact filters of the list. */
  filters: F;
  /** Flavors: list, search and create are under their site, `/sites/{id}/flavors`. */
  inSite?: boolean;
  text: {
    /** The list's filters, e.g. `Exact filter on name`. */
    list: string;
    /** What search terms are looked for in, e.g. `the name or the description`. */
    search: string;
    /** After "Ordered as the list", e.g. ` (default image, tag, id) unless sort_by says otherwise`. */
    order?: string;
    create: string;
    /** [what becomes null, what is kept, the read-only fields]. */
    update: readonly [absent: string, kept: string, readOnly: string];
    delete: string;
    /** Before "An approved …: 409 ALREADY_APPROVED." */
    approve?: string;
    /** Replaces the reject's description. */
    reject?: string;
  };
}

/** Operations keyed by their operationId (`listSites`, `getSite`, …), in the order declared. */
type ByOperationId<O extends Record<string, { operationId: string }>> = { [V in keyof O as O[V]['operationId']]: O[V] };

export function reviewedOperations<
  const N extends string,
  I extends TSchema,
  C extends TSchema,
  U extends TSchema,
  F extends Record<string, TSchema>,
>(d: ReviewedDef<N, I, C, U, F>) {
  const one = d.name.toLowerCase();
  const many = `${one}s`;
  const site = d.inSite ? { prefix: "a site's ", path: `/sites/{id}/${many}`, unknown: ' Unknown site: 404.' } : undefined;
  const collection = site?.path ?? `/${many}`;
  const item = `/${many}/{id}`;
  const common = { tag: d.tag, params: IdParams, errors: [409] as const };
  const page = Page(d.item, `${d.name}Page`);
  const decided = { method: 'POST', auth: 'admin', response: { status: 204, schema: null } } as const;
  const ops = {
    list: defineOperation({
      operationId: `list${d.name}s`,
      method: 'GET',
      path: collection,
      tag: d.tag,
      summary: `List ${site?.prefix ?? ''}${many}`,
      description: `${d.text.list}; approved ${many} unless \`status\` asks otherwise.${site?.unknown ?? ''}`,
      auth: 'none',
      query: ListQuery({ ...d.filters, ...ReviewFilters }, d.sort),
      response: { status: 200, schema: page },
    }),
    search: defineOperation({
      operationId: `search${d.name}s`,
      method: 'GET',
      path: `${collection}:search`,
      tag: d.tag,
      summary: `Search ${site?.prefix ?? ''}${many}`,
      description: `Every term must occur (case-insensitive) in ${d.text.search}. Ordered as the list${d.text.order ?? ''}.`,
      auth: 'none',
      query: ListQuery({ terms: Type.Optional(Terms), ...ReviewFilters }, d.sort),
      response: { status: 200, schema: page },
    }),
    create: defineOperation({
      operationId: `create${d.name}`,
      method: 'POST',
      path: collection,
      tag: d.tag,
      summary: `Submit a ${one}${site ? ' of a site' : ''} for review`,
      description: d.text.create,
      auth: 'user',
      headers: IdempotencyHeaders,
      body: d.input,
      response: { status: 201, schema: d.item },
      errors: common.errors,
    }),
    get: defineOperation({
      operationId: `get${d.name}`,
      method: 'GET',
      path: item,
      tag: d.tag,
      summary: `One ${one}, whatever its status`,
      auth: 'none',
      params: IdParams,
      response: { status: 200, schema: d.item },
    }),
    update: defineOperation({
      operationId: `update${d.name}`,
      method: 'PUT',
      path: item,
      summary: `Replace the editable fields of a ${one}`,
      description:
        `The body is the creation body; ${d.text.update[0]}. ${d.text.update[1]} are kept. The body may also carry ` +
        `the read-only fields (${d.text.update[2]}) as read: ignored when equal to the stored values, 422 INVALID_BODY naming the ` +
        'field when not.',
      auth: 'admin',
      ...common,
      body: d.update,
      response: { status: 200, schema: d.item },
    }),
    delete: defineOperation({
      operationId: `delete${d.name}`,
      method: 'DELETE',
      path: item,
      summary: `Delete a ${one}`,
      description: d.text.delete,
      auth: 'admin',
      ...common,
      query: DeleteQuery,
      response: { status: 204, schema: null },
    }),
    approve: defineOperation({
      operationId: `approve${d.name}`,
      path: `${item}:approve`,
      summary: `Approve a ${one} on review`,
      description: `${d.text.approve ?? ''}An approved ${one}: 409 ALREADY_APPROVED.`,
      ...decided,
      ...common,
    }),
    reject: defineOperation({
      operationId: `reject${d.name}`,
      path: `${item}:reject`,
      summary: `Reject (delete) a ${one} on review`,
      description: d.text.reject ?? `An approved ${one}: 409 ALREADY_APPROVED (use DELETE).`,
      ...decided,
      ...common,
    }),
  };
  return Object.fromEntries(Object.values(ops).map((op) => [op.operationId, op])) as ByOperationId<typeof ops>;
}
