/**
 * The explorer (/explore) in Debian's Chromium through playwright-core, on seeded data with hostile
 * names: each view's numbers equal the API's answer (written as the explorer writes numbers, format.ts),
 * a changed control updates the URL, the chart and the table and back restores them, a permalink renders
 * the same in a fresh context, no console error, no request to another origin, the policy on every page,
 * and axe-core finds no serious or critical violation. Plus what the server sends: the page, the files
 * and their size.
 */
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EXPLORER_CSP } from '../src/http/explorer.ts';
import { fmt, fmtInterval, fmtP } from '../explorer/format.ts';
import { launchChromium } from './support/browser.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';

const HOSTILE_FLAVOR = '<img src=x onerror=alert(1)>';
const HOSTILE_TAG = '"><script>';
const AXE = fileURLToPath(new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url));

let t: TestServer;
let browser: Browser;
let bench: { id: string };
let empty: { id: string };
let flavors: { id: string; name: string }[];
let resultId: string;
let hiddenId: string;
const SCHEMA = {
  type: 'object',
  properties: {
    machine: { type: 'object', properties: { cpu: { type: 'object', properties: { count: { type: 'integer', suggestToUser: true } } } } },
    result: { type: 'object', properties: { score: { type: 'number', 'x-better': 'higher', suggestToUser: true } } },
  },
};

test.before(async () => {
  t = await startTestServer({}, 'explorer');
  const seed = await createSeeder(t);
  bench = await seed.benchmark({ schema: SCHEMA });
  empty = await seed.benchmark({ schema: SCHEMA });
  const site = await seed.site({ name: 'Site A' });
  const other = await seed.site({ name: 'Site B' });
  flavors = [
    await seed.flavor(site.id, { name: HOSTILE_FLAVOR }),
    await seed.flavor(site.id, { name: 'small' }),
    await seed.flavor(other.id, { name: 'large' }),
  ];
  const prices = [0.4, 0.1, 0.2];
  for (const [i, f] of flavors.entries())
    await seed.sql('update flavor set price_per_hour = ?, currency = ? where id = ?', [prices[i], 'EUR', f.id]);
  const tag = await seed.tag({ name: HOSTILE_TAG });
  const rows = flavors.flatMap((f, fi) =>
    Array.from({ length: 12 }, (_, i) => ({
      benchmark_id: bench.id,
      flavor_id: f.id,
      site_id: fi === 2 ? other.id : site.id,
      // The hostile flavor steps up half-way: a change point.
      json: { machine: { cpu: { count: 2 + 2 * fi } }, result: { score: 100 * (fi + 1) + (i % 4) + (fi === 0 && i >= 6 ? 50 : 0) } },
      execution_datetime: new Date(Date.UTC(2026, 0, 1 + i, fi)),
      tags: [tag.id],
    })),
  );
  [resultId] = await seed.results(rows);
  [hiddenId] = await seed.results([{ ...rows[0]!, hidden: true, json: { result: { score: 1 } } }]);
  browser = await launchChromium();
});
test.after(async () => {
  await browser?.close();
  await t?.close();
});

interface Opened {
  page: Page;
  context: BrowserContext;
  /** Asserts no console error, no page error, no dialog, no request to another origin; closes the context. */
  done(): Promise<void>;
}

async function open(path: string, options: { width?: number; allow?: RegExp } = {}): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && !options.allow?.test(m.text()) && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => problems.push(`dialog: ${d.message()}`));
  page.on('request', (r) => !r.url().startsWith(`${t.url}/`) && !r.url().startsWith('data:') && problems.push(`request to ${r.url()}`));
  page.on('response', (r) => {
    if (r.request().resourceType() === 'document' && r.headers()['content-security-policy'] !== EXPLORER_CSP)
      problems.push(`no policy on ${r.url()}`);
  });
  const res = await page.goto(`${t.url}${path}`);
  assert.is(res?.status(), 200);
  assert.is(res?.headers()['content-security-policy'], EXPLORER_CSP);
  return {
    page,
    context,
    done: async () => {
      await context.close();
      assert.equal(problems, []);
    },
  };
}

async function api(path: string, query: Record<string, string | string[]>) {
  const res = await t.request('GET', path, { query });
  assert.is(res.status, 200, res.text);
  return res.body;
}

/**
 * axe-core on the view at the page's address: no serious or critical violation. The explorer's policy
 * refuses every inline script, axe's too, so the scan runs in a context of its own that ignores the
 * policy (playwright's bypassCSP); every other check runs under it.
 */
