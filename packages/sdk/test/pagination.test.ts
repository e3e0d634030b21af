/**
 * The list iterator walks by cursor: past the server's page-depth limit (MAX_PAGE_DEPTH, 10,000
 * results by page number), every result exactly once, in the list's order, whatever the sort; the
 * pages after the first send the cursor and no page number. Real server, real PostgreSQL, more
 * than 10,000 results.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, desc, type Client, type FetchLike } from '../src/index.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { createSeeder } from '../../server/test/support/seed.ts';

/** More than MAX_PAGE_DEPTH: page 101 of 100 is beyond what page numbers reach. */
const ROWS = 10_250;

let t: TestServer;
let client: Client;
let benchmark_id: string;
const sent: URL[] = [];

test.before(async () => {
  t = await startTestServer('sdk_pagination');
  const seed = await createSeeder(t);
  const site = await seed.site();
  const flavor = await seed.flavor(site.id);
  benchmark_id = (await seed.benchmark({ image: 'ghcr.io/sdk/deep' })).id;
  // Ties on both sort keys: 1,000 instants and 97 scores (and some results without a score).
  await seed.sql(
    `insert into result (id, benchmark_id, site_id, flavor_id, json, execution_datetime, upload_datetime, uploader_iss, uploader_sub, deleted, hidden)
     select gen_random_uuid(), ?, ?, ?, case when g % 50 = 0 then '{}'::jsonb else jsonb_build_object('score', g % 97) end,
       timestamptz '2025-01-01Z' + (g % 1000) * interval '1 minute', now(), ?, ?, false, false
     from generate_series(1, ?::int) g`,
    [benchmark_id, site.id, flavor.id, seed.owner.uploader_iss, seed.owner.uploader_sub, ROWS],
  );
  await seed.sql('analyze result');
  const recording: FetchLike = (url, init) => {
    sent.push(new URL(url));
    return globalThis.fetch(url, init);
  };
  client = createClient({ baseUrl: t.url, fetch: recording });
});

test.after(async () => {
  await client?.close();
  await t?.close();
});

test('for await over client.results.list(): every one of 10,250 results once, past page 100, the later pages by cursor', async () => {
  sent.length = 0;
  const ids: string[] = [];
  const times: string[] = [];
  for await (const r of client.results.list({ benchmark_id, per_page: 100 })) {
    ids.push(r.id);
    times.push(r.execution_datetime);
  }
  assert.is(ids.length, ROWS);
  assert.is(new Set(ids).size, ROWS, 'none twice');
  assert.equal(times, [...times].sort(), 'in execution order');
  assert.is(sent.length, 103, 'one request per page');
  assert.is(sent[0]!.searchParams.get('cursor'), null);
  for (const url of sent.slice(1)) {
    assert.ok(url.searchParams.get('cursor'), 'the next pages send the cursor');
    assert.is(url.searchParams.get('page'), null, '…and no page number');
    assert.is(url.searchParams.get('benchmark_id'), benchmark_id, '…with the query');
  }
});

test('.pages() over a JSON-path sort with ties and missing values: 103 pages in sequence, the last without next_cursor', async () => {
  const pages: { page: number; items: number; next: string | null; total: number }[] = [];
  const ids = new Set<string>();
  let previous = Number.POSITIVE_INFINITY;
  let missing = 0;
  for await (const page of client.results.list({ benchmark_id, per_page: 100, sort_by: [desc('json.score')] }).pages()) {
    pages.push({ page: page.page, items: page.items.length, next: page.next_cursor, total: page.total });
    for (const r of page.items) {
      ids.add(r.id);
      const score = r.json.score as number | undefined;
      if (score === undefined) missing++;
      else {
        assert.is(missing, 0, 'results without a score come last');
        assert.ok(score <= previous, 'descending');
        previous = score;
      }
    }
  }
  assert.is(ids.size, ROWS);
  assert.is(missing, Math.floor(ROWS / 50));
  assert.equal(
    pages.map((p) => p.page),
    Array.from({ length: 103 }, (_, i) => i + 1),
  );
  assert.ok(pages.every((p) => p.total === ROWS));
  assert.is(pages.at(-1)!.next, null);
  assert.is(pages.at(-1)!.items, 50);
});

test('a walk starts at the page asked for and goes on by cursor beyond page 100; toArray stops at its bound', async () => {
  const rest = await client.results.list({ benchmark_id, per_page: 100, page: 60 }).toArray({ max: 20_000 });
  assert.is(rest.length, ROWS - 5_900);
  assert.is(new Set(rest.map((r) => r.id)).size, rest.length);
  const bounded = await client.results.list({ benchmark_id, per_page: 100 }).toArray({ max: 10_050 });
  assert.is(bounded.length, 10_050);
});

test.run();
