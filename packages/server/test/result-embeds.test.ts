/**
 * Results embed their benchmark, site, flavor and tags from a per-process cache keyed by row
 * version (services/catalogue/embeds.ts): a change to a catalogue row shows in the very next response, also
 * when it was made behind this server's back (another process; here plain SQL). Real server, real
 * PostgreSQL.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, type Seeder } from './support/seed.ts';

let t: TestServer;
let seed: Seeder;
let ids: { benchmark: string; site: string; flavor: string; tag: string; other: string; result: string };

test.before(async () => {
  t = await startTestServer({}, 'embeds');
  seed = await createSeeder(t);
  const site = (await seed.site({ name: 'site-a' })).id;
  const flavor = (await seed.flavor(site, { name: 'flavor-a' })).id;
  const benchmark = (await seed.benchmark({ schema: { type: 'object' } })).id;
  const tag = (await seed.tag({ name: 'tag-b' })).id;
  const other = (await seed.tag({ name: 'tag-c' })).id;
  const [result] = await seed.results([
    {
      benchmark_id: benchmark,
      site_id: site,
      flavor_id: flavor,
      // biome-ignore lint/correctness/noPrecisionLoss: deliberate: an integer beyond 2^53 in the stored JSON, to check it comes back as JavaScript reads it
      json: { score: 1.5, nested: { big: 12345678901234567890 } },
      execution_datetime: new Date('2024-05-01T12:00:00Z'),
      tags: [other, tag],
    },
  ]);
  ids = { benchmark, site, flavor, tag, other, result: result! };
});

test.after(async () => {
  await t.close();
});

const one = async () => {
  const res = await t.request('GET', `/results/${ids.result}`);
  assert.is(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  return res.body;
};
const listed = async () => {
  const res = await t.request('GET', '/results', { query: { benchmark_id: ids.benchmark } });
  assert.is(res.status, 200, res.text);
  assert.is(res.body.items.length, 1);
  return res.body.items[0];
};

test('a result embeds its catalogue rows and its document as stored', async () => {
  for (const r of [await one(), await listed()]) {
    assert.is(r.id, ids.result);
    assert.is(r.execution_datetime, '2024-05-01T12:00:00.000');
    assert.is(r.benchmark.id, ids.benchmark);
    assert.equal(r.benchmark.json_schema, { type: 'object' });
    assert.is(r.site.name, 'site-a');
    assert.is(r.flavor.name, 'flavor-a');
    assert.equal(
      r.tags.map((x: { name: string }) => x.name),
      ['tag-b', 'tag-c'],
      'tags by name',
    );
    // biome-ignore lint/correctness/noPrecisionLoss: deliberate: an integer beyond 2^53 in the stored JSON, to check it comes back as JavaScript reads it
    assert.equal(r.json, { score: 1.5, nested: { big: 12345678901234567890 } });
    assert.is(r.hidden, false);
  }
  assert.ok(t.server.context.catalogue.embeds.size >= 5, 'the catalogue rows are remembered');
});

test('changes made behind the server show at once: every embedded kind', async () => {
  await one();
  await seed.sql('update benchmark set description = ? where id = ?', ['changed elsewhere', ids.benchmark]);
  await seed.sql('update site set name = ? where id = ?', ['site-renamed', ids.site]);
  await seed.sql('update flavor set name = ? where id = ?', ['flavor-renamed', ids.flavor]);
  await seed.sql('update tag set name = ? where id = ?', ['tag-d', ids.tag]);
  for (const r of [await one(), await listed()]) {
    assert.is(r.benchmark.description, 'changed elsewhere');
    assert.is(r.site.name, 'site-renamed');
    assert.is(r.flavor.name, 'flavor-renamed');
    assert.equal(
      r.tags.map((x: { name: string }) => x.name),
      ['tag-c', 'tag-d'],
      'renamed tag sorted anew',
    );
  }
});

test('a removed tag leaves the embedded list at once', async () => {
  await seed.sql('delete from result_tag where result_id = ? and tag_id = ?', [ids.result, ids.other]);
  assert.equal(
    (await one()).tags.map((x: { id: string }) => x.id),
    [ids.tag],
  );
});

test('catalogue lists share the cache: a change behind the server shows at once; a page past the end keeps the total', async () => {
  const list = async (path: string, query: Record<string, string | number> = {}) => {
    const res = await t.request('GET', path, { query });
    assert.is(res.status, 200, res.text);
    return res.body;
  };
  const before = await list('/benchmarks');
  assert.ok(before.items.some((b: { id: string }) => b.id === ids.benchmark));
  await seed.sql('update benchmark set description = ? where id = ?', ['listed elsewhere', ids.benchmark]);
  const after = await list('/benchmarks');
  assert.is(after.items.find((b: { id: string }) => b.id === ids.benchmark).description, 'listed elsewhere');
  assert.is(after.total, before.total);
  const flavors = await list(`/sites/${ids.site}/flavors`);
  assert.equal(
    flavors.items.map((f: { id: string }) => f.id),
    [ids.flavor],
  );
  assert.is(flavors.total, 1);
  const past = await list('/tags', { page: 50, per_page: 1 });
  assert.equal(past.items, []);
  assert.is(past.total, 2);
  assert.is(past.pages, 2);
  const none = await list('/tags', { name: 'no-such-tag' });
  assert.equal([none.items, none.total, none.pages], [[], 0, 0]);
});

test.run();
