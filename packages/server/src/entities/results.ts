import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { reviewedColumns } from './uploaded.ts';

export const Result = defineEntity({
  name: 'Result',
  tableName: 'result',
  properties: {
    id: p.uuid().primary(),
    benchmark_id: p.uuid(),
    site_id: p.uuid(),
    flavor_id: p.uuid(),
    json: p.json<Record<string, unknown>>(),
    execution_datetime: p.datetime(),
    upload_datetime: p.datetime(),
    uploader_iss: p.text(),
    uploader_sub: p.text(),
    /** Deleted by an administrator: kept in the database, left out of every default list. */
    deleted: p.boolean().default(false),
    /** Left out of default lists: deleted, or under an open or upheld claim. Maintained by the claims service. */
    hidden: p.boolean().default(false),
  },
});
export type ResultRow = InferEntity<typeof Result>;

export const ResultTag = defineEntity({
  name: 'ResultTag',
  tableName: 'result_tag',
  properties: {
    result_id: p.uuid().primary(),
    tag_id: p.uuid().primary(),
  },
});
export type ResultTagRow = InferEntity<typeof ResultTag>;

export const Claim = defineEntity({
  name: 'Claim',
  tableName: 'claim',
  properties: {
    id: p.uuid().primary(),
    resource_type: p.text().default('result'),
    resource_id: p.uuid(),
    message: p.text(),
    ...reviewedColumns(),
  },
});
export type ClaimRow = InferEntity<typeof Claim>;
