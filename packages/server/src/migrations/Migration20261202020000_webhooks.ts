import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook endpoints, and the deliveries of alert events to them (docs/webhooks.md). An event is
 * fanned out once (`alert_event.fanned_out`, set in the transaction that creates its deliveries);
 * each delivery is claimed by one process at a time (`for update skip locked`, then a lease in
 * `next_attempt_datetime`), and each of its attempts is logged.
 */
export class Migration20261202020000_webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table webhook_endpoint (
        id uuid primary key,
        user_iss text not null,
        user_sub text not null,
        url text not null,
        events text[] not null default '{change.detected,change.acknowledged,change.dismissed,series.stale,series.resumed}',
        format text not null default 'standard' check (format in ('standard', 'slack')),
        enabled boolean not null default true,
        disabled_reason text,
        secret text not null,
        previous_secret text,
        previous_secret_until timestamptz,
        created_datetime timestamptz not null default now(),
        foreign key (user_iss, user_sub) references app_user (iss, sub) on delete cascade
      );`);
    this.addSql('create index webhook_endpoint_user_idx on webhook_endpoint (user_iss, user_sub, created_datetime);');
    this.addSql('alter table alert_event add column fanned_out boolean not null default false;');
    this.addSql('create index alert_event_fan_out_idx on alert_event (created_datetime) where not fanned_out;');
    this.addSql(`
      create table webhook_delivery (
        id uuid primary key,
        event_id uuid not null references alert_event (id) on delete cascade,
        endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
        state text not null default 'pending' check (state in ('pending', 'succeeded', 'failed')),
        attempts integer not null default 0,
        first_attempt_datetime timestamptz,
        next_attempt_datetime timestamptz not null default now(),
        unique (event_id, endpoint_id)
      );`);
    this.addSql("create index webhook_delivery_due_idx on webhook_delivery (next_attempt_datetime) where state = 'pending';");
    this.addSql('create index webhook_delivery_endpoint_idx on webhook_delivery (endpoint_id);');
    this.addSql(`
      create table webhook_attempt (
        id uuid primary key,
        delivery_id uuid not null references webhook_delivery (id) on delete cascade,
        endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
        attempted_datetime timestamptz not null,
        status integer,
        duration_ms integer not null,
        response text not null,
        error text
      );`);
    this.addSql('create index webhook_attempt_endpoint_idx on webhook_attempt (endpoint_id, attempted_datetime, id);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists webhook_attempt;');
    this.addSql('drop table if exists webhook_delivery;');
    this.addSql('drop table if exists webhook_endpoint;');
    this.addSql('alter table alert_event drop column if exists fanned_out;');
  }
}
