import { Migration } from '@mikro-orm/migrations';

/**
 * The initial schema. Timestamps are timestamptz (UTC on the wire); statuses are text with a check.
 * Foreign keys restrict deletion: services decide what a delete cascades to, so nothing disappears
 * by accident.
 */
export class Migration20261122000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table app_user (
        iss text not null,
        sub text not null,
        email text null,
        registration_datetime timestamptz not null,
        terms_version text not null,
        removed_datetime timestamptz null,
        primary key (iss, sub)
      );`);
    const reviewed = `
        status text not null default 'on_review' check (status in ('on_review', 'approved')),
        upload_datetime timestamptz not null,
        uploader_iss text not null,
        uploader_sub text not null,
        foreign key (uploader_iss, uploader_sub) references app_user (iss, sub) on update cascade`;
    this.addSql(`
      create table benchmark (
        id uuid primary key,
        container_image text not null,
        container_tag text not null,
        json_schema jsonb not null,
        description text null,
        url text null,${reviewed},
        constraint benchmark_image_tag_unique unique (container_image, container_tag)
      );`);
    this.addSql(`
      create table site (
        id uuid primary key,
        name text not null,
        address text not null,
        description text null,${reviewed},
        constraint site_name_unique unique (name)
      );`);
    this.addSql(`
      create table flavor (
        id uuid primary key,
        site_id uuid not null references site (id),
        name text not null,
        description text null,${reviewed},
        constraint flavor_site_name_unique unique (site_id, name)
      );`);
    this.addSql(`
      create table tag (
        id uuid primary key,
        name text not null,
        description text null,${reviewed},
        constraint tag_name_unique unique (name)
      );`);
    this.addSql(`
      create table result (
        id uuid primary key,
        benchmark_id uuid not null references benchmark (id),
        site_id uuid not null references site (id),
        flavor_id uuid not null references flavor (id),
        json jsonb not null,
        execution_datetime timestamptz not null,
        upload_datetime timestamptz not null,
        uploader_iss text not null,
        uploader_sub text not null,
        deleted boolean not null default false,
        hidden boolean not null default false,
        foreign key (uploader_iss, uploader_sub) references app_user (iss, sub) on update cascade
      );`);
    this.addSql(`
      create table result_tag (
        result_id uuid not null references result (id) on delete cascade,
        tag_id uuid not null references tag (id),
        primary key (result_id, tag_id)
      );`);
    this.addSql(`
      create table claim (
        id uuid primary key,
        resource_type text not null default 'result' check (resource_type in ('result')),
        resource_id uuid not null references result (id) on delete cascade,
        message text not null,
        status text not null default 'on_review' check (status in ('on_review', 'approved')),
        upload_datetime timestamptz not null,
        uploader_iss text not null,
        uploader_sub text not null,
        foreign key (uploader_iss, uploader_sub) references app_user (iss, sub) on update cascade
      );`);

    // Lists of visible results, by each filter they are most often narrowed by, in the default order.
    this.addSql(`create index result_visible_execution_idx on result (execution_datetime, id) where not hidden;`);
    this.addSql(`create index result_visible_benchmark_idx on result (benchmark_id, execution_datetime, id) where not hidden;`);
    this.addSql(`create index result_visible_site_idx on result (site_id, execution_datetime, id) where not hidden;`);
    this.addSql(`create index result_visible_flavor_idx on result (flavor_id, execution_datetime, id) where not hidden;`);
    this.addSql(`create index result_upload_idx on result (upload_datetime, id);`);
    this.addSql(`create index result_uploader_idx on result (uploader_iss, uploader_sub, execution_datetime, id);`);
    this.addSql(`create index result_json_idx on result using gin (json jsonb_path_ops);`);
    this.addSql(`create index result_tag_tag_idx on result_tag (tag_id, result_id);`);
    this.addSql(`create index claim_resource_idx on claim (resource_id);`);
    this.addSql(`create index claim_uploader_idx on claim (uploader_iss, uploader_sub);`);
    this.addSql(`create index flavor_site_idx on flavor (site_id, name);`);
    for (const table of ['benchmark', 'site', 'flavor', 'tag']) {
      this.addSql(`create index ${table}_status_idx on ${table} (status, upload_datetime);`);
    }
  }

  override async down(): Promise<void> {
    for (const table of ['claim', 'result_tag', 'result', 'tag', 'flavor', 'site', 'benchmark', 'app_user']) {
      this.addSql(`drop table if exists ${table} cascade;`);
    }
  }
}
