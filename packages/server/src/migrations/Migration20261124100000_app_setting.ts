import { Migration } from '@mikro-orm/migrations';

/**
 * Settings the service keeps in its database, one row per name: facts about the database itself
 * that must survive a restart and follow the data, not the process. The demo records here that it
 * decided once whether to seed its sample catalogue (`demo_catalogue`), written in the transaction
 * that seeds it, so that a catalogue emptied later is never seeded again.
 */
export class Migration20261124100000_app_setting extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table app_setting (
        name text primary key,
        value text not null,
        set_datetime timestamptz not null default now()
      );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists app_setting;`);
  }
}
