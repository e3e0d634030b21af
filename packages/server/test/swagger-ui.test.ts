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

test.run();
