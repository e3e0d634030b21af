import { Migration } from '@mikro-orm/migrations';

/**
 * The outbox of alerts (docs/alerts.md): one row per event for one user, written in the transaction
 * that creates or changes what it is about (a change record, a stale series), so that a crash loses
 * none. Its id is the event's `webhook-id` at every delivery of it; deliveries read it from here.
 */
export class Migration20261202000000_alert_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table alert_event (
        id uuid primary key,
        user_iss text not null,
        user_sub text not null,
        type text not null check (type in ('change.detected', 'change.acknowledged', 'change.dismissed', 'series.stale', 'series.resumed')),
        data jsonb not null,
        created_datetime timestamptz not null default now(),
        foreign key (user_iss, user_sub) references app_user (iss, sub) on delete cascade
      );`);
    this.addSql('create index alert_event_user_idx on alert_event (user_iss, user_sub, created_datetime);');
  }

  override async down(): Promise<void> {
    this.addSql('drop table if exists alert_event;');
  }
}
