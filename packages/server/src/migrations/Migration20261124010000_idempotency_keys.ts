import { Migration } from '@mikro-orm/migrations';

/**
 * Idempotency keys of creating requests (`Idempotency-Key`, src/http/idempotency.ts): one row per
 * uploader and key, written in the transaction that stores what the request created, holding the
 * answer it gave. Rows are kept 24 h and purged lazily (by `created_datetime`). No foreign key to
 * app_user: a key lives a day and is never joined, and the insert then takes no lock on the user row.
 */
export class Migration20261124010000_idempotency_keys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table idempotency_key (
        uploader_iss text not null,
        uploader_sub text not null,
        key text not null,
        operation_id text not null,
        request_hash text not null,
        response_status smallint not null,
        response_body text not null,
        created_datetime timestamptz not null,
        primary key (uploader_iss, uploader_sub, key)
      );`);
    this.addSql(`create index idempotency_key_created_datetime_index on idempotency_key (created_datetime);`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists idempotency_key;`);
  }
}
