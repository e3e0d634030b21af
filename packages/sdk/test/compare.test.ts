/** client.results.compare / compareCsv / compareSvg against a real server, and flavor prices through the SDK. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createClient, NotFoundError, ValidationError, where, type Client } from '../src/index.ts';
import { renderCompareSvg } from '../src/chart.ts';
import { startTestServer, type TestServer } from './support/server.ts';
import { rejects } from './support/assert.ts';

let t: TestServer;
let admin: Client;
let anonymous: Client;
let benchmark_id: string;
let fast: string;
let slow: string;

test.before(async () => {
  t = await startTestServer('sdk_compare');
  admin = createClient({ baseUrl: t.url, token: await t.admin('cmp-admin') });
  anonymous = createClient({ baseUrl: t.url });
  const schema = { type: 'object', properties: { seconds: { type: 'number', 'x-better': 'lower' }, cores: { type: 'integer' } } };
  benchmark_id = (await admin.benchmarks.create({ container_image: 'ghcr.io/sdk-test/compare', container_tag: '1', json_schema: schema }))
    .id;
  const site = await admin.sites.create({ name: 'Compare site', address: 'x' });
  fast = (await admin.flavors.create(site.id, { name: 'fast', price_per_hour: 0.5, currency: 'EUR' })).id;
  slow = (await admin.flavors.create(site.id, { name: 'slow' })).id;
  const items = [1, 2, 3, 4, 5, 6].flatMap((i) => [
    { benchmark_id, flavor_id: fast, execution_datetime: `2025-03-0${i}T10:00:00Z`, json: { seconds: 10 + i, cores: 8 } },
    { benchmark_id, flavor_id: slow, execution_datetime: `2025-03-0${i}T10:00:00Z`, json: { seconds: 100 + i, cores: 4 } },
  ]);
  await admin.results.createMany(items);
});
test.after(async () => {
  await Promise.all([admin, anonymous].map((c) => c.close()));
  await t.close();
});

test('flavors: price_per_hour and currency through the SDK, null when unset', async () => {
  const f = await anonymous.flavors.get(fast);
  assert.equal([f.price_per_hour, f.currency], [0.5, 'EUR']);
  const g = await anonymous.flavors.get(slow);
  assert.equal([g.price_per_hour, g.currency], [null, null]);
});

test('results.compare: typed groups, lower is better from x-better, filters from where()', async () => {
  const answer = await anonymous.results.compare({ benchmark_id, metric: 'json.seconds' });
  assert.is(answer.better, 'lower');
  assert.equal(
    answer.groups.map((g) => [g.flavor?.name, g.rank, g.n, g.median]),
    [
      ['fast', 1, 6, 13.5],
      ['slow', 2, 6, 103.5],
    ],
  );
  assert.equal(answer.groups[0]!.per_price, { median: 6.75, median_ci: [5.5, 8] }); // n = 6: [x(1), x(6)] × 0.5
  const filtered = await anonymous.results.compare({
    benchmark_id,
    metric: 'json.seconds',
    filters: [where('cores').gte(8)],
    better: 'higher',
  });
  assert.equal(
    filtered.groups.map((g) => g.flavor?.name),
    ['fast'],
  );
  assert.is(filtered.better, 'higher');
});

test('results.compareCsv and compareSvg: the text of each format', async () => {
  const csv = await anonymous.results.compareCsv({ benchmark_id, metric: 'json.seconds', group_by: 'site' });
  assert.is(typeof csv, 'string');
  assert.ok(csv.startsWith('site_name,flavor_name,n,'), csv);
  assert.is(csv.split('\r\n')[1]!.split(',').slice(0, 3).join(','), 'Compare site,,12');
  const svg = await anonymous.results.compareSvg({ benchmark_id, metric: 'json.seconds' });
  assert.ok(svg.startsWith('<svg'), svg.slice(0, 40));
  assert.match(svg, 'ghcr.io/sdk-test/compare:1: json.seconds (lower is better)');
  // The server draws with the SDK's renderer: a client draws the same chart from the JSON answer.
  const answer = await anonymous.results.compare({ benchmark_id, metric: 'json.seconds' });
  assert.is(renderCompareSvg(answer, 'ghcr.io/sdk-test/compare:1'), svg);
});

test('results.compare: ValidationError for a malformed metric, NotFoundError for an unknown benchmark', async () => {
  const bad = await rejects(() => anonymous.results.compare({ benchmark_id, metric: 'seconds' }), ValidationError);
  assert.is(bad.code, 'INVALID_METRIC');
  await rejects(
    () => anonymous.results.compare({ benchmark_id: '00000000-0000-4000-8000-000000000000', metric: 'json.seconds' }),
    NotFoundError,
  );
});

test('results.compare with baseline: a typed vs_baseline; compareCsv and compareSvg carry it; 422 when not a group', async () => {
  const answer = await anonymous.results.compare({ benchmark_id, metric: 'json.seconds', baseline: slow });
  assert.is(answer.baseline, slow);
  const [first, second] = answer.groups;
  assert.is(second!.flavor?.id, slow);
  assert.is(second!.vs_baseline, null);
  // Every difference ln xᵢ − ln yⱼ of fast (11..16) against slow (101..106), sorted: the median's exp.
  const d = [11, 12, 13, 14, 15, 16]
    .flatMap((x) => [101, 102, 103, 104, 105, 106].map((y) => Math.log(x) - Math.log(y)))
    .sort((a, b) => a - b);
  const vs = first!.vs_baseline!;
  assert.ok(Math.abs(vs.ratio - Math.exp((d[17]! + d[18]!) / 2)) < 1e-12, String(vs.ratio));
  // k = ⌊18 − 1.96·√(36·13/12)⌋ = 5: the 5th and the 32nd differences.
  assert.equal(vs.ratio_ci, [Math.exp(d[4]!), Math.exp(d[31]!)]);
  // Every fast value below every slow one: U = 0, σ² = 36·13/12, z = 17.5/√39.
  assert.ok(Math.abs(vs.pvalue - 0.00512) < 1e-4, String(vs.pvalue));
  const csv = await anonymous.results.compareCsv({ benchmark_id, metric: 'json.seconds', baseline: slow });
  assert.ok(csv.split('\r\n')[0]!.endsWith(',ratio,ratio_ci_low,ratio_ci_high,ratio_pvalue'));
  const svg = await anonymous.results.compareSvg({ benchmark_id, metric: 'json.seconds', baseline: slow });
  assert.is(svg, renderCompareSvg(answer, 'ghcr.io/sdk-test/compare:1'));
  assert.match(svg, /<g class="row baseline"/);
  const missing = await rejects(
    () => anonymous.results.compare({ benchmark_id, metric: 'json.seconds', baseline: benchmark_id }),
    ValidationError,
  );
  assert.match(missing.message, /is not among the groups/);
});

test.run();
