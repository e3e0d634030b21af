import { Migration } from '@mikro-orm/migrations';

/**
 * Keeps result documents of up to about 4 KB in the table row instead of TOAST. With the default
 * target (2 KB) a typical 1.7 KB document plus its row is compressed and moved out of line, and every
 * JSON filter or sort reads it back through the TOAST index, once per path it evaluates: 3-4 times
 * slower at a million results (docs/performance.md). Rows written before this migration keep their
 * storage until rewritten (docs/deploy.md, "Upgrading").
 */
export class Migration20261123000000_inline_documents extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table result set (toast_tuple_target = 4080);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table result reset (toast_tuple_target);`);
  }
}
