/**
 * Writes docs/openapi.json from the contract (`npm run gen:openapi`), or with --check fails when the
 * committed document differs from what the contract produces (`npm run check:openapi`, run by CI).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { operations } from '@benchmarks/sdk/contract';
import { buildOpenApi } from '../packages/server/src/http/openapi.ts';
import { DEFAULTS } from '../packages/server/src/config.ts';
import { VERSION } from '../packages/server/src/version.ts';

const target = new URL('../docs/openapi.json', import.meta.url);
const doc = buildOpenApi(operations, {
  origin: '',
  version: VERSION,
  termsUrl: DEFAULTS.termsUrl,
  termsVersion: DEFAULTS.termsVersion,
});
const text = `${JSON.stringify(doc, null, 2)}\n`;

if (process.argv.includes('--check')) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // missing counts as stale
  }
  if (committed !== text) {
    console.error('docs/openapi.json is stale: run `npm run gen:openapi` and commit the result.');
    process.exit(1);
  }
  console.log('docs/openapi.json is up to date.');
} else {
  writeFileSync(target, text);
  console.log(`wrote docs/openapi.json (${Object.keys(operations).length} operations)`);
}
