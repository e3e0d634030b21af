/** What the API answers for each catalogue row (SPEC.md); results embed the same views. */
import type { BenchmarkRow, FlavorRow, SiteRow, TagRow } from '../../entities/catalogue.ts';
import { formatTimestamp } from '../../core/format.ts';

export function benchmarkView(row: BenchmarkRow) {
  return {
    id: row.id,
    name: `${row.container_image}:${row.container_tag}`,
    container_image: row.container_image,
    container_tag: row.container_tag,
    // The origin service's names, which its frontend reads (docs/decisions.md): the same values.
    docker_image: row.container_image,
    docker_tag: row.container_tag,
    json_schema: row.json_schema,
    description: row.description ?? null,
    url: row.url ?? null,
    status: row.status as 'on_review' | 'approved',
    upload_datetime: formatTimestamp(row.upload_datetime),
  };
}

export function siteView(row: SiteRow) {
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    description: row.description ?? null,
    status: row.status as 'on_review' | 'approved',
    upload_datetime: formatTimestamp(row.upload_datetime),
  };
}

export function flavorView(row: FlavorRow) {
  return {
    id: row.id,
    site_id: row.site_id,
    name: row.name,
    description: row.description ?? null,
    // numeric: a string when read by SQL (embeds), a number through the entity.
    price_per_hour: row.price_per_hour == null ? null : Number(row.price_per_hour),
    currency: row.currency ?? null,
    status: row.status as 'on_review' | 'approved',
    upload_datetime: formatTimestamp(row.upload_datetime),
  };
}

/** SPEC.md: tag responses carry no upload_datetime. */
export function tagView(row: TagRow) {
  return {
    id: row.id,
    name: row.name,
    description: row.description ?? null,
    status: row.status as 'on_review' | 'approved',
  };
}
