/**
 * The Swagger UI page (koa2-swagger-ui, src/http/swagger.ts) in a real browser: Debian's Chromium
 * through playwright-core. Under the page's strict policy (its inline script allowed by hash, style
 * sheets from the server only) it renders every operation of the contract, requests nothing outside
 * the server (the template's web-font style sheet is stopped by the policy), and logs no error but
 * that refusal.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { operations } from '@benchmarks/sdk/contract';
import { launchChromium } from './support/browser.ts';
import { startTestServer, type TestServer } from './support/harness.ts';
import { createSeeder } from './support/seed.ts';

let t: TestServer;

test.before(async () => {
  t = await startTestServer({}, 'swagger');
});
test.after(async () => {
  await t?.close();
});

test('GET / in Chromium: every operation rendered under the policy, nothing loaded from elsewhere', async () => {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    const requested: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    const failed = new Map<string, string>();
    page.on('request', (r) => requested.push(r.url()));
    page.on('requestfailed', (r) => failed.set(r.url(), r.failure()?.errorText ?? ''));
    const res = await page.goto(`${t.url}/`, { timeout: 30_000 });
    assert.is(res?.status(), 200);
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    assert.is(await page.title(), 'Benchmark Results API');
    assert.is(await page.locator('.opblock').count(), Object.keys(operations).length, 'one block per operation');
    assert.is(await page.locator('.topbar').count(), 0, 'the top bar is hidden');
    assert.ok(
      requested.some((url) => url.endsWith('/api/v1/api-spec.json')),
      'the document was read',
    );
    for (const url of requested) {
      // Chromium reports the request the policy stopped before it left (failed with 'csp').
      if (!url.startsWith(`${t.url}/`)) assert.is(failed.get(url), 'csp', `${url}: only the server is asked`);
    }
    assert.ok(
      requested.some((url) => url.startsWith('https://fonts.googleapis.com/')),
      'the template still links web fonts (else simplify this test)',
    );
    const refused = errors.filter((e) => /fonts\.googleapis\.com/.test(e));
    assert.ok(
      refused.length >= 1 && refused.every((e) => /Content Security Policy/i.test(e)),
      `the web fonts are refused by the policy: ${errors.join('\n')}`,
    );
    assert.equal(
      errors.filter((e) => !refused.includes(e)),
      [],
      'no other error (the inline script ran)',
    );
  } finally {
    await browser.close();
  }
});

test('Swagger UI tries GET /results:compare and GET /results:export: Execute answers 200 (the comparison shown, the export offered as a file)', async () => {
  const seed = await createSeeder(t);
  const benchmark = await seed.benchmark({ schema: { type: 'object', properties: { result: { type: 'object' } } } });
  const site = await seed.site();
  const flavor = await seed.flavor(site.id);
  await seed.results(
    [100, 101, 102, 103, 104, 105].map((score, i) => ({
      benchmark_id: benchmark.id,
      flavor_id: flavor.id,
      site_id: site.id,
      json: { result: { score } },
      execution_datetime: new Date(Date.UTC(2024, 0, 1 + i)),
    })),
  );
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(`${t.url}/`, { timeout: 30_000 });
    const tryOut = async (operationId: string, values: Record<string, string>) => {
      const block = page.locator(`#operations-results-${operationId}`);
      await block.locator('.opblock-summary').click();
      // tryItOutEnabled: the form opens editable (its button reads "Cancel").
      await block.locator('.execute').waitFor({ timeout: 30_000 });
      for (const [name, value] of Object.entries(values)) {
        await block.locator(`tr[data-param-name="${name}"] input`).first().fill(value);
      }
      await block.locator('.execute').click();
      const row = block.locator('.live-responses-table tbody tr.response').first();
      await row.waitFor({ timeout: 30_000 });
      return {
        status: (await row.locator('.response-col_status').textContent())?.trim(),
        body: (await row.locator('.microlight').first().textContent()) ?? '',
        text: (await row.textContent()) ?? '',
      };
    };
    const compare = await tryOut('compareResults', { benchmark_id: benchmark.id, metric: 'json.result.score' });
    assert.is(compare.status, '200', compare.body);
    assert.match(compare.body, '"median": 102.5');
    const exported = await tryOut('exportResults', { benchmark_id: benchmark.id });
    assert.is(exported.status, '200', exported.body);
    // An attachment: Swagger UI offers the file (results.ndjson) for download.
    assert.match(exported.text, 'attachment; filename="results.ndjson"');
    assert.match(exported.text, 'Download file');
  } finally {
    await browser.close();
  }
});

test.run();
