import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { reviewedColumns } from './uploaded.ts';

export const Benchmark = defineEntity({
  name: 'Benchmark',
  tableName: 'benchmark',
  properties: {
    id: p.uuid().primary(),
    container_image: p.text(),
    container_tag: p.text(),
    json_schema: p.json<Record<string, unknown> | boolean>(),
    description: p.text().nullable(),
    url: p.text().nullable(),
    ...reviewedColumns(),
  },
});
export type BenchmarkRow = InferEntity<typeof Benchmark>;

export const Site = defineEntity({
  name: 'Site',
  tableName: 'site',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    address: p.text(),
    description: p.text().nullable(),
    ...reviewedColumns(),
  },
});
export type SiteRow = InferEntity<typeof Site>;

export const Flavor = defineEntity({
  name: 'Flavor',
  tableName: 'flavor',
  properties: {
    id: p.uuid().primary(),
    site_id: p.uuid(),
    name: p.text(),
    description: p.text().nullable(),
    price_per_hour: p.decimal('number').nullable(),
    currency: p.text().nullable(),
    ...reviewedColumns(),
  },
});
export type FlavorRow = InferEntity<typeof Flavor>;

export const Tag = defineEntity({
  name: 'Tag',
  tableName: 'tag',
  properties: {
    id: p.uuid().primary(),
    name: p.text(),
    description: p.text().nullable(),
    ...reviewedColumns(),
  },
});
export type TagRow = InferEntity<typeof Tag>;
