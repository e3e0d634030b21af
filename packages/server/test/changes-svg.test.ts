/**
 * The SVG of GET /results:changes (the SDK's renderer, packages/sdk/src/changes-chart.ts): headers,
 * escaping, no script, and a render in a real browser (Chromium through playwright-core): one panel
 * per group in answer order, the points drawn, one mark per change point, regressions and
 * improvements told apart by shape (a triangle pointing down or up) as well as colour.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { launchChromium } from './support/browser.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';

let t: TestServer;
let benchmarkId: string;

const wave = (i: number) => ((i * 37) % 11) / 10;
const SCORES: Record<string, number[]> = {
  // drops at 20, rises back at 45
  down: Array.from({ length: 70 }, (_, i) => (i < 20 || i >= 45 ? 100 : 80) + wave(i)),
  up: Array.from({ length: 40 }, (_, i) => (i < 25 ? 50 : 60) + wave(i)),
  flat: Array.from({ length: 30 }, (_, i) => 7 + wave(i)),
};

test.before(async () => {
  t = await startTestServer({}, 'changes_svg');
  const seed = await createSeeder(t);
  benchmarkId = (await seed.benchmark({ image: 'ghcr.io/acme/c-ray', tag: '1.2' })).id;
  const site = await seed.site({ name: '<script>alert(1)</script> & "Co"' });
  for (const [name, scores] of Object.entries(SCORES)) {
    const flavor = await seed.flavor(site.id, { name });
    await seed.results(
      scores.map((score, i) => ({
        benchmark_id: benchmarkId,
        flavor_id: flavor.id,
        site_id: flavor.site_id,
        json: { score },
        execution_datetime: new Date(Date.UTC(2025, 0, 1) + i * 6 * 3_600_000),
      })),
    );
  }
});
test.after(async () => {
  await t?.close();
});

const path = () => `/results:changes?benchmark_id=${benchmarkId}&metric=json.score&format=svg`;

test('GET /results:changes?format=svg: image/svg+xml, cached a minute, escaped names, no script', async () => {
  const res = await t.request('GET', path());
  assert.is(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^image\/svg\+xml/);
  assert.is(res.headers.get('cache-control'), 'public, max-age=60');
  assert.not.match(res.text, /<script|NaN|Infinity/i);
  assert.match(res.text, '&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;Co&quot; / down (70 points, 2 changes)');
  assert.match(res.text, 'ghcr.io/acme/c-ray:1.2: json.score over time (higher is better)');
  const accepted = await t.request('GET', '/results:changes', {
    query: { benchmark_id: benchmarkId, metric: 'json.score' },
    headers: { accept: 'image/svg+xml' },
  });
  assert.is(accepted.text, res.text);
});

test('GET /results:changes?format=svg in Chromium: panels in answer order, points, segment means, marks by direction', async () => {
  const json = (await t.request('GET', '/results:changes', { query: { benchmark_id: benchmarkId, metric: 'json.score' } })).body;
  assert.equal(
    json.groups.map((g: any) => [g.flavor.name, g.changes.map((c: any) => c.direction)]),
    [
      ['down', ['regression', 'improvement']],
      ['flat', []],
      ['up', ['improvement']],
    ],
  );
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('dialog', (d) => {
      errors.push(`dialog: ${d.message()}`);
      void d.dismiss();
    });
    const res = await page.goto(`${t.api}${path()}`, { timeout: 30_000 });
    assert.is(res?.status(), 200);
    const shown = await page.evaluate(() => {
      const root = document.documentElement;
      const panels = [...document.querySelectorAll('g.panel')].map((panel) => ({
        label: panel.querySelector('text')!.textContent,
        points: panel.querySelectorAll('.point').length,
        segments: panel.querySelectorAll('line.segment').length,
        changes: [...panel.querySelectorAll('g.change')].map((g) => {
          const polygon = g.querySelector('polygon')!;
          const ys = [...polygon.points].map((p) => p.y);
          const box = (g as SVGGraphicsElement).getBBox();
          // The apex is the one point off the base: below it (pointing down) or above it (pointing up).
          const apexBelow = ys[2]! > ys[0]!;
          return { kind: g.getAttribute('class'), colour: polygon.getAttribute('fill'), apexBelow, height: box.height };
        }),
      }));
      return { root: root.localName, parseErrors: document.getElementsByTagName('parsererror').length, panels };
    });
    assert.equal({ root: shown.root, parseErrors: shown.parseErrors }, { root: 'svg', parseErrors: 0 });
    assert.equal(
      shown.panels.map((p) => p.label),
      [
        '<script>alert(1)</script> & "Co" / down (70 points, 2 changes)',
        '<script>alert(1)</script> & "Co" / flat (30 points, 0 changes)',
        '<script>alert(1)</script> & "Co" / up (40 points, 1 change)',
      ],
    );
    assert.equal(
      shown.panels.map((p) => [p.points, p.segments]),
      [
        [70, 3],
        [30, 1],
        [40, 2],
      ],
    );
    const marks = shown.panels.flatMap((p) => p.changes);
    assert.equal(
      marks.map((m) => [m.kind, m.apexBelow]),
      [
        ['change regression', true],
        ['change improvement', false],
        ['change improvement', false],
      ],
    );
    assert.not.equal(marks[0]!.colour, marks[1]!.colour);
    for (const m of marks) assert.ok(m.height > 50, `a change is a line across the panel: ${JSON.stringify(m)}`);
    assert.equal(errors, []);
  } finally {
    await browser.close();
  }
});

test.run();
