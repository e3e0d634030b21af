/**
 * Writes the table of settings into docs/configuration.md from their declarations
 * (packages/server/src/settings.ts) (`npm run gen:settings`), or with --check fails when the
 * committed table differs from what the declarations give (`npm run check:settings`, run by CI).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../packages/server/src/settings-docs.ts';

const target = new URL('../docs/configuration.md', import.meta.url);
const committed = readFileSync(target, 'utf8');
const text = withSettingsTable(committed);

if (process.argv.includes('--check')) {
  if (committed !== text) {
    console.error('The settings table of docs/configuration.md is stale: run `npm run gen:settings` and commit the result.');
    process.exit(1);
  }
  console.log('docs/configuration.md is up to date.');
} else {
  writeFileSync(target, text);
  console.log('wrote the settings table of docs/configuration.md');
}