async function axe(at: Page, ready: string) {
  const context = await browser.newContext({ bypassCSP: true, viewport: at.viewportSize() ?? undefined });
  const page = await context.newPage();
  await page.goto(at.url());
  await page.locator(ready).first().waitFor();
  const view = new URL(at.url()).pathname;
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const result = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id}: ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  });
  await context.close();
  assert.equal(violations, [], `axe on ${view}`);
}

const cells = (page: Page, table: string, field: string) => page.locator(`${table} td[data-field="${field}"]`).allTextContents();
const rankQuery = () => ({ benchmark_id: bench.id, metric: 'json.result.score' });
const rankPath = (extra = '') => `/explore/rank?benchmark_id=${bench.id}&metric=json.result.score${extra}`;

test('GET /explore: the page under its policy, its two files, and within 120 KB gzipped', async () => {
  for (const path of ['/explore', '/explore/', '/explore/rank?x=1', `/explore/results/${resultId}`]) {
    const res = await fetch(`${t.url}${path}`);
    assert.is(res.status, 200, path);
    assert.is(res.headers.get('content-security-policy'), EXPLORER_CSP);
    const html = await res.text();
    assert.match(html, '<script type="module" src="/explore/assets/explorer.js">');
    assert.not.match(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
  }
  let gzipped = 0;
  for (const [file, type] of [
    ['explorer.js', 'application/javascript'],
    ['explorer.css', 'text/css'],
  ]) {
    const res = await fetch(`${t.url}/explore/assets/${file}`);
    assert.is(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', type);
    gzipped += gzipSync(Buffer.from(await res.arrayBuffer()), { level: 9 }).length;
  }
  assert.ok(gzipped <= 120 * 1024, `JavaScript and CSS: ${gzipped} bytes gzipped`);
  const missing = await fetch(`${t.url}/explore/assets/nothing.js`);
  assert.is(missing.status, 404);
  await missing.text();
  const spec = await api('/api-spec.json', {});
  assert.match(spec.info.description, '/explore');
});

test('Swagger UI at / links to the explorer, and the explorer links back', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${t.url}/`);
  // Swagger UI opens the description's links in a new tab.
  await page.locator('.info a[href="/explore"]').waitFor();
  await page.goto(`${t.url}/explore`);
  await page.getByRole('link', { name: 'API (Swagger UI)' }).waitFor();
  assert.is(await page.getByRole('link', { name: 'API (Swagger UI)' }).getAttribute('href'), '/');
  await context.close();
});

test('Benchmarks: each benchmark with its result count, flavors and links; search terms in the URL', async () => {
  const o = await open('/explore');
  const { page } = o;
  const card = page.locator('.card').filter({ has: page.locator(`a[href*="${bench.id}"]`) });
  await card.first().waitFor();
  const listed = await api('/results', { benchmark_id: bench.id, per_page: '1' });
  assert.is(await card.locator('[data-field="total"]').textContent(), fmt(listed.total));
  assert.match((await card.textContent()) ?? '', HOSTILE_FLAVOR);
  await axe(page, '.card');
  const name = (await api(`/benchmarks/${bench.id}`, {})).container_image.split('/').pop();
  await page.getByLabel('Search terms').fill(name);
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/terms=/);
  await page.locator('.card').first().waitFor();
  assert.is(await page.locator('.card').count(), 1);
  await page.goBack();
  await page.waitForFunction(() => document.querySelectorAll('.card').length === 2);
  await o.done();
});

test('Rank: the numbers of GET /results:compare, the flavor name as text; a control changes URL, chart and table, back restores', async () => {
  const o = await open(rankPath());
  const { page } = o;
  await page.locator('#rank-table tbody tr').first().waitFor();
  const c = await api('/results:compare', rankQuery());
  assert.equal(
    await cells(page, '#rank-table', 'median'),
    c.groups.map((g: any) => fmt(g.median)),
  );
  assert.equal(
    await cells(page, '#rank-table', 'median_ci'),
    c.groups.map((g: any) => fmtInterval(g.median_ci)),
  );
  assert.equal(
    await cells(page, '#rank-table', 'n'),
    c.groups.map((g: any) => fmt(g.n)),
  );
  assert.equal(
    await cells(page, '#rank-table', 'per_price'),
    c.groups.map((g: any) => `${fmt(g.per_price.median)} ${fmtInterval(g.per_price.median_ci)}`),
  );
  assert.equal(
    await cells(page, '#rank-table', 'rank'),
    c.groups.map((g: any) => `${g.rank}`),
  );
  assert.match((await page.locator('h1 + p, main > p').allTextContents()).join(' '), 'Higher is better');
  // The hostile name is a row header's text and a chart label's; no image was made of it.
  assert.ok((await page.locator('#rank-table th[scope=row]').allTextContents()).some((x) => x.endsWith(HOSTILE_FLAVOR)));
  assert.ok((await page.locator('svg text.label').allTextContents()).some((x) => x.includes(HOSTILE_FLAVOR)));
  assert.is(await page.locator('img').count(), 0);
  // The Pareto front: the cheapest is on it; the hostile flavor (0.4 EUR, 200–253) is beaten by large (0.2 EUR, 300+).
  const pareto = await cells(page, '#rank-table', 'pareto');
  assert.equal(
    pareto,
    c.groups.map((g: any) => (g.flavor.name === HOSTILE_FLAVOR ? 'dominated' : '◆ on the front')),
  );
  await axe(page, '#rank-table');
  const csv = await page.getByRole('link', { name: 'CSV' }).getAttribute('href');
  assert.is(csv, `/api/v1/results:compare?benchmark_id=${bench.id}&metric=json.result.score&format=csv`);

  // Group by site: URL, chart and table follow; back restores.
  await page.getByLabel('Group by').selectOption('site');
  await page.waitForURL(/group_by=site/);
  await page.waitForFunction(() => document.querySelectorAll('#rank-table tbody tr').length === 2);
  const bySite = await api('/results:compare', { ...rankQuery(), group_by: 'site' });
  assert.equal(
    await cells(page, '#rank-table', 'median'),
    bySite.groups.map((g: any) => fmt(g.median)),
  );
  assert.is(await page.locator('svg text.label').count(), 2);
  await page.goBack();
  await page.waitForFunction(() => document.querySelectorAll('#rank-table tbody tr').length === 3);
  assert.not.match(page.url(), 'group_by');
  assert.equal(
    await cells(page, '#rank-table', 'median'),
    c.groups.map((g: any) => fmt(g.median)),
  );

  // A filter built from the schema (an integer input).
  await page.getByLabel('Path').fill('json.machine.cpu.count');
  await page.getByLabel('Operator').selectOption('>=');
  await page.getByLabel('Value (integer)').fill('4');
  await page.getByRole('button', { name: 'Add filter' }).click();
  await page.waitForURL(/filters=/);
  await page.waitForFunction(() => document.querySelectorAll('#rank-table tbody tr').length === 2);
  const filtered = await api('/results:compare', { ...rankQuery(), filters: 'json.machine.cpu.count >= 4' });
  assert.equal(
    await cells(page, '#rank-table', 'median'),
    filtered.groups.map((g: any) => fmt(g.median)),
  );
  await page.goBack();
  await page.waitForFunction(() => document.querySelectorAll('#rank-table tbody tr').length === 3);
  await o.done();
});

test('Rank against a baseline: each ratio with its interval; the permalink renders the same in a fresh context', async () => {
  const o = await open(rankPath());
  await o.page.locator('#rank-table tbody tr').first().waitFor();
  await o.page.getByLabel('Baseline').selectOption(flavors[1]!.id);
  await o.page.waitForURL(/baseline=/);
  await o.page.locator('td[data-field="ratio"]').first().waitFor();
  const c = await api('/results:compare', { ...rankQuery(), baseline: flavors[1]!.id });
  const expected = c.groups.map((g: any) =>
    g.vs_baseline === null ? 'baseline' : `${fmt(g.vs_baseline.ratio)}× ${fmtInterval(g.vs_baseline.ratio_ci)}`,
  );
  assert.equal(await cells(o.page, '#rank-table', 'ratio'), expected);
  const table = await o.page.locator('#rank-table').textContent();
  const permalink = o.page.url();
  await o.done();
  const fresh = await open(permalink.slice(t.url.length));
  await fresh.page.locator('td[data-field="ratio"]').first().waitFor();
  assert.is(await fresh.page.locator('#rank-table').textContent(), table);
  await fresh.done();
});

test('Series: the change points and segments of GET /results:changes, a point under the pointer and the keys', async () => {
  const o = await open(`/explore/series?benchmark_id=${bench.id}&metric=json.result.score`);
  const { page } = o;
  await page.locator('section.group').first().waitFor();
  const ch = await api('/results:changes', rankQuery());
  assert.is(await page.locator('section.group').count(), ch.groups.length);
  await page.waitForFunction((n) => document.querySelectorAll('.chart canvas').length === n, ch.groups.length);
  const changes = ch.groups.flatMap((g: any) => g.changes);
  assert.ok(changes.length >= 1, 'the seeded step is found');
  assert.equal(
    await cells(page, 'table.changes', 'before'),
    changes.map((c: any) => fmt(c.before.mean)),
  );
  assert.equal(
    await cells(page, 'table.changes', 'after'),
    changes.map((c: any) => fmt(c.after.mean)),
  );
  assert.equal(
    await cells(page, 'table.changes', 'pvalue'),
    changes.map((c: any) => fmtP(c.pvalue)),
  );
  assert.equal(
    await page.locator('table.changes .regression, table.changes .improvement').allTextContents(),
    changes.map((c: any) => (c.direction === 'regression' ? '▼ regression' : '▲ improvement')),
  );
  const segments = ch.groups.flatMap((g: any) => g.segments);
  assert.equal(
    await cells(page, 'table.segments', 'mean'),
    segments.map((s: any) => fmt(s.mean)),
  );
  assert.ok((await page.locator('section.group h2').allTextContents()).some((x) => x.includes(HOSTILE_FLAVOR)));
  // Keyboard: the chart takes the focus, the arrow keys walk its points.
  const chart = page.locator('.chart').first();
  await chart.focus();
  await page.keyboard.press('Home');
  const pointer = page.locator('.pointer').first();
  await pointer.locator('a').waitFor();
  assert.match((await pointer.textContent()) ?? '', /2026-01-01 00:00/);
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => /2026-01-02/.test(document.querySelector('.pointer')?.textContent ?? ''));
  // The mouse: a point under the pointer shows its result, a click opens it.
  const box = (await page.locator('.chart .u-over').first().boundingBox())!;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForURL(/\/explore\/results\/[0-9a-f-]{36}$/);
  await page.locator('pre.json').waitFor();
  await page.goBack();
  await page.locator('section.group').first().waitFor();
  await axe(page, 'section.group');
  // One flavor, as the alerts' links open it.
  await page.goto(`${t.url}/explore/series?benchmark_id=${bench.id}&metric=json.result.score&flavor_id=${flavors[0]!.id}`);
  await page.waitForFunction(() => document.querySelectorAll('section.group').length === 1);
  await o.done();
});

test('Results: the page of GET /results, chosen columns, a sort by header, more rows by the cursor, the tag as text', async () => {
  const o = await open(`/explore/results?benchmark_id=${bench.id}&per_page=10`);
  const { page } = o;
  await page.locator('#results-table tbody tr').first().waitFor();
  const first = await api('/results', { benchmark_id: bench.id, per_page: '10' });
  assert.is(await page.locator('#results-table tbody tr').count(), 10);
  assert.equal(
    await page.locator('td[data-path="json.result.score"]').allTextContents(),
    first.items.map((r: any) => String(r.json.result.score)),
  );
  assert.ok((await page.locator('#results-table tbody td').allTextContents()).includes(HOSTILE_TAG));
  await axe(page, '#results-table');
  // Sort by the score, descending: the URL and the table follow.
  await page.getByRole('button', { name: /^result\.score/ }).click();
  await page.waitForURL(/sort_by=%2Bjson.result.score/);
  await page.getByRole('button', { name: /^result\.score/ }).click();
  await page.waitForURL(/sort_by=-json.result.score/);
  const sorted = await api('/results', { benchmark_id: bench.id, per_page: '10', sort_by: '-json.result.score' });
  await page.waitForFunction(
    (top) => document.querySelector('td[data-path="json.result.score"]')?.textContent === top,
    String(sorted.items[0].json.result.score),
  );
  assert.equal(
    await page.locator('td[data-path="json.result.score"]').allTextContents(),
    sorted.items.map((r: any) => String(r.json.result.score)),
  );
  // More rows: the next page by its cursor.
  await page.getByRole('button', { name: 'Show more results' }).click();
  await page.waitForFunction(() => document.querySelectorAll('#results-table tbody tr').length === 20);
  const next = await api('/results', { benchmark_id: bench.id, per_page: '10', sort_by: '-json.result.score', cursor: sorted.next_cursor });
  assert.equal(
    (await page.locator('td[data-path="json.result.score"]').allTextContents()).slice(10),
    next.items.map((r: any) => String(r.json.result.score)),
  );
  // A column less: the URL names the columns.
  await page.locator('details.columns summary').click();
  await page.getByLabel('json.machine.cpu.count').uncheck();
  await page.waitForURL(/columns=json.result.score/);
  assert.is(await page.locator('td[data-path="json.machine.cpu.count"]').count(), 0);
  const exported = await page.getByRole('link', { name: 'Export this query as CSV' }).getAttribute('href');
  assert.match(exported!, 'columns=json.result.score');
  const csv = await fetch(`${t.url}${exported}`);
  assert.is(csv.status, 200);
  assert.match(await csv.text(), /^id,execution_datetime,site_name,flavor_name,tags,json.result.score\r?\n/);
  await page.goBack();
  await page.waitForFunction(() => document.querySelectorAll('td[data-path="json.machine.cpu.count"]').length > 0);
  // A path the schema does not describe: the server's warning, and its suggestion one click away.
  await page.goto(`${t.url}/explore/results?benchmark_id=${bench.id}&filters=${encodeURIComponent('machine.cpu.cont >= 4')}`);
  await page.getByRole('button', { name: 'Use json.machine.cpu.count' }).click();
  await page.waitForURL(/filters=json.machine.cpu.count%20%3E%3D%204/);
  await o.done();
});

test('Result: every field, the tag as text, the JSON document; a hidden or unknown result is a sentence', async () => {
  const o = await open(`/explore/results/${resultId}`, { width: 375 });
  const { page } = o;
  await page.locator('pre.json').waitFor();
  const r = await api(`/results/${resultId}`, {});
  assert.is(await page.locator('pre.json').textContent(), JSON.stringify(r.json, null, 2));
  assert.equal(await page.locator('.facts .chips li').allTextContents(), [HOSTILE_TAG]);
  assert.match((await page.locator('.facts').textContent()) ?? '', HOSTILE_FLAVOR);
  assert.is(await page.locator('script').count(), 1, 'only the explorer’s own script');
  await axe(page, 'pre.json');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 375, `fits 375 px (${width})`);
  await page.goto(`${t.url}/explore/results/${hiddenId}`);
  await page.getByText('This result is hidden').waitFor();
  assert.is(await page.locator('pre.json').count(), 0);
  await o.done();
  // The browser reports the API's 404 on the console: that one is expected.
  const missing = await open('/explore/results/00000000-0000-4000-8000-000000000000', { allow: /status of 404/ });
  await missing.page.getByRole('alert').waitFor();
  assert.match((await missing.page.getByRole('alert').textContent()) ?? '', 'Could not load the result');
  await missing.page.getByRole('button', { name: 'Retry' }).click();
  await missing.page.getByRole('alert').waitFor();
  await missing.done();
});

test('An empty benchmark: a sentence, not a blank page; copy-as gives the exact call', async () => {
  const o = await open(`/explore/rank?benchmark_id=${empty.id}&metric=json.result.score`);
  const { page } = o;
  await page.getByText('No result has a number at json.result.score').waitFor();
  await page.locator('details.copy summary').click();
  const curl = await page.locator('pre[data-kind="curl"]').textContent();
  assert.is(curl, `curl '${t.url}/api/v1/results:compare?benchmark_id=${empty.id}&metric=json.result.score'`);
  assert.is(
    await page.locator('pre[data-kind="sdk"]').textContent(),
    `const client = createClient({ baseUrl: '${t.url}' });\nawait client.results.compare({"benchmark_id":"${empty.id}","metric":"json.result.score"});`,
  );
  assert.is(
    await page.locator('pre[data-kind="cli"]').textContent(),
    `benchmarks compare --benchmark ${empty.id} --metric json.result.score --server ${t.url} -o json`,
  );
  await axe(page, 'text=No result has a number');
  await page.goto(`${t.url}/explore/results?benchmark_id=${empty.id}`);
  await page.getByText('No result matches this query.').waitFor();
  await o.done();
});

test('At 375 px wide every view fits: nothing wider than the screen but what scrolls inside its region', async () => {
  const q = `benchmark_id=${bench.id}&metric=json.result.score`;
  for (const [path, ready] of [
    ['/explore', '.card'],
    [`/explore/rank?${q}&baseline=${flavors[1]!.id}`, '#rank-table'],
    [`/explore/series?${q}`, 'section.group:nth-of-type(3) .chart canvas'],
    [`/explore/results?benchmark_id=${bench.id}`, '#results-table'],
  ]) {
    const o = await open(path!, { width: 375 });
    await o.page.locator(ready!).first().waitFor();
    await o.page.locator('details.copy summary').click();
    const width = await o.page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 375, `${path} is ${width} px wide`);
    await o.done();
  }
});

test.run();
