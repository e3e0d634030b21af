/**
 * Runs a script in a real browser: Debian's Chromium, headless, driven by playwright-core (never a
 * downloaded browser). The script is served with a blank page from a loopback server, so that the
 * page has an http origin and its requests to the API are cross-origin, as a web app's would be.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchChromium } from '../../packages/server/test/support/browser.ts';

/** A loopback server answering `/` with a page that loads `/app.js`; its origin is known before use. */
export async function servePage(script: () => string): Promise<{ origin: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.url === '/app.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script());
    } else {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<!doctype html><title>sdk</title><script type="module" src="/app.js"></script>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Opens `origin` in Chromium, waits for the page's script to set `window.result` (or
 * `window.failure`), and returns it with every console error the page logged.
 */
export async function runPage(origin: string, timeoutMs = 30_000): Promise<{ result: unknown; errors: string[] }> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(origin, { timeout: timeoutMs });
    await page.waitForFunction(() => 'result' in window || 'failure' in window, undefined, { timeout: timeoutMs });
    const failure = await page.evaluate(() => (window as unknown as { failure?: string }).failure);
    if (failure) throw new Error(`the page failed: ${failure}\n${errors.join('\n')}`);
    return { result: await page.evaluate(() => (window as unknown as { result: unknown }).result), errors };
  } finally {
    await browser.close();
  }
}
