import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261122000000_initial } from './Migration20261122000000_initial.ts';
import { Migration20261123000000_inline_documents } from './Migration20261123000000_inline_documents.ts';
import { Migration20261124010000_idempotency_keys } from './Migration20261124010000_idempotency_keys.ts';
import { Migration20261124100000_app_setting } from './Migration20261124100000_app_setting.ts';
import { Migration20261124200000_flavor_prices } from './Migration20261124200000_flavor_prices.ts';
import { Migration20261125000000_shared_state } from './Migration20261125000000_shared_state.ts';
import { Migration20261126000000_metric_values } from './Migration20261126000000_metric_values.ts';
import { Migration20261126010000_metric_value_lists } from './Migration20261126010000_metric_value_lists.ts';
import { Migration20261126030000_metric_values_moved } from './Migration20261126030000_metric_values_moved.ts';

/** Every migration, in order. A new migration file must be added here too. */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261122000000_initial', class: Migration20261122000000_initial },
  { name: 'Migration20261123000000_inline_documents', class: Migration20261123000000_inline_documents },
  { name: 'Migration20261124010000_idempotency_keys', class: Migration20261124010000_idempotency_keys },
  { name: 'Migration20261124100000_app_setting', class: Migration20261124100000_app_setting },
  { name: 'Migration20261124200000_flavor_prices', class: Migration20261124200000_flavor_prices },
  { name: 'Migration20261125000000_shared_state', class: Migration20261125000000_shared_state },
  { name: 'Migration20261126000000_metric_values', class: Migration20261126000000_metric_values },
  { name: 'Migration20261126010000_metric_value_lists', class: Migration20261126010000_metric_value_lists },
  { name: 'Migration20261126030000_metric_values_moved', class: Migration20261126030000_metric_values_moved },
];
