/**
 * The SVG chart of GET /results:compare (the SDK's renderer, packages/sdk/src/chart.ts): headers, escaping, no script,
 * and a render in a real browser (Debian's Chromium through playwright-core), whose XML parser
 * refuses a document that is not well-formed: the rows appear in the answer's order.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { launchChromium } from './support/browser.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder, upload } from './support/seed.ts';
import { ticks, xmlEscape } from '@benchmarks/sdk/chart';

let t: TestServer;
let benchmarkId: string;
let benchmarkName: string;

test.before(async () => {
  t = await startTestServer({}, 'compare_svg');
  const seed = await createSeeder(t);
  const benchmark = await seed.benchmark({ image: 'ghcr.io/acme/c-ray', tag: '1.2' });
  benchmarkId = benchmark.id;
  benchmarkName = 'ghcr.io/acme/c-ray:1.2';
  const site = await seed.site({ name: '<script>alert(1)</script> & "Co"' });
  const other = await seed.site({ name: 'Plain site' });
  const fast = await seed.flavor(site.id, { name: "fast'one" });
  const slow = await seed.flavor(other.id, { name: 'slow' });
  const few = await seed.flavor(other.id, { name: 'few' });
  const rows = (flavor: { id: string; site_id: string }, scores: number[]) =>
    scores.map((score, i) => ({
      benchmark_id: benchmarkId,
      flavor_id: flavor.id,
      site_id: flavor.site_id,
      json: { score },
      execution_datetime: new Date(Date.UTC(2024, 0, 1 + i)),
    }));
  await seed.results([...rows(fast, [90, 92, 94, 96, 98, 100, 102]), ...rows(slow, [10, 11, 12, 13, 14, 15]), ...rows(few, [200])]);
});
test.after(async () => {
  await t?.close();
});

const svg = (query: Record<string, string> = {}, headers?: Record<string, string>) =>
  t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score', format: 'svg', ...query }, headers });

test('GET /results:compare?format=svg: image/svg+xml, cached a minute, escaped names, no script', async () => {
  const res = await svg();
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^image\/svg\+xml/);
  assert.is(res.headers.get('cache-control'), 'public, max-age=60');
  assert.ok(res.text.startsWith('<svg xmlns="http://www.w3.org/2000/svg"'));
  assert.not.match(res.text, /<script/i);
  assert.match(res.text, '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot; / fast&apos;one (7)');
  assert.match(res.text, `${benchmarkName}: json.score (higher is better)`);
  // Also chosen by Accept.
  const accepted = await t.request('GET', '/results:compare', {
    query: { benchmark_id: benchmarkId, metric: 'json.score' },
    headers: { accept: 'image/svg+xml' },
  });
  assert.match(accepted.headers.get('content-type')!, 'image/svg+xml');
  assert.is(accepted.text, res.text);
});

test('chart: escaping drops what XML cannot hold; ticks are round and cover the range', () => {
  assert.is(xmlEscape('a\u0000b\u0007c<&>"\''), 'abc&lt;&amp;&gt;&quot;&apos;');
  assert.is(xmlEscape('\uD800x'), 'x');
  assert.equal(ticks(0, 10).values, [0, 2, 4, 6, 8, 10]);
  assert.equal(ticks(0.11, 0.19), { values: [0.12, 0.14, 0.16, 0.18], labels: ['0.12', '0.14', '0.16', '0.18'] });
  const { values } = ticks(-1234, 98765);
  assert.ok(values[0]! >= -1234 && values.at(-1)! <= 98765 && values.length >= 3 && values.length <= 12, String(values));
});

test('GET /results:compare?format=svg: two results one float step apart (1815.85 and 1815.8500000000001, 2^53 and 2^53 + 2), tiny or huge answer 200 with a chart', async () => {
  // Drawing these once looped forever (the tick step did not move the tick) until the server ran out of memory.
  const seed = await createSeeder(t);
  const benchmark = await seed.benchmark();
  const site = await seed.site({ name: 'Near' });
  const [a, b] = [await seed.flavor(site.id, { name: 'a' }), await seed.flavor(site.id, { name: 'b' })];
  const uploader = await t.user('near-equal-uploader');
  for (const [flavor, json] of [
    [a, { score: 1815.85, big: 2 ** 53, tiny: 1e-300, huge: -1e308 }],
    [b, { score: 1815.8500000000001, big: 2 ** 53 + 2, tiny: 2e-300, huge: 1e308 }],
  ] as const) {
    assert.is((await upload(t, uploader, { benchmark_id: benchmark.id, flavor_id: flavor.id }, json)).status, 201);
  }
  const charts = [
    { metric: 'json.score', medians: [1815.8500000000001, 1815.85], ticks: ['1700', '1800', '1900', '2000'] },
    { metric: 'json.big', medians: [2 ** 53 + 2, 2 ** 53], ticks: ['8.5e+15', '9e+15', '9.5e+15'] },
    // Before, a 500 (toFixed asked for 301 decimals) and NaN coordinates (the range overflowed to Infinity).
    { metric: 'json.tiny', medians: [2e-300, 1e-300], ticks: ['1e-300', '1.2e-300', '1.4e-300', '1.6e-300', '1.8e-300', '2e-300'] },
    { metric: 'json.huge', medians: [1e308, -1e308], ticks: ['-1e+308', '-5e+307', '0', '5e+307', '1e+308'] },
  ];
  for (const { metric, medians, ticks } of charts) {
    const query = { benchmark_id: benchmark.id, metric };
    const json = await t.request('GET', '/results:compare', { query });
    assert.equal(
      json.body.groups.map((g: { median: number }) => g.median),
      medians,
      'the values reach the chart unrounded',
    );
    const res = await t.request('GET', '/results:compare', { query: { ...query, format: 'svg' } });
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type')!, /^image\/svg\+xml/);
    assert.ok(res.text.startsWith('<svg xmlns="http://www.w3.org/2000/svg"') && res.text.endsWith('</svg>\n'));
    assert.not.match(res.text, /NaN|Infinity/);
    assert.is(res.text.match(/<g class="row"/g)?.length, 2);
    const labels = [...res.text.matchAll(/text-anchor="middle" fill="#333333">([^<]*)<\/text>/g)].map((m) => m[1]);
    assert.equal(labels, [...ticks, metric]);
  }
});

test('GET /results:compare?format=svg in Chromium: well-formed, rendered, rows in the answer order', async () => {
  const json = (
    await t.request('GET', '/results:compare', { query: { benchmark_id: benchmarkId, metric: 'json.score', min_samples: '3' } })
  ).body;
  const expected = json.groups.map((g: any) => `${g.rank === null ? '–' : `#${g.rank}`} ${g.site.name} / ${g.flavor.name} (${g.n})`);
  assert.equal(expected, ['#1 <script>alert(1)</script> & "Co" / fast\'one (7)', '#2 Plain site / slow (6)', '– Plain site / few (1)']);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => {
      errors.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    const res = await page.goto(`${t.api}/results:compare?benchmark_id=${benchmarkId}&metric=json.score&min_samples=3&format=svg`, {
      timeout: 30_000,
    });
    assert.is(res?.status(), 200);
    const shown = await page.evaluate(() => {
      const root = document.documentElement;
      const rows = [...document.querySelectorAll('g.row')].map((g) => {
        const box = (g as SVGGraphicsElement).getBBox();
        return { label: g.querySelector('text')!.textContent, width: box.width, height: box.height };
      });
      return { root: root.localName, namespace: root.namespaceURI, parseErrors: document.getElementsByTagName('parsererror').length, rows };
    });
    assert.equal(
      { root: shown.root, namespace: shown.namespace, parseErrors: shown.parseErrors },
      { root: 'svg', namespace: 'http://www.w3.org/2000/svg', parseErrors: 0 },
    );
    assert.equal(
      shown.rows.map((r) => r.label),
      expected,
    );
    for (const row of shown.rows) assert.ok(row.width > 50 && row.height > 10, `row drawn: ${JSON.stringify(row)}`);
    assert.equal(errors, []);
  } finally {
    await browser.close();
  }
});

test.run();
