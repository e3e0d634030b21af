import { Migration } from '@mikro-orm/migrations';

/**
 * Watches and their change records (docs/alerts.md). A record is one change point of one group's
 * series under one watch's parameters: (watch_id, result_id) identifies it. `decision` is what its
 * owner said (open, acknowledged, dismissed); `gone` that the latest segmentation no longer finds
 * it, which it leaves when found again, its decision kept. `watch_group` remembers which groups of a
 * watch were announced stale.
 */
export class Migration20261202010000_watches extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table watch (
        id uuid primary key,
        owner_iss text not null,
        owner_sub text not null,
        benchmark_id uuid not null references benchmark (id) on delete cascade,
        metric text not null,
        group_by text not null check (group_by in ('flavor', 'site')),
        filters jsonb not null,
        better text check (better in ('higher', 'lower')),
        max_pvalue float8 not null,
        min_magnitude float8 not null,
        min_size int not null,
        stale_after interval,
        created_datetime timestamptz not null default now(),
        foreign key (owner_iss, owner_sub) references app_user (iss, sub) on delete cascade
      );`);
    this.addSql('create index watch_owner_idx on watch (owner_iss, owner_sub);');
    this.addSql('create index watch_benchmark_idx on watch (benchmark_id);');
    this.addSql(`
      create table change_record (
        id uuid primary key,
        watch_id uuid not null references watch (id) on delete cascade,
        result_id uuid not null,
        site jsonb not null,
        flavor jsonb,
        at timestamptz not null,
        before jsonb not null,
        after jsonb not null,
        magnitude float8,
        pvalue float8 not null,
        direction text not null check (direction in ('regression', 'improvement')),
        first_seen_datetime timestamptz not null default now(),
        decision text not null default 'open' check (decision in ('open', 'acknowledged', 'dismissed')),
        gone boolean not null default false,
        decided_iss text,
        decided_sub text,
        decided_datetime timestamptz,
        note text,
        unique (watch_id, result_id)
      );`);
    this.addSql('create index change_record_feed_idx on change_record (first_seen_datetime desc, at desc, id desc);');
    this.addSql(`
      create table watch_group (
        watch_id uuid not null references watch (id) on delete cascade,
        group_id uuid not null,
        stale boolean not null default false,
        primary key (watch_id, group_id)
      );`);
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists watch_group;');
    this.addSql('drop table if exists change_record;');
    this.addSql('drop table if exists watch;');
  }
}
