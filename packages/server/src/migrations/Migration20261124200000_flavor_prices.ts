import { Migration } from '@mikro-orm/migrations';

/**
 * Flavor prices (COMPARE.md "Flavor prices"): an optional hourly price and its ISO 4217 currency,
 * set together or not at all. `numeric` keeps the decimal an operator typed (0.12 stays 0.12, not
 * 0.11999…); the API answers it as a JSON number.
 */
export class Migration20261124200000_flavor_prices extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table flavor
        add column price_per_hour numeric null,
        add column currency text null,
        add constraint flavor_price_with_currency check ((price_per_hour is null) = (currency is null)),
        add constraint flavor_price_not_negative check (price_per_hour >= 0),
        add constraint flavor_currency_iso check (currency ~ '^[A-Z]{3}$');`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table flavor drop column if exists price_per_hour, drop column if exists currency;`);
  }
}
