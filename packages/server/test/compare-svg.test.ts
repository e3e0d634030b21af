/**
 * The SVG chart of GET /results:compare (the SDK's renderer, packages/sdk/src/chart.ts): headers, escaping, no script,
 * and a render in a real browser (Debian's Chromium through playwright-core), whose XML parser
 * refuses a document that is not well-formed: the rows appear in the answer's order.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { launchChromium } from './support/browser.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';
import { along, renderCompareSvg, tickLabel, ticks, xmlEscape } from '@benchmarks/sdk/chart';

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
  assert.equal(ticks(0.11, 0.19), { values: [0.12, 0.14, 0.16, 0.18], decimals: 2 });
  const { values } = ticks(-1234, 98765);
  assert.ok(values[0]! >= -1234 && values.at(-1)! <= 98765 && values.length >= 3 && values.length <= 12, String(values));
});

test('chart: ticks end and labels hold at the limits of doubles (±1.8e308, one float step apart, subnormals, 1e-200)', () => {
  const MAX = Number.MAX_VALUE;
  // One float step (16) apart at 1e17: adding a step of 5 no longer changed the value, and the loop never ended.
  assert.equal(ticks(1e17, 1e17 + 16).values, [1e17]);
  assert.equal(ticks(-MAX, MAX).values, [-1e308, 0, 1e308]);
  assert.equal(ticks(5e-324, 1e-323).values, [5e-324, 1e-323]);
  const small = ticks(1e-200, 3e-200);
  assert.equal(small.values, [1e-200, 1.5e-200, 2e-200, 2.5e-200, 3e-200]);
  // toFixed(201) throws: the labels take the exponent form.
  assert.equal(
    small.values.map((v) => tickLabel(v, small.decimals)),
    ['1e-200', '1.5e-200', '2e-200', '2.5e-200', '3e-200'],
  );
  assert.is(tickLabel(0.5, 2), '0.50');
  assert.is(tickLabel(-1e308, 0), '-1e+308');
  assert.equal([along(-MAX, MAX)(0), along(-MAX, MAX)(MAX), along(0, 10)(2.5)], [0.5, 1, 0.25]);
  const group = (name: string, lo: number, hi: number) => ({
    site: { id: '5d0c9a7e-2f41-4b8e-8c3a-7e9b1f2d6a40', name: 'S' },
    flavor: { id: '9e2a7c14-6b3d-4f0e-a1c8-2d5f7b9e3a61', name },
    n: 2,
    mean: lo / 2 + hi / 2,
    stddev: null,
    min: lo,
    p5: lo,
    p25: lo,
    median: lo / 2 + hi / 2,
    p75: hi,
    p95: hi,
    max: hi,
    median_ci: [lo, hi] as [number, number],
    mean_ci: null,
    rank: 1,
    price: null,
    per_price: null,
    out_of_range: ['stddev' as const, 'mean_ci' as const],
  });
  const answer = (groups: ReturnType<typeof group>[]) => ({
    benchmark_id: '0b6f3c52-8d1e-4f7a-9a51-3c2e1d0f4b7a',
    metric: 'json.score',
    group_by: 'flavor' as const,
    better: 'higher' as const,
    confidence: 0.95,
    rank_by: 'metric' as const,
    matched: 2,
    excluded: 0,
    groups,
  });
  for (const groups of [
    [group('limits', -MAX, MAX)],
    [group('max', MAX, MAX)],
    [group('steps', 1e17, 1e17 + 16)],
    [group('tiny', 5e-324, 5e-324)],
  ]) {
    const svg = renderCompareSvg(answer(groups), 'b:1');
    assert.not.match(svg, /NaN|Infinity/, groups[0]!.flavor.name);
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
