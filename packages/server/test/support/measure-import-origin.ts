/**
 * Measures `import-origin` (not a test: figures for docs/migrating.md): generates a database of the
 * original service with N results (default 100,000; about 400 bytes of JSON each, a tag on a third
 * of them), imports it into a migrated database, then imports it again (everything already there),
 * and prints results per second and the heap at each tenth of the results (after a full garbage
 * collection: what the import holds, not what the collector has not reclaimed yet).
 *
 *   node --expose-gc --import ./scripts/dev/register.js packages/server/test/support/measure-import-origin.ts [N]
 *
 * TEST_DATABASE_URL names a cluster to use; without it an embedded one is started and removed.
 */
import { buildConfig } from '../../src/config.ts';
import { createLogger } from '../../src/core/logger.ts';
import { importOrigin, type ProgressEvent } from '../../src/import-origin/import.ts';
import { prepareDatabase } from '../../src/db/bootstrap.ts';
import { createMigratedTestDatabase, releaseTestDatabase } from './database.ts';
import { createOriginDatabase, generateCatalogue, generateResults, withClient } from './origin-database.ts';

const count = Number(process.argv[2] ?? 100_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run node with --expose-gc');
const mb = (bytes: number) => Math.round(bytes / 1024 / 1024);

async function run(from: string, to: string, label: string): Promise<void> {
  const heapAt: number[] = [];
  const onProgress = (e: ProgressEvent) => {
    if (e.kind !== 'results' || !e.total) return;
    const decile = Math.floor((10 * e.done) / e.total);
    if (heapAt[decile] !== undefined) return;
    gc!();
    heapAt[decile] = mb(process.memoryUsage().heapUsed);
  };
  const summary = await importOrigin({ from, to, onProgress });
  const r = summary.kinds.results;
  console.log(
    `${label}: ${r.imported} imported, ${r.skipped} skipped in ${summary.seconds} s: ${Math.round(count / summary.seconds)} results/s; ` +
      `heap after a collection at each tenth of the results (MB): ${heapAt.join(' ')}; rss ${mb(process.memoryUsage().rss)} MB`,
  );
}

const source = await createOriginDatabase('origin_measure');
const generating = performance.now();
await withClient(source, async (c) => {
  const catalogue = await generateCatalogue(c);
  for (let done = 0; done < count; done += 100_000) await generateResults(c, catalogue, Math.min(100_000, count - done));
  await c.query('analyze');
});
console.log(`generated ${count} results in ${Math.round(performance.now() - generating) / 1000} s`);
const target = await createMigratedTestDatabase('import_measure');
const { close } = await prepareDatabase(buildConfig({ databaseUrl: target, logLevel: 'silent' }), createLogger('silent'));
await close();
await run(source, target, 'first run');
await run(source, target, 'second run');
await releaseTestDatabase();
await releaseTestDatabase();
