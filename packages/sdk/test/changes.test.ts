/** client.results.changes / changesCsv / changesSvg against a real server. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, ValidationError, where, type Client } from '../src/index.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let admin: Client;
let anonymous: Client;
let benchmark_id: string;

/** 24 days of a flavor whose run time rises from about 10 s to about 12 s on day 12 (lower is better). */
const SECONDS = Array.from({ length: 24 }, (_, i) => (i < 12 ? 10 : 12) + ((i * 7) % 5) / 50);

test.before(async () => {
  t = await startTestServer('sdk_changes');
  admin = createClient({ baseUrl: t.url, token: await t.admin('changes-admin') });
  anonymous = createClient({ baseUrl: t.url });
  const schema = { type: 'object', properties: { seconds: { type: 'number', 'x-better': 'lower' }, cores: { type: 'integer' } } };
  benchmark_id = (await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/changes', container_tag: '1', json_schema: schema }))
    .id;
  const site = await admin.sites.create({ name: 'Changes site', address: 'x' });
  const flavor = (await admin.flavors.create(site.id, { name: 'steady' })).id;
  const day = (i: number) => new Date(Date.UTC(2025, 2, 1 + i, 10)).toISOString();
  await admin.results.createMany(
    SECONDS.map((seconds, i) => ({ benchmark_id, flavor_id: flavor, execution_datetime: day(i), json: { seconds, cores: 8 } })),
  );
});
test.after(async () => {
  await Promise.all([admin, anonymous].map((c) => c.close()));
  await t.close();
});

test('results.changes: typed groups and change points; lower is better from x-better, so slower is a regression', async () => {
  const answer = await anonymous.results.changes({ benchmark_id, metric: 'json.seconds', filters: [where('cores').gte(8)] });
  assert.is(answer.better, 'lower');
  const [group] = answer.groups;
  assert.equal(
    group!.changes.map((c) => [c.index, c.at.slice(0, 10), c.direction, c.before.n, c.after.n]),
    [[12, '2025-03-13', 'regression', 12, 12]],
  );
  assert.ok(group!.changes[0]!.magnitude! > 0.19 && group!.changes[0]!.magnitude! < 0.21);
});

test('results.changesCsv and changesSvg: the text of each format', async () => {
  const csv = await anonymous.results.changesCsv({ benchmark_id, metric: 'json.seconds' });
  assert.ok(csv.startsWith('site_name,flavor_name,at,result_id,index,'), csv);
  assert.is(csv.split('\r\n')[1]!.split(',').slice(0, 2).join(','), 'Changes site,steady');
  assert.match(csv.split('\r\n')[1]!, /,12,.*,regression$/);
  const svg = await anonymous.results.changesSvg({ benchmark_id, metric: 'json.seconds' });
  assert.ok(svg.startsWith('<svg'), svg.slice(0, 40));
  assert.match(svg, 'ghcr.io/sdk-test/changes:1: json.seconds over time (lower is better)');
  assert.match(svg, '<g class="change regression">');
});

test('results.changes: ValidationError naming the parameter', async () => {
  const bad = await rejects(() => anonymous.results.changes({ benchmark_id, metric: 'json.seconds', min_size: 1 }), ValidationError);
  assert.is(bad.code, 'INVALID_QUERY');
  assert.match(bad.message, 'min_size');
});

test.run();
