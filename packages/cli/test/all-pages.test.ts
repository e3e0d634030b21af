/**
 * `--all` follows every page by cursor (the SDK's iterator): a list longer than the server's
 * page-depth limit (10,000 results by page number) is printed whole, exit 0. The real executable
 * against a real server with more than 10,000 results.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from '../../server/test/support/harness.ts';
import { createSeeder } from '../../server/test/support/seed.ts';
import { lines, sandbox, type Sandbox } from './support/cli.ts';

const ROWS = 10_120;

let t: TestServer;
let box: Sandbox;
let benchmark: string;

test.before(async () => {
  t = await startTestServer({}, 'cli_all_pages');
  box = await sandbox();
  const seed = await createSeeder(t);
  const site = await seed.site({ name: 'Deep Site' });
  const flavor = await seed.flavor(site.id, { name: 'deep.large' });
  benchmark = (await seed.benchmark({ image: 'ghcr.io/cli/deep', tag: '1.0' })).id;
  await seed.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?, jsonb_build_object('score', g % 89, 'note', 'a, "quoted" value'),
       timestamptz '2025-01-01Z' + (g % 500) * interval '1 second', now(), ?, ?, false, false
     from generate_series(1, ?::int) g`,
    [benchmark, site.id, flavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub, ROWS],
  );
  await seed.sql('analyze result');
});

test.after(async () => {
  await box?.cleanup();
  await t?.close();
});

test('results list --all -o csv past 10,000 results: every row once, exit 0, nothing on stderr', async () => {
  const res = await box.run(['results', 'list', '--server', t.url, '--benchmark', 'ghcr.io/cli/deep:1.0', '--all', '-o', 'csv']);
  assert.is(res.code, 0, res.stderr);
  assert.is(res.stderr, '');
  const rows = lines(res.stdout);
  assert.match(rows[0]!, /^id,benchmark,site,flavor,/);
  assert.is(rows.length, ROWS + 1, 'a header and one line per result');
  const ids = rows.slice(1).map((line) => line.slice(0, line.indexOf(',')));
  assert.is(new Set(ids).size, ROWS, 'no result twice');
  assert.ok(ids.every((id) => /^[0-9a-f-]{36}$/.test(id)));
  const stored = await t.request('GET', '/results', { query: { benchmark_id: benchmark, per_page: 1 } });
  assert.is(stored.body.total, ROWS);
});

test.run();
